/**
 * Every rule is chosen in policy (docs/architecture.md, "The ladder"): a node, a view or the
 * middleware applies a decision a policy function or the table gave it, and never names a rule
 * id itself. The scan reads string literals with TypeScript's parser, so comments and prose
 * that mention a rule do not count, and a template literal without substitutions does.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { RULE_IDS } from "../../src/policy/ladder/rules.js";

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** `file: rule` for every string literal outside src/policy that is a rule id of the table. */
function ruleIdSites(root: string): string[] {
  const ids: ReadonlySet<string> = new Set(RULE_IDS);
  const sites: string[] = [];
  for (const file of sources(root)) {
    if (file.startsWith(join(root, "policy") + "/")) continue;
    const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node): void => {
      if ((ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) && ids.has(node.text))
        sites.push(`${file.split("\\").join("/")}: ${node.text}`);
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return sites.sort();
}

describe("rule ids outside policy", () => {
  it("no node, view or middleware file names a rule id: policy chooses every rule", () => {
    expect(ruleIdSites("src")).toEqual([]);
  });

  it("the scan finds a rule id in a string literal and a plain template, not in a comment", () => {
    const dir = join("test", "fixtures", "rule-sites");
    expect(ruleIdSites(dir)).toEqual([`${dir}/node.ts: human.skip`, `${dir}/node.ts: rate.limit`]);
  });
});

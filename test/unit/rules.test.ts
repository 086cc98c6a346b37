import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RULES, isRuleId } from "../../src/policy/rules.js";
import { EVIDENCE_RULES } from "../../src/policy/evidence-rules.js";

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

describe("the rule table", () => {
  it("lists every rule id a decision can carry, and no evidence id doubles as one", () => {
    const quoted = new Set<string>();
    const families =
      "transient|deterministic|exhausted|unmet|assumption|precondition|scope|budget|unknown|guard|replan|human|optional|llm|rate";
    for (const file of sources("src")) {
      if (file.endsWith("evidence-rules.ts")) continue;
      for (const m of readFileSync(file, "utf8").matchAll(new RegExp(`"((?:${families})\\.[a-z0-9-]+)"`, "g")))
        quoted.add(m[1]!);
    }
    const unknown = [...quoted].filter((id) => !isRuleId(id) && !EVIDENCE_RULES.some((r) => r.id === id));
    expect(unknown).toEqual([]);
    expect(Object.keys(RULES)).toHaveLength(39);
  });
});

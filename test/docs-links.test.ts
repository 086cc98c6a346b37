/**
 * Every relative link of README.md and the docs resolves: to a file of the repository that the
 * package ships (package.json "files", so the link works from the npm page too), and an anchor to a
 * heading of that file. Links to the sources, tests and examples are absolute, to the repository.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, posix } from "node:path";
import { describe, expect, it } from "vitest";
import { docFiles, readDoc, root } from "./docs-markdown.js";

/**
 * Guides written on other branches at the same time: a link to one is accepted while the file is
 * absent, and checked like any other once it is there.
 */
const WRITTEN_ELSEWHERE = new Set(["docs/guides/mcp-sampling.md", "docs/guides/mcp-elicitation.md"]);

/** The anchors GitHub gives a document's headings: lower case, punctuation dropped, spaces as `-`, repeats numbered. */
export function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  const counts = new Map<string, number>();
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    const heading = fenced ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (heading) {
      const base = heading[1]!
        .toLowerCase()
        .replace(/[^\p{L}\p{N}\s_-]/gu, "")
        .replace(/\s/g, "-");
      const seen = counts.get(base) ?? 0;
      counts.set(base, seen + 1);
      found.add(seen === 0 ? base : `${base}-${seen}`);
    }
    for (const [, id] of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) found.add(id!);
  }
  return found;
}

/** The link targets of a document outside code (fences and code spans), each with its line. */
export function linkTargets(markdown: string): { line: number; target: string }[] {
  const targets: { line: number; target: string }[] = [];
  let fenced = false;
  markdown.split("\n").forEach((raw, index) => {
    if (/^\s*(```|~~~)/.test(raw)) fenced = !fenced;
    if (fenced) return;
    const prose = raw.replace(/<!--.*?-->/g, "").replace(/`[^`]*`/g, "code");
    const found = [
      ...[...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]!),
      ...[...prose.matchAll(/^\s*\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/g)].map((m) => m[1]!),
      ...[...prose.matchAll(/\b(?:href|src)\s*=\s*"([^"]+)"/g)].map((m) => m[1]!),
    ];
    for (const target of found) targets.push({ line: index + 1, target });
  });
  return targets;
}

/** Whether package.json "files" ships a repository path. */
function shipped(path: string, files: string[]): boolean {
  return ["package.json", ...files].some((entry) => path === entry || path.startsWith(`${entry}/`));
}

/** What is wrong with one relative link of `file`, or undefined when it resolves. */
function problem(file: string, target: string, files: string[]): string | undefined {
  const [pathPart, anchor] = target.split("#") as [string, string | undefined];
  const path = pathPart === "" ? file : posix.normalize(posix.join(posix.dirname(file), decodeURIComponent(pathPart)));
  if (path.startsWith("../") || path.startsWith("/")) return "outside the repository";
  const absolute = join(root, path);
  if (!existsSync(absolute)) return WRITTEN_ELSEWHERE.has(path) ? undefined : "no such file";
  if (!shipped(path.replace(/\/$/, ""), files)) return "a file the package does not ship: link it absolutely";
  if (anchor === undefined) return undefined;
  if (statSync(absolute).isDirectory() || !path.endsWith(".md")) return "an anchor into a file that is not Markdown";
  return anchors(readFileSync(absolute, "utf8")).has(anchor) ? undefined : `no heading #${anchor}`;
}

/** The Markdown files checked: README, the guides, the architecture page and the decision records. */
function checkedFiles(): string[] {
  const decisions = readdirSync(join(root, "docs", "decisions"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/decisions/${name}`);
  return [...docFiles(), "docs/architecture.md", ...decisions];
}

describe("documentation links", () => {
  const files = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { files: string[] }).files;

  it("resolves every relative link and anchor of README.md and docs/ to a shipped file and heading", () => {
    const broken: string[] = [];
    let checked = 0;
    for (const file of checkedFiles()) {
      for (const { line, target } of linkTargets(readDoc(file))) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target) || target.startsWith("//")) continue;
        checked++;
        const wrong = problem(file, target, files);
        if (wrong !== undefined) broken.push(`${file}:${line}: ${target} (${wrong})`);
      }
    }
    expect(broken).toEqual([]);
    expect(checked).toBeGreaterThan(20);
  });

  it("links every guide from README.md, so the map of the guides misses none", () => {
    const readme = readDoc("README.md");
    const linked = new Set(linkTargets(readme).map(({ target }) => target.split("#")[0]));
    const unlinked = docFiles()
      .filter((file) => file.startsWith("docs/guides/") && !linked.has(file))
      .filter((file) => !WRITTEN_ELSEWHERE.has(file));
    expect(unlinked).toEqual([]);
  });

  it("reads anchors as GitHub makes them", () => {
    const made = anchors(
      "# Inside createAgent\n### Testing offline: `ScriptedChatModel`\n## Two\n## Two\n```\n# not\n```",
    );
    expect([...made]).toEqual(["inside-createagent", "testing-offline-scriptedchatmodel", "two", "two-1"]);
  });
});

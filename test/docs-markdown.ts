/**
 * The documentation the tests read: README.md and the guides under docs/guides/, and the ```ts
 * blocks in them. A block that continues the text around it says so just above it with
 * `<!-- fragment: … -->` holding the declarations it assumes; a complete example says what it prints
 * with `<!-- prints: ["line", …] -->`. Both comments are hidden on GitHub and npm.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";

export const root = resolve(import.meta.dirname, "..");

/** README.md and every guide, as paths relative to the repository. */
export function docFiles(): string[] {
  const guides = readdirSync(join(root, "docs", "guides"))
    .filter((name) => name.endsWith(".md"))
    .sort()
    .map((name) => `docs/guides/${name}`);
  return ["README.md", ...guides];
}

export function readDoc(file: string): string {
  return readFileSync(join(root, file), "utf8");
}

/** A ```ts block: where its code starts, the code, and what the comment above it says. */
export interface TsBlock {
  file: string;
  /** The 1-based line of the block's first line of code. */
  line: number;
  code: string;
  /** For a fragment: the names it uses from the text around it, declared. */
  assumes: string;
  /** For a complete example: the lines it prints, in order. */
  prints: string[] | undefined;
}

/** The comment ending on the line above `index`, or undefined when that line ends no comment. */
function commentAbove(lines: string[], index: number): { text: string; line: number } | undefined {
  if (!lines[index - 1]?.trimEnd().endsWith("-->")) return undefined;
  let start = index - 1;
  while (start > 0 && !lines[start]!.includes("<!--")) start--;
  return { text: lines.slice(start, index).join("\n").trim(), line: start + 1 };
}

/** Every ```ts block of a document, indented ones (inside a list) included. */
export function tsBlocks(file: string, text: string): TsBlock[] {
  const lines = text.split("\n");
  const blocks: TsBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)```ts$/.exec(lines[i]!);
    if (open === null) continue;
    const indent = open[1]!;
    const end = lines.findIndex((l, k) => k > i && l === `${indent}\`\`\``);
    if (end < 0) throw new Error(`${file}:${i + 1}: a \`\`\`ts block is never closed`);
    const code = lines
      .slice(i + 1, end)
      .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l))
      .join("\n");
    const block: TsBlock = { file, line: i + 2, code, assumes: "", prints: undefined };
    const comment = commentAbove(lines, i);
    if (comment !== undefined) {
      const fragment = /^<!-- fragment:([\s\S]*)-->$/.exec(comment.text);
      const prints = /^<!-- prints:([\s\S]*)-->$/.exec(comment.text);
      if (fragment) block.assumes = fragment[1]!.trim();
      else if (prints) block.prints = JSON.parse(prints[1]!) as string[];
      else throw new Error(`${file}:${comment.line}: the comment above a ts block is neither fragment: nor prints:`);
    }
    blocks.push(block);
    i = end;
  }
  return blocks;
}

/** Every ```ts block of README.md and the guides. */
export function allTsBlocks(): TsBlock[] {
  return docFiles().flatMap((file) => tsBlocks(file, readDoc(file)));
}

/** A block's code with the package's imports pointed at the sources, as a user's project resolves the package. */
export function withSourceImports(code: string): string {
  return code.replace(/from "langgraph-replan(\/[a-z]+)?"/g, (_, subpath: string | undefined) => {
    const folder = subpath === undefined ? "" : subpath === "/agent" ? "/middleware" : subpath;
    return `from ${JSON.stringify(join(root, `src${folder}/index.ts`))}`;
  });
}

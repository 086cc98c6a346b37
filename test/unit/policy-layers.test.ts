/**
 * The folders of src/policy are layers of their own (docs/architecture.md "Layers";
 * docs/decisions/0046-policy-folders-in-one-order.md): the options at the bottom, the ladder on
 * them, the replan on top. A policy module imports its own folder and the folders listed for it,
 * nothing above, so no two folders need each other. Type-only imports count too.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const BELOW: Record<string, readonly string[]> = {
  options: [],
  ladder: ["options"],
  trust: ["options", "ladder"],
  quality: ["options", "ladder"],
  memory: ["options", "ladder"],
  attempt: ["options", "ladder", "trust"],
  capability: ["options", "ladder", "trust", "attempt"],
  compensation: ["options", "ladder", "trust", "attempt"],
  replan: ["options", "ladder", "trust", "quality", "memory", "attempt", "capability", "compensation"],
  index: ["options", "ladder", "trust", "quality", "memory", "attempt", "capability", "compensation", "replan"],
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** The policy folder (or root file) a path is in; undefined outside src/policy. */
const folderOf = (path: string): string | undefined => {
  const rel = relative("src/policy", path);
  if (rel.startsWith("..")) return undefined;
  return rel.split("/")[0]!.replace(/\.(ts|js)$/, "");
};

describe("policy folders", () => {
  it("every folder of src/policy has its place in the order", () => {
    const folders = readdirSync("src/policy").map((name) => name.replace(/\.ts$/, ""));
    expect(folders.filter((f) => !(f in BELOW))).toEqual([]);
  });

  it("every import inside src/policy points to the same folder or one below it", () => {
    const wrong: string[] = [];
    for (const file of sources("src/policy")) {
      const from = folderOf(file)!;
      for (const m of readFileSync(file, "utf8").matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)) {
        const to = folderOf(normalize(join(dirname(file), m[1]!)));
        if (to !== undefined && to !== from && !BELOW[from]!.includes(to)) wrong.push(`${file} → ${to}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("src/policy reads no package but zod and node:crypto: LangChain's errors are read by their fields", () => {
    const packages = new Set<string>();
    for (const file of sources("src/policy"))
      for (const m of readFileSync(file, "utf8").matchAll(/from\s+"([^".][^"]*)"/g)) packages.add(m[1]!);
    expect([...packages].sort()).toEqual(["node:crypto", "zod"]);
  });
});

/**
 * No import circles in src (docs/architecture.md "Layers"): two modules that need each other,
 * even through others, are one concept split badly. Type-only imports count too.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, it } from "vitest";

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** Strongly connected components of more than one module (Tarjan), each sorted. */
export function circles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) found.push(component.sort());
    }
  };
  for (const v of edges.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("import circles", () => {
  it("finds a circle through three modules, and none in a chain", () => {
    const ring = new Map([
      ["a", ["b"]],
      ["b", ["c"]],
      ["c", ["a"]],
      ["d", ["a"]],
    ]);
    expect(circles(ring)).toEqual([["a", "b", "c"]]);
    expect(
      circles(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", []],
        ]),
      ),
    ).toEqual([]);
  });

  it("no module of src imports itself back through others", () => {
    const edges = new Map<string, string[]>();
    for (const file of sources("src")) {
      const to: string[] = [];
      for (const m of readFileSync(file, "utf8").matchAll(/\bfrom\s+"(\.{1,2}\/[^"]+)"/g))
        to.push(normalize(join(dirname(file), m[1]!.replace(/\.js$/, ".ts"))));
      edges.set(normalize(file), to);
    }
    expect(edges.size).toBeGreaterThan(150);
    expect(circles(edges)).toEqual([]);
  });
});

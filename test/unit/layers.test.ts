/**
 * Imports go one way (issue [architecture]): errors and expressions at the bottom, then plans,
 * the pure policy, the contracts planners implement, the runtime (state, options, tool calls),
 * nodes, planners and views, and the graph on top. A module may import its own layer and the
 * layers listed for it, nothing above.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative } from "node:path";
import { describe, expect, it } from "vitest";

const BELOW: Record<string, readonly string[]> = {
  errors: [],
  expr: ["errors"],
  plan: ["errors", "expr"],
  policy: ["errors", "expr", "plan"],
  contracts: ["errors", "expr", "plan", "policy"],
  steps: ["errors", "expr", "plan", "policy", "contracts", "planners"],
  runtime: ["errors", "expr", "plan", "policy", "contracts", "steps"],
  nodes: ["errors", "expr", "plan", "policy", "contracts", "steps", "runtime"],
  otel: ["errors", "expr", "plan", "policy", "contracts"],
  planners: ["errors", "expr", "plan", "policy", "contracts", "otel"],
  views: ["errors", "expr", "plan", "policy", "runtime"],
  storage: ["errors", "plan", "contracts"],
  graph: ["errors", "expr", "plan", "policy", "contracts", "runtime", "nodes", "views", "storage", "otel"],
  middleware: ["errors", "expr", "plan", "policy", "contracts", "runtime", "views", "storage", "otel"],
  worker: ["errors", "plan", "contracts", "runtime", "graph", "storage"],
  threads: ["errors", "plan", "graph", "storage"],
  // The zero-configuration server composes a graph planned by the client's model: mcp builds with planners.
  mcp: ["errors", "plan", "policy", "runtime", "graph", "views", "worker", "storage", "planners"],
  cli: ["errors", "plan", "runtime", "graph", "views", "worker", "storage", "mcp"],
  testing: ["errors"],
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

const layerOf = (path: string) => {
  const [first] = relative("src", path).split("/");
  return first!.replace(/\.(ts|js)$/, "");
};

describe("layers", () => {
  it("every import in src points to the same layer or one below it", () => {
    const wrong: string[] = [];
    for (const file of sources("src")) {
      const from = layerOf(file);
      if (from === "index") continue;
      for (const m of readFileSync(file, "utf8").matchAll(/from\s+"(\.{1,2}\/[^"]+)"/g)) {
        const to = layerOf(normalize(join(dirname(file), m[1]!)));
        if (to !== from && !(BELOW[from] ?? []).includes(to)) wrong.push(`${file} → ${to}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it("only src/middleware imports langchain or deepagents: the root package loads without the optional peers", () => {
    const reaching: string[] = [];
    for (const file of sources("src")) {
      if (layerOf(file) === "middleware") continue;
      for (const m of readFileSync(file, "utf8").matchAll(/from\s+"([^"]+)"/g))
        if (/^(langchain|deepagents)(\/|$)/.test(m[1]!)) reaching.push(`${file} → ${m[1]}`);
    }
    expect(reaching).toEqual([]);
  });
});

/** What the package root offers a SQLite user, and what it must not load. */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import * as root from "../../src/index.js";
import * as stop from "../../src/worker/stop-run.js";

/** Every bare package a module reaches through its relative imports, with one file that imports it. */
function packagesReached(entry: string): Map<string, string> {
  const seen = new Set<string>();
  const packages = new Map<string, string>();
  const queue = [entry];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const [, spec] of readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)) {
      if (spec!.startsWith(".")) queue.push(join(dirname(file), spec!).replace(/\.js$/, ".ts"));
      else if (!packages.has(spec!)) packages.set(spec!, file);
    }
  }
  return packages;
}

describe("the package root", () => {
  it("exports requestStop and resumeStopped, the worker's own functions", () => {
    expect([root.requestStop, root.resumeStopped]).toEqual([stop.requestStop, stop.resumeStopped]);
  });

  it("reaches no PostgreSQL package, so a SQLite user can stop a thread from code", () => {
    const postgres = [...packagesReached("src/index.ts")].filter(([name]) =>
      /^(pg|pg-boss|@langchain\/langgraph-checkpoint-postgres)(\/|$)/.test(name),
    );
    expect(postgres).toEqual([]);
  });
});

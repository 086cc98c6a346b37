/**
 * The API reference (`npm run docs`, TypeDoc) is generated from doc comments: every name every
 * subpath of package.json "exports" publishes must have one, or its entry would be blank.
 */
import { describe, expect, it } from "vitest";
import { entryPoints, undocumentedExports } from "../scripts/undocumented-exports.js";

describe("API reference", () => {
  it("reads every subpath of package.json exports", () => {
    expect([...entryPoints().keys()].sort()).toEqual([
      "langgraph-replan",
      "langgraph-replan/agent",
      "langgraph-replan/mcp",
      "langgraph-replan/policy",
      "langgraph-replan/testing",
      "langgraph-replan/threads",
      "langgraph-replan/views",
      "langgraph-replan/worker",
    ]);
  });

  it("has a doc comment on every exported name of every subpath", () => {
    const { missing, counts } = undocumentedExports();
    expect(missing).toEqual([]);
    // A subpath that exported nothing would pass the check above without being read.
    expect([...counts].filter(([, count]) => count < 4)).toEqual([]);
  }, 120_000);
});

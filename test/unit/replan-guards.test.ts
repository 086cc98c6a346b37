import { describe, expect, it } from "vitest";
import {
  backtrackDepthGuard,
  backtracksGuard,
  deadlinePassed,
  failedReplan,
  noProgressGuard,
} from "../../src/policy/ladder/guards.js";

describe("replan guards (pure)", () => {
  it("bounds how far back a local replan reaches", () => {
    expect(backtrackDepthGuard(["a", "b"], { maxBacktrackDepth: 2 })).toBeUndefined();
    expect(backtrackDepthGuard(["a", "b", "c"], { maxBacktrackDepth: 2 })).toEqual({
      rule: "guard.max-backtrack-depth",
      reason: "the replan would re-validate 3 completed steps (a, b, c); policy.maxBacktrackDepth = 2",
    });
  });

  it("calls the same replacement for the same assumption no progress, unless a person asked", () => {
    expect(noProgressGuard("p1", "p0", [], "A", false)).toBeUndefined();
    expect(noProgressGuard("p1", "p0", ["p1"], "A", false)?.reason).toBe(
      'the planner proposed the same steps again for assumption "A"; that is not progress',
    );
    expect(noProgressGuard("p0", "p0", [], undefined, false)?.reason).toBe(
      "the planner proposed the same steps again for this trigger; that is not progress",
    );
    expect(noProgressGuard("p0", "p0", ["p0"], "A", true)).toBeUndefined();
  });

  it("bounds re-runs of one completed step", () => {
    expect(backtracksGuard(["a", "b"], { b: 1 }, { maxBacktracksPerStep: 2 })).toBeUndefined();
    expect(backtracksGuard(["a", "b"], { b: 2 }, { maxBacktracksPerStep: 2 })).toEqual({
      rule: "guard.max-backtracks",
      reason: 'step "b" was already re-run 2 times by backtracking (policy.maxBacktracksPerStep = 2)',
    });
  });

  it("names a failed replan by what failed", () => {
    expect(failedReplan("invalid_draft", "- bad")).toEqual({
      rule: "replan.invalid-draft",
      reason: "the replacement steps were rejected:\n- bad",
    });
    expect(failedReplan("planner_error", "boom")).toEqual({
      rule: "replan.planner-error",
      reason: "the planner failed to replan: boom",
    });
  });

  it("escalates a human answer that came after the deadline", () => {
    expect(deadlinePassed(1000, 1000, "h", 500)).toBeUndefined();
    expect(deadlinePassed(undefined, 9999, "h", undefined)).toBeUndefined();
    expect(deadlinePassed(1000, 1001, "h", 500)).toEqual({
      rule: "human.deadline-passed",
      reason: 'the answer to human step "h" came after its 500 ms deadline',
    });
  });
});

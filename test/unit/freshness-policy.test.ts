/**
 * The pure side of evidence freshness and assumption drift (docs/decisions/0041-evidence-freshness-and-drift.md):
 * the same input gives the same answer, with the clock handed in as a value.
 */
import { describe, expect, it } from "vitest";
import type { Plan } from "../../src/plan/schema/plan.js";
import type { Fact } from "../../src/plan/schema/run.js";
import type { Step } from "../../src/plan/schema/step.js";
import { awaitsRefresh, freshnessBounds, staleInputs } from "../../src/policy/attempt/freshness.js";
import { refreshWrites, staleAnswer } from "../../src/policy/ladder/stale.js";
import { dueWatches, judgeWatch, watchedAssumptions } from "../../src/policy/trust/watch.js";
import type { DeviationOf } from "../../src/policy/ladder/deviation.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const fact = (producedBy: string, ageAt: number, label: Fact["label"] = "trusted"): Fact => ({
  value: 1,
  label,
  producedBy,
  planVersion: 1,
  assumptions: [],
  derivedFrom: [],
  observedAt: new Date(T0 + ageAt).toISOString(),
});
const policy = { maxBacktrackDepth: 3, maxBacktracksPerStep: 2 };

describe("freshness, pure", () => {
  const step: Step = {
    id: "use",
    goal: "use",
    tool: "t",
    inputs: ["a", "b", "c"],
    freshFor: { a: 10 },
    inputsFreshForMs: 100,
  };

  it("bounds each input by its own freshFor, else inputsFreshForMs; an age equal to the bound is fresh", () => {
    expect(freshnessBounds(step)).toEqual([
      ["a", 10],
      ["b", 100],
      ["c", 100],
    ]);
    const facts = { a: fact("p", 0), b: fact("q", 0), c: { ...fact("r", 0), observedAt: undefined } };
    expect(staleInputs(step, facts, T0 + 10)).toEqual([]);
    expect(staleInputs(step, facts, T0 + 101)).toEqual([
      { key: "a", ageMs: 101, freshForMs: 10, producedBy: "p" },
      { key: "b", ageMs: 101, freshForMs: 100, producedBy: "q" },
    ]);
    // Same input, same answer.
    expect(staleInputs(step, facts, T0 + 101)).toEqual(staleInputs(step, facts, T0 + 101));
  });

  it("a step without bounds costs nothing and is never stale", () => {
    expect(staleInputs({ id: "x", goal: "x", tool: "t", inputs: ["a"] }, { a: fact("p", 0) }, T0 + 1e9)).toEqual([]);
  });

  it("waits for an untrusted input only while its producer, in the plan, is pending or running", () => {
    const suspect = { a: fact("p", 0, "suspect") };
    const wait = (status: "pending" | "running" | "failed", inPlan = true) =>
      awaitsRefresh(
        step,
        (k) => suspect[k as "a"],
        { p: { status, attempts: 1 } },
        () => inPlan,
      );
    expect([wait("pending"), wait("running"), wait("failed"), wait("pending", false)]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });

  const deviation = (producedBy: string): DeviationOf<"stale_evidence"> => ({
    kind: "stale_evidence",
    stepId: "use",
    attempt: 0,
    message: "old",
    stale: [{ key: "a", ageMs: 11, freshForMs: 10, producedBy }],
  });
  const plan: Plan = {
    version: 1,
    assumptions: [],
    steps: [
      { id: "p", goal: "p", tool: "t", produces: ["a"] },
      { id: "fx", goal: "fx", tool: "t", produces: ["a"], sideEffects: ["charges"], idempotent: false },
      step,
    ],
  };

  it("answers refresh, or escalates for a side-effecting producer, the run's input, or a spent backtrack bound", () => {
    expect(staleAnswer(deviation("p"), plan, {}, policy)).toEqual({
      rule: "evidence.stale",
      reason: 'old; "p" runs again first',
      producers: ["p"],
    });
    expect(staleAnswer(deviation("fx"), plan, {}, policy).rule).toBe("evidence.stale-escalate");
    expect(staleAnswer(deviation("input"), plan, {}, policy).rule).toBe("evidence.stale-escalate");
    expect(staleAnswer(deviation("p"), plan, { p: 2 }, policy).rule).toBe("guard.max-backtracks");
    expect(staleAnswer(deviation("p"), plan, {}, { ...policy, maxBacktrackDepth: 0 }).rule).toBe(
      "guard.max-backtrack-depth",
    );
  });

  it("a refresh makes the producer pending with a fresh round of attempts, the fact suspect, one backtrack more", () => {
    const writes = refreshWrites(
      deviation("p"),
      ["p"],
      { p: { status: "succeeded", attempts: 2, nextDelayMs: 5 } },
      { a: fact("p", 0) },
      { p: 1 },
    );
    expect(writes).toEqual({
      steps: { p: { status: "pending", attempts: 2, retryBase: 2 } },
      facts: { a: { ...fact("p", 0), label: "suspect" } },
      backtracks: { p: 2 },
    });
  });
});

describe("watches, pure", () => {
  const plan: Plan = {
    version: 1,
    steps: [],
    assumptions: [
      { id: "w", statement: "s", watch: { tool: "q", check: "output.v < 10", everyMs: 60 } },
      { id: "plain", statement: "s" },
    ],
  };
  const watched = watchedAssumptions(plan);
  const step: Step = { id: "s", goal: "s", tool: "t", assumptions: ["w", "plain"] };

  it("is due when never called, or everyMs or longer ago; not when falsified or already watched for this start", () => {
    const due = (last: number | undefined, now: number, falsified: string[] = [], seen: string[] = []) =>
      dueWatches(step, watched, falsified, new Map(last === undefined ? [] : [["w", last]]), new Set(seen), now).map(
        (a) => a.id,
      );
    expect(due(undefined, 0)).toEqual(["w"]);
    expect(due(0, 59)).toEqual([]);
    expect(due(0, 60)).toEqual(["w"]);
    expect(due(undefined, 0, ["w"])).toEqual([]);
    expect(due(undefined, 0, [], ["w"])).toEqual([]);
  });

  it("judges the watcher's output: held, drifted, or unreadable (never a drift)", () => {
    const w = watched.get("w")!;
    expect(judgeWatch(w, { v: 3 }, {})).toEqual({ held: true });
    expect(judgeWatch(w, { v: 30 }, {})).toEqual({ held: false });
    expect(judgeWatch(w, { other: 1 }, {})).toHaveProperty("unreadable");
    expect(judgeWatch(w, "not an object", {})).toHaveProperty("unreadable");
  });
});

import { describe, expect, it } from "vitest";
import {
  isRateLimit,
  lowerLimit,
  mayStart,
  nextQueued,
  raiseLimit,
  readinessOf,
  type DispatchStanding,
  type StartStanding,
} from "../../src/policy/attempt/may-start.js";
import type { Plan } from "../../src/plan/schema/plan.js";
import type { StepRun } from "../../src/plan/schema/run.js";
import type { Step } from "../../src/plan/schema/step.js";

const step = (id: string, extra: Partial<Step> = {}): Step => ({ id, goal: id, tool: "t", ...extra }) as Step;

/** The standing of `steps` with nothing run yet (or `runs`), and the dispatcher's calls, slots and limits. */
function ctx(steps: Step[], over: Partial<DispatchStanding> = {}, runs: Record<string, StepRun> = {}): StartStanding {
  const plan: Plan = { version: 1, steps, assumptions: [] } as Plan;
  return { ...readinessOf(plan, runs, {}, []), dispatch: { running: [], maxConcurrency: 4, toolLimits: {}, ...over } };
}

describe("mayStart: the dispatcher's clauses of the one start verdict", () => {
  it("refuses every start while something holds the run (start.held)", () => {
    const a = step("a");
    expect(mayStart(a, ctx([a], { hold: "a deviation waits for the classifier" }), "t")).toEqual({
      ok: false,
      rule: "start.held",
      reason: "a deviation waits for the classifier",
    });
  });

  it("starts a step while others run, up to maxConcurrency (start.no-slot)", () => {
    const [a, b, c] = [step("a"), step("b"), step("c")];
    const running = [{ stepId: "a", tool: "t" }];
    expect(mayStart(b, ctx([a, b, c], { running, maxConcurrency: 2 }), "t")).toEqual({ ok: true });
    const full = [...running, { stepId: "b", tool: "t" }];
    expect(mayStart(c, ctx([a, b, c], { running: full, maxConcurrency: 2 }), "t")).toEqual({
      ok: false,
      rule: "start.no-slot",
      reason: "2 of 2 slots in use",
    });
  });

  it("never overlaps steps sharing a sideEffects entry, and starts them in plan order (start.resource-busy)", () => {
    const p1 = step("p1", { sideEffects: ["payments"], dependsOn: ["slow"] });
    const p2 = step("p2", { sideEffects: ["payments", "mail"] });
    const slow = step("slow");
    const steps = [slow, p1, p2];
    // p1 is not ready yet, but comes first on "payments": p2 waits for it.
    expect(mayStart(p2, ctx(steps), "t")).toEqual({
      ok: false,
      rule: "start.resource-busy",
      reason: '"p1" comes first on payments',
    });
    const running: StepRun = { status: "running", attempts: 1 };
    const holding = ctx(steps, { running: [{ stepId: "p1", tool: "t" }] }, { p1: running });
    expect(mayStart(p2, holding, "t")).toEqual({
      ok: false,
      rule: "start.resource-busy",
      reason: '"p1" holds payments',
    });
    expect(mayStart(p2, ctx(steps, {}, { p1: { status: "succeeded", attempts: 1 } }), "t")).toEqual({ ok: true });
  });

  it("does not make a step wait for an earlier one that depends on it", () => {
    const first = step("first", { sideEffects: ["db"], dependsOn: ["mid"] });
    const mid = step("mid", { dependsOn: ["second"] });
    const second = step("second", { sideEffects: ["db"] });
    expect(mayStart(second, ctx([first, mid, second]), "t")).toEqual({ ok: true });
  });

  it("honours a tool's lowered limit (start.tool-limit)", () => {
    const [a, b] = [step("a"), step("b")];
    const c = ctx([a, b], { running: [{ stepId: "a", tool: "api" }], toolLimits: { api: 1 } });
    expect(mayStart(b, c, "api")).toEqual({
      ok: false,
      rule: "start.tool-limit",
      reason: "api is limited to 1 at a time",
    });
    expect(mayStart(b, c, "other")).toEqual({ ok: true });
  });
});

describe("AIMD tool limits", () => {
  it("halves on a rate limit (at least 1) and gives one back per success", () => {
    const down = lowerLimit({}, "api", 4, 4);
    expect(down).toEqual({
      limits: { api: 2 },
      change: { tool: "api", from: 4, to: 2, why: "rate limited with 4 calls running" },
    });
    expect(lowerLimit(down.limits, "api", 3, 4).change).toEqual({
      tool: "api",
      from: 2,
      to: 1,
      why: "rate limited with 3 calls running",
    });
    expect(lowerLimit({ api: 1 }, "api", 2, 4)).toEqual({ limits: { api: 1 } });
    // A lone call: nothing to halve.
    expect(lowerLimit({}, "api", 1, 4)).toEqual({ limits: {} });
    expect(raiseLimit({ api: 2 }, "api", 4)).toEqual({
      limits: { api: 3 },
      change: { tool: "api", from: 2, to: 3, why: "a call succeeded" },
    });
    expect(raiseLimit({ api: 3, x: 1 }, "api", 4)).toEqual({
      limits: { x: 1 },
      change: { tool: "api", from: 3, to: 4, why: "a call succeeded" },
    });
    expect(raiseLimit({}, "api", 4)).toEqual({ limits: {} });
  });

  it("recognises HTTP 429 and a TransientError with retryAfterMs, nothing else", () => {
    expect(isRateLimit({ name: "HttpError", message: "x", status: 429 })).toBe(true);
    expect(isRateLimit({ name: "TransientError", message: "x", retryAfterMs: 100 })).toBe(true);
    expect(isRateLimit({ name: "TransientError", message: "x" })).toBe(false);
    expect(isRateLimit({ name: "HttpError", message: "x", status: 503 })).toBe(false);
    expect(isRateLimit(undefined)).toBe(false);
  });
});

describe("nextQueued", () => {
  it("hands over deviations in order and drops the ones an earlier answer dealt with", () => {
    const plan = { version: 2, steps: [step("a"), step("b")], assumptions: [] } as Plan;
    const steps: Record<string, StepRun> = {
      a: { status: "pending", attempts: 1 },
      b: { status: "failed", attempts: 2 },
    };
    const queue = [
      { kind: "error" as const, stepId: "a", attempt: 1, message: "a failed" },
      { kind: "assumption_broken" as const, stepId: "a", attempt: 1, assumptionId: "A1", message: "A1 false" },
      { kind: "error" as const, stepId: "gone", attempt: 1, message: "replaced" },
      { kind: "error" as const, stepId: "b", attempt: 2, message: "b failed" },
    ];
    const first = nextQueued(queue, plan, steps, ["A1"]);
    expect(first.deviation?.message).toBe("b failed");
    expect(first.rest).toEqual([]);
    expect(nextQueued(queue.slice(1, 3), plan, steps, ["A1"])).toEqual({ rest: [] });
    expect(nextQueued(queue.slice(1), plan, steps, []).deviation?.message).toBe("A1 false");
  });
});

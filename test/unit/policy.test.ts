import { describe, expect, it } from "vitest";
import { type Step } from "../../src/index.js";
import {
  backoffDelay,
  classify,
  classifyEvidence,
  resolvePolicy,
  type ClassifyInput,
  type Deviation,
} from "../../src/policy/index.js";

const policy = resolvePolicy({});
const standing = { available: true, count: 0, spent: 0, coolingDown: [], falsified: [] };
const step: Step = { id: "s", goal: "g", tool: "t" };
/** A deviation with only the fields a case sets (the union's per-kind fields are the case's to give). */
const input = (deviation: Record<string, unknown>, extra: Partial<ClassifyInput> = {}): ClassifyInput => ({
  deviation: { kind: "error", attempt: 1, message: "m", ...deviation } as Deviation,
  step,
  run: { status: "failed", attempts: 1 },
  policy,
  replan: standing,
  decisionCount: 0,
  ...extra,
});
const pick = (v: ReturnType<typeof classify>) => `${v.failureClass} ${v.action} ${v.rule} ${v.evidence}`;

describe("evidence rules", () => {
  it.each([
    [{ status: 503 }, "transient.http-5xx"],
    [{ status: 500 }, "transient.http-5xx"],
    [{ status: 429 }, "transient.http-429"],
    [{ status: 408 }, "transient.http-408-425"],
    [{ status: 425 }, "transient.http-408-425"],
    [{ status: 404 }, "deterministic.http-4xx"],
    [{ status: 400 }, "deterministic.http-4xx"],
    [{ code: "ECONNRESET" }, "transient.network"],
    [{ code: "ETIMEDOUT" }, "transient.network"],
    [{ code: "ECONNREFUSED" }, "transient.network"],
    [{ code: "ENOENT" }, "unknown.unclassified"],
    [{ name: "TransientError" }, "transient.error"],
    [{ name: "PermanentError", status: 503 }, "deterministic.error"],
    [{ name: "AssumptionBrokenError", assumptionId: "a" }, "assumption.error"],
    [{ name: "ToolInputParsingException" }, "deterministic.invalid-arguments"],
    [{ name: "Error" }, "unknown.unclassified"],
  ])("%j → %s", (error, rule) => {
    expect(
      classifyEvidence({ kind: "error", attempt: 1, message: "m", error: { name: "Error", message: "m", ...error } })
        .id,
    ).toBe(rule);
  });
  it("classifies timeouts, unmet signals, preconditions, budget and scope changes", () => {
    expect(
      ["timeout", "signal_unmet", "precondition", "budget", "scope_change", "assumption_broken"].map(
        (kind) => classifyEvidence({ kind, attempt: 1, message: "" } as Deviation).id,
      ),
    ).toEqual([
      "transient.timeout",
      "unmet.signal",
      "precondition.false",
      "budget.max-cost",
      "scope.change-requested",
      "assumption.check-false",
    ]);
  });
});

describe("classify (the ladder)", () => {
  const e503 = { error: { name: "HttpError", message: "x", status: 503 } };
  it("retries a transient failure while attempts remain, with exponential backoff", () => {
    const v = classify(input(e503, { run: { status: "failed", attempts: 2 } }));
    expect(pick(v)).toBe("transient retry transient.retry transient.http-5xx");
    expect(v.delayMs).toBe(400);
  });
  it("after the last attempt a transient failure is treated as deterministic", () => {
    expect(pick(classify(input(e503, { run: { status: "failed", attempts: 3 } })))).toBe(
      "deterministic escalate exhausted.escalate transient.http-5xx",
    );
    expect(
      pick(
        classify(input(e503, { run: { status: "failed", attempts: 3 }, step: { ...step, fallback: { tool: "u" } } })),
      ),
    ).toBe("deterministic fallback exhausted.fallback transient.http-5xx");
  });
  it("a person's retry opens a fresh round of attempts", () => {
    expect(classify(input(e503, { run: { status: "failed", attempts: 4, retryBase: 3 } })).action).toBe("retry");
  });
  it("deterministic: fallback, then local replan if an assumption covers the step, then escalate", () => {
    const e404 = { error: { name: "HttpError", message: "x", status: 404 } };
    expect(pick(classify(input(e404, { step: { ...step, fallback: { tool: "u" } } })))).toBe(
      "deterministic fallback deterministic.fallback deterministic.http-4xx",
    );
    const used = classify(
      input(e404, {
        step: { ...step, fallback: { tool: "u" }, assumptions: ["portal"] },
        run: { status: "failed", attempts: 2, usedFallback: true },
      }),
    );
    expect(pick(used)).toBe("deterministic replan_local deterministic.replan-local deterministic.http-4xx");
    expect(used.brokenAssumption).toBe("portal");
    expect(pick(classify(input(e404)))).toBe("deterministic escalate deterministic.escalate deterministic.http-4xx");
  });
  it("an optional step that fails for good is skipped", () => {
    expect(
      pick(classify(input({ error: { name: "PermanentError", message: "x" } }, { step: { ...step, optional: true } }))),
    ).toBe("deterministic skip optional.skip deterministic.error");
  });
  it("replans need a planner that can replan and are bounded by the guardrails", () => {
    const d = { kind: "assumption_broken" as const, assumptionId: "a" };
    expect(pick(classify(input(d)))).toBe(
      "assumption_broken replan_local assumption.replan-local assumption.check-false",
    );
    expect(classify(input(d, { replan: { ...standing, available: false } })).rule).toBe("replan.unavailable");
    expect(classify(input(d, { replan: { ...standing, count: 3 } })).rule).toBe("guard.max-replans");
    expect(classify(input(d, { replan: { ...standing, coolingDown: ["a"] } })).rule).toBe("guard.replan-cooldown");
    const budgeted = resolvePolicy({ budget: { maxReplanCost: 0.2 } });
    expect(classify(input(d, { policy: budgeted, replan: { ...standing, spent: 0.2 } })).rule).toBe(
      "guard.replan-budget",
    );
    expect(classify(input(d, { decisionCount: 100 })).rule).toBe("guard.max-decisions");
  });
  it("an unmet signal blames the step's first assumption; without one it escalates", () => {
    const v = classify(input({ kind: "signal_unmet" }, { step: { ...step, assumptions: ["root", "other"] } }));
    expect(pick(v)).toBe("success_signal_unmet replan_local unmet.replan-local unmet.signal");
    expect(v.brokenAssumption).toBe("root");
    expect(pick(classify(input({ kind: "signal_unmet" })))).toBe(
      "success_signal_unmet escalate unmet.escalate unmet.signal",
    );
  });
  it("scope changes replan globally; budget exhaustion asks for a cheaper route", () => {
    expect(pick(classify(input({ kind: "scope_change" })))).toBe(
      "scope_changed replan_global scope.replan-global scope.change-requested",
    );
    expect(pick(classify(input({ kind: "budget" })))).toBe(
      "budget_exhausted replan_global budget.replan-cheaper budget.max-cost",
    );
  });
  it("is a pure function: the same input gives the same decision", () => {
    const i = input(e503);
    expect(classify(i)).toEqual(classify(structuredClone(i)));
  });
});

describe("backoff", () => {
  it("computes none, fixed and capped exponential delays", () => {
    const exp = { maxAttempts: 5, backoff: "exponential" as const, initialDelayMs: 200, maxDelayMs: 1000 };
    expect([1, 2, 3, 4, 5].map((n) => backoffDelay(exp, n))).toEqual([200, 400, 800, 1000, 1000]);
    expect(backoffDelay({ ...exp, backoff: "fixed" }, 4)).toBe(200);
    expect(backoffDelay({ ...exp, backoff: "none" }, 4)).toBe(0);
    expect(backoffDelay(exp, 1, 3000)).toBe(3000);
  });
});

describe("policy options", () => {
  it("fills documented defaults", () => {
    expect(resolvePolicy({})).toEqual({
      maxReplans: 3,
      replanCooldownSteps: 1,
      maxBacktrackDepth: 3,
      maxBacktracksPerStep: 2,
      replanDraftRetries: 1,
      maxDecisions: 100,
      maxRefusedCalls: 5,
      maxExtensions: 20,
      stallFactor: 2,
      maxConcurrency: 4,
      defaultTimeoutMs: 300000,
      plannerTimeoutMs: 120000,
      budget: {},
      defaultRetry: { maxAttempts: 3, backoff: "exponential", initialDelayMs: 200, maxDelayMs: 10000 },
      replanTools: "read-only",
      agentFeedback: true,
    });
  });
  it("names the field of an invalid option", () => {
    expect(() => resolvePolicy({ maxReplans: -1 })).toThrow("policy.maxReplans: Too small: expected number to be >=0");
    expect(() => resolvePolicy({ defaultRetry: { initialDelayMs: 500, maxDelayMs: 100 } })).toThrow(
      "policy.defaultRetry: maxDelayMs (100) cannot be less than initialDelayMs (500)",
    );
    expect(() => resolvePolicy({ maxReplan: 3 })).toThrow('policy: Unrecognized key: "maxReplan"');
  });
});

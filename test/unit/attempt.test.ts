/**
 * The one attempt function (policy/attempt/attempt.ts), pure: a step, its run and a call's result in; the
 * judged output or a deviation with the rule table's verdict, and the operation's key, out.
 */
import { describe, expect, it } from "vitest";
import type { Plan } from "../../src/plan/schema/plan.js";
import type { SideEffectRecord, StepRun } from "../../src/plan/schema/run.js";
import type { Step } from "../../src/plan/schema/step.js";
import {
  attempt,
  beforeAttempt,
  effectKey,
  ladderDecisionCount,
  replanStanding,
  type CallOutcome as CallResult,
  type RunStanding,
} from "../../src/policy/attempt/attempt.js";
import { resolvePolicy } from "../../src/policy/options.js";

const policy = resolvePolicy({});
const fresh = { available: true, count: 0, spent: 0, lastReplanAt: {}, successes: 0, falsified: [] };
const standing = (extra: Partial<RunStanding> = {}, replan: Partial<typeof fresh> = {}): RunStanding => ({
  policy,
  replan: replanStanding({ ...fresh, ...replan }, policy),
  decisionCount: 0,
  ...extra,
});
const step = (extra: Partial<Step> = {}): Step => ({ id: "s", goal: "g", tool: "t", produces: ["x"], ...extra });
const planOf = (s: Step): Plan =>
  ({ version: 1, goal: "g", assumptions: [{ id: "a", statement: "a holds" }], steps: [s] }) as unknown as Plan;
const err = (name: string, extra: Record<string, unknown> = {}): CallResult => ({
  ok: false,
  error: { name, message: `${name} happened`, ...extra },
});

function ruleOf(s: Step, result: CallResult, run: Partial<StepRun> = {}, at: RunStanding = standing()) {
  const out = attempt({
    step: s,
    run: { status: "running", attempts: 1, ...run },
    result,
    plan: planOf(s),
    facts: {},
    trusted: {},
    steps: {},
    falsified: [],
    standing: at,
  });
  return out.kind === "succeeded" ? `ok ${JSON.stringify(out.values)}` : `${out.deviation.kind} ${out.verdict!.rule}`;
}

describe("attempt: every failure class to its rule", () => {
  const retry = { maxAttempts: 2, backoff: "fixed", initialDelayMs: 1 } as const;
  it.each([
    ["success", step(), { ok: true, output: { x: 1 } }, {}, standing(), 'ok {"x":1}'],
    ["transient", step({ retry }), err("TransientError"), {}, standing(), "error transient.retry"],
    [
      "transient, exhausted",
      step({ retry }),
      err("TransientError"),
      { attempts: 2 },
      standing(),
      "error exhausted.escalate",
    ],
    ["timeout", step({ retry }), { ...err("Timeout"), timeout: true }, {}, standing(), "timeout transient.retry"],
    ["rate limit", step({ retry }), err("HttpError", { status: 429 }), {}, standing(), "error transient.retry"],
    [
      "deterministic, fallback",
      step({ fallback: { tool: "u" } }),
      err("PermanentError"),
      {},
      standing(),
      "error deterministic.fallback",
    ],
    ["deterministic", step(), err("PermanentError"), {}, standing(), "error deterministic.escalate"],
    [
      "permanent on an assumption",
      step({ assumptions: ["a"] }),
      err("PermanentError"),
      {},
      standing(),
      "error deterministic.replan-local",
    ],
    ["optional", step({ optional: true }), err("PermanentError"), {}, standing(), "error optional.skip"],
    [
      "validation: produced field missing",
      step(),
      { ok: true, output: { y: 1 } },
      {},
      standing(),
      "signal_unmet unmet.escalate",
    ],
    [
      "success signal unmet, retryOnUnmet",
      step({ successSignal: "output.x > 1", retryOnUnmet: true }),
      { ok: true, output: { x: 1 } },
      {},
      standing(),
      "signal_unmet unmet.retry-once",
    ],
    [
      "output not storable",
      step(),
      { ok: true, output: { x: 1n } },
      {},
      standing(),
      "output_rejected deterministic.escalate",
    ],
    [
      "assumption broken",
      step({ assumptions: ["a"] }),
      err("AssumptionBrokenError", { assumptionId: "a" }),
      {},
      standing(),
      "error assumption.replan-local",
    ],
    [
      "replan cooldown",
      step({ assumptions: ["a"] }),
      err("AssumptionBrokenError", { assumptionId: "a" }),
      {},
      standing({}, { lastReplanAt: { a: 0 } }),
      "error guard.replan-cooldown",
    ],
    [
      "replans spent",
      step({ assumptions: ["a"] }),
      err("PermanentError"),
      {},
      standing({}, { count: 3 }),
      "error guard.max-replans",
    ],
    [
      "no replan function",
      step({ assumptions: ["a"] }),
      err("PermanentError"),
      {},
      standing({}, { available: false }),
      "error replan.unavailable",
    ],
    [
      "decisions spent",
      step(),
      err("TransientError"),
      {},
      standing({ decisionCount: policy.maxDecisions }),
      "error guard.max-decisions",
    ],
    ["unknown", step(), err("Error"), {}, standing(), "error unknown.escalate"],
  ] as const)("%s", (_name, s, result, run, at, expected) => {
    expect(ruleOf(s, result as CallResult, run, at)).toBe(expected);
  });

  it("a success whose output proves an assumption false: judged, with the broken assumption's verdict", () => {
    const checker = step({ id: "check", produces: ["stock"] });
    const later = step({ id: "reserve", tool: "r", produces: [], assumptions: ["in_stock"] });
    const plan = {
      version: 1,
      goal: "g",
      assumptions: [{ id: "in_stock", statement: "in stock", check: "facts.stock > 0" }],
      steps: [checker, later],
    } as unknown as Plan;
    const base = { step: checker, run: { status: "running", attempts: 1 } as StepRun, plan, facts: {}, trusted: {} };
    const out = attempt({ ...base, result: { ok: true, output: { stock: 0 } }, steps: {}, standing: standing() });
    expect(out).toMatchObject({ kind: "succeeded", values: { stock: 0 }, broken: { kind: "assumption_broken" } });
    expect(out.verdict?.rule).toBe("assumption.replan-local");
    // Without the steps, no assumption is checked (the graph's visit checks them over every step it recorded).
    expect(attempt({ ...base, result: { ok: true, output: { stock: 0 } } })).toEqual({
      kind: "succeeded",
      output: { stock: 0 },
      values: { stock: 0 },
    });
  });

  it("counts the ladder's decisions, not the dispatcher's rate.limit records", () => {
    expect(ladderDecisionCount([{ rule: "rate.limit" }, { rule: "transient.retry" }])).toBe(1);
  });
});

describe("beforeAttempt and the one effect key", () => {
  const pay = step({ id: "pay", tool: "charge", sideEffects: ["charge"], idempotent: false, args: { amount: 5 } });
  const base = {
    step: pay,
    run: undefined,
    threadId: "t1",
    tool: "charge",
    args: { amount: 5 },
    facts: {},
    trusted: {},
    spent: 0,
    charge: 0,
    maxCost: undefined,
    committed: [] as SideEffectRecord[],
    steps: {},
  };

  it("keys a side-effecting step's calls, fallback included, on thread, tool, args and operation", () => {
    expect(effectKey("t1", pay, "charge", { amount: 5 })).toEqual({
      key: "t1:22846af74559f14b",
      legacy: expect.stringMatching(/^t1:pay:[0-9a-f]{16}$/),
    });
    expect(effectKey("t1", pay, "charge_backup", { amount: 5 })?.key).toBe("t1:6f61b59c29c6086f");
    expect(effectKey("t1", { ...pay, operation: "again" }, "charge", { amount: 5 })?.key).not.toBe(
      "t1:22846af74559f14b",
    );
    // A step marked idempotent, or declaring no side effects, is not keyed, whatever its tool.
    expect(effectKey("t1", { ...pay, idempotent: true }, "charge", { amount: 5 })).toBeUndefined();
    expect(effectKey("t1", step({ tool: "charge" }), "charge", { amount: 5 })).toBeUndefined();
    expect(beforeAttempt(base)).toEqual({ kind: "call", key: "t1:22846af74559f14b", operation: "t1:22846af74559f14b" });
    // Without side effects: no key; an agent step's operation is still named (its agent's tools get
    // it), a plain tool step's is not (nothing reads it).
    expect(beforeAttempt({ ...base, step: { ...pay, idempotent: true, agent: "clerk" } })).toEqual({
      kind: "call",
      key: undefined,
      operation: "t1:22846af74559f14b",
    });
    expect(beforeAttempt({ ...base, step: { ...pay, idempotent: true } })).toEqual({
      kind: "call",
      key: undefined,
      operation: undefined,
    });
  });

  it("reuses a committed operation's output under any step id; refuses a changed one, and one over budget", () => {
    const committed = [{ stepId: "old", idempotencyKey: "t1:22846af74559f14b", at: "x", output: { r: 1 } }];
    expect(beforeAttempt({ ...base, committed })).toMatchObject({
      kind: "reuse",
      key: "t1:22846af74559f14b",
      output: { r: 1 },
    });
    const mine = [{ stepId: "pay", idempotencyKey: "t1:0000000000000000", at: "x", output: { r: 1 } }];
    expect(beforeAttempt({ ...base, committed: mine })).toMatchObject({
      kind: "refused",
      failure: { deviation: { kind: "side_effect_changed", committedKey: "t1:0000000000000000" } },
    });
    expect(beforeAttempt({ ...base, spent: 1, charge: 1, maxCost: 1.5 })).toMatchObject({
      kind: "refused",
      failure: { deviation: { kind: "budget" } },
    });
    // A committed operation's output is reused at no cost: an almost spent budget does not refuse it.
    expect(beforeAttempt({ ...base, committed, spent: 1, charge: 1, maxCost: 1.5 })).toMatchObject({
      kind: "reuse",
      output: { r: 1 },
    });
    // The same attempt called again after a crash is not charged again, so not held by the budget.
    expect(beforeAttempt({ ...base, spent: 1, charge: 1, maxCost: 1.5, again: true }).kind).toBe("call");
    const hostile = { ...base, args: { ["__proto__"]: { polluted: true }, amount: Number.NaN } };
    expect(beforeAttempt(hostile)).toMatchObject({ kind: "call", key: expect.stringMatching(/^t1:[0-9a-f]{16}$/) });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

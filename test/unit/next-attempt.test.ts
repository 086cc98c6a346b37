/**
 * The attempt as a pure step machine (policy/attempt/next-attempt.ts) and its one performer
 * (runtime/run-attempt.ts): same snapshot and gathered, same command; with a standing a retry sleeps
 * and calls again in the same drive, without one the drive ends with the judged deviation; the one
 * deadline cuts a hanging call and its signal aborts.
 */
import { describe, expect, it } from "vitest";
import type { Plan } from "../../src/plan/schema/plan.js";
import type { Step } from "../../src/plan/schema/step.js";
import { replanStanding, type CallOutcome, type RunStanding } from "../../src/policy/attempt/attempt.js";
import { nextAttempt, type AttemptSnapshot, type Performed } from "../../src/policy/attempt/next-attempt.js";
import { resolvePolicy } from "../../src/policy/options.js";
import { runAttempt, type AttemptPort } from "../../src/runtime/run-attempt.js";
import type { JournalEntry, RunJournal } from "../../src/contracts/effect-journal.js";

const policy = resolvePolicy({});
const fresh = { available: true, count: 0, spent: 0, lastReplanAt: {}, successes: 0, falsified: [] };
const standing: RunStanding = { policy, replan: replanStanding(fresh, policy), decisionCount: 0 };
const retry = { maxAttempts: 3, backoff: "fixed", initialDelayMs: 50, maxDelayMs: 50 } as const;
const at = "2026-01-01T00:00:00.000Z";

function snapshot(s: Partial<Step> = {}, extra: Partial<AttemptSnapshot> = {}): AttemptSnapshot {
  const step: Step = { id: "s", goal: "g", tool: "t", args: { a: 1 }, produces: ["x"], retry, ...s };
  const plan = { version: 1, goal: "g", assumptions: [], steps: [step] } as unknown as Plan;
  return {
    step,
    run: { status: "pending", attempts: 0 },
    threadId: "th",
    call: { tool: step.tool!, args: { a: 1 } },
    args: { a: 1 },
    plan,
    facts: {},
    trusted: {},
    steps: {},
    committed: [],
    spent: 0,
    maxCost: undefined,
    timeoutMs: 1000,
    at,
    ...extra,
  };
}

const called = (outcome: CallOutcome): Performed => ({ kind: "called", at, outcome });
const transient: CallOutcome = { ok: false, error: { name: "TransientError", message: "503" } };

describe("nextAttempt: a pure step machine", () => {
  it("same snapshot and gathered, same command", () => {
    const s = snapshot({}, { standing });
    const gathered = [called(transient)];
    expect(nextAttempt(s, gathered)).toEqual(nextAttempt(s, gathered));
    expect(nextAttempt(s, [])).toMatchObject({ kind: "call", tool: "t", args: { a: 1 }, attempt: 1, timeoutMs: 1000 });
  });

  it("with a standing, a transient failure sleeps the backoff, then calls again; the retry is announced", () => {
    const s = snapshot({}, { standing });
    const slept = nextAttempt(s, [called(transient)]);
    expect(slept.kind).toBe("sleep");
    expect(slept.kind === "sleep" && slept.ms).toBe(50);
    expect(slept.kind === "sleep" && slept.announce.map((d) => d.rule)).toEqual(["transient.retry"]);
    const again = nextAttempt(s, [called(transient), { kind: "slept", at }]);
    expect(again).toMatchObject({ kind: "call", attempt: 2, announce: [] });
    const done = nextAttempt(s, [called(transient), { kind: "slept", at }, called({ ok: true, output: { x: 7 } })]);
    expect(done.kind === "done" && [done.ending.kind, done.run.status, done.run.attempts]).toEqual([
      "succeeded",
      "succeeded",
      2,
    ]);
    expect(done.kind === "done" && done.decisions.map((d) => d.rule)).toEqual(["transient.retry"]);
  });

  it("a fallback refused before its call (over budget) ends the drive with its decision not yet announced", () => {
    const s = snapshot({ fallback: { tool: "dear", cost: 5 }, cost: 0 }, { standing, maxCost: 3 });
    const notFound: CallOutcome = { ok: false, error: { name: "PermanentError", message: "404 not found" } };
    const done = nextAttempt(s, [called(notFound)]);
    expect(done.kind).toBe("done");
    expect(done.kind === "done" && done.decisions.map((d) => d.rule)).toEqual([
      "deterministic.fallback",
      "budget.replan-cheaper",
    ]);
    // No command carried the fallback's decision: the caller must still send it.
    expect(done.kind === "done" && done.announced).toEqual([]);
  });

  it("without a standing (the graph), a deviation ends the drive unjudged by the ladder", () => {
    const done = nextAttempt(snapshot(), [called(transient)]);
    expect(done.kind === "done" && done.ending.kind).toBe("deviation");
    expect(done.kind === "done" && Object.hasOwn(done.ending, "verdict")).toBe(false);
    expect(done.kind === "done" && done.decisions).toEqual([]);
  });

  it("the graph's scheduled backoff is slept before the first call, not for a call made again", () => {
    const run = { status: "pending" as const, attempts: 1, nextDelayMs: 200 };
    expect(nextAttempt(snapshot({}, { run }), [])).toEqual({ kind: "sleep", ms: 200, announce: [] });
    expect(nextAttempt(snapshot({}, { run, again: true }), [])).toMatchObject({ kind: "call", attempt: 1, charge: 0 });
  });

  it("a side-effecting step's call carries its key; an over-budget call is refused before it starts", () => {
    const effecting = { sideEffects: ["pays"], idempotent: false };
    const call = nextAttempt(snapshot(effecting), []);
    expect(call.kind === "call" && call.key).toMatch(/^th:[0-9a-f]{16}$/);
    const over = nextAttempt(snapshot({ cost: 5 }, { maxCost: 1, standing }), []);
    expect(over.kind === "done" && over.ending.kind).toBe("refused");
    expect(over.kind === "done" && over.decisions.map((d) => d.rule)).toEqual(["budget.replan-cheaper"]);
  });
});

function port(call: AttemptPort["call"], extra: Partial<AttemptPort> = {}): AttemptPort & { slept: number[] } {
  const slept: number[] = [];
  return {
    slept,
    call,
    probe: async () => ({ happened: false }),
    clock: { sleep: async (ms) => void slept.push(ms) },
    now: () => at,
    honoursKeys: new Set(),
    ...extra,
  };
}

describe("runAttempt: the one performer", () => {
  it("performs the machine's commands: a failure, the backoff, a success", async () => {
    const outcomes: CallOutcome[] = [transient, { ok: true, output: { x: 1 } }];
    const p = port(async () => outcomes.shift()!);
    const driven = await runAttempt(p, snapshot({}, { standing }));
    expect(p.slept).toEqual([50]);
    expect([driven.done.ending.kind, driven.done.run.attempts, driven.called]).toEqual(["succeeded", 2, true]);
  });

  it("one deadline: a hanging call is cut at timeoutMs, its signal aborts, and the outcome says timeout", async () => {
    let aborted = false;
    const p = port(
      (_c, _key, signal) =>
        new Promise<CallOutcome>(() => signal.addEventListener("abort", () => (aborted = true), { once: true })),
    );
    const driven = await runAttempt(p, snapshot({}, { timeoutMs: 5 }));
    expect(aborted).toBe(true);
    const last = driven.gathered.at(-1);
    expect(last?.kind === "called" && last.outcome).toMatchObject({
      ok: false,
      timeout: true,
      cut: true,
      error: { name: "StepTimeout", message: "step timed out after 5 ms" },
    });
    expect(driven.done.ending.kind === "deviation" && driven.done.ending.deviation.kind).toBe("timeout");
  });

  it("a stop during a retry's backoff ends the drive with the failure being retried, not the machine's sleep", async () => {
    const stop = new AbortController();
    let calls = 0;
    const p = port(async () => (calls++, transient), {
      stop: stop.signal,
      clock: { sleep: async () => stop.abort(new Error("stopped")) },
    });
    const driven = await runAttempt(p, snapshot({}, { standing }));
    expect(driven.done.kind).toBe("done");
    expect([driven.done.ending.kind, driven.done.run.status, driven.done.run.attempts]).toEqual([
      "deviation",
      "pending",
      1,
    ]);
    expect(driven.done.decisions.map((d) => d.rule)).toEqual(["transient.retry"]);
    expect(driven.done.announced.map((d) => d.rule)).toEqual(["transient.retry"]);
    expect([calls, driven.called, driven.gathered.map((g) => g.kind)]).toEqual([1, true, ["called", "stopped"]]);
  });

  it("a stop during the graph's scheduled backoff ends the attempt with the stop, nothing called", async () => {
    const stop = new AbortController();
    let calls = 0;
    const p = port(async () => (calls++, transient), {
      stop: stop.signal,
      clock: { sleep: async () => stop.abort(new Error("stopped")) },
    });
    const run = { status: "pending" as const, attempts: 1, nextDelayMs: 200 };
    const driven = await runAttempt(p, snapshot({}, { run }));
    expect(driven.done.kind).toBe("done");
    expect(driven.done.ending.kind === "deviation" && driven.done.ending.error.message).toBe(
      "the run was stopped before the tool was called",
    );
    expect([calls, driven.called, driven.gathered.map((g) => g.kind)]).toEqual([0, false, ["stopped"]]);
  });

  it("a keyed undo (`undo: true`) is one journaled call: intent, call, result under the key", async () => {
    const entries = new Map<string, JournalEntry>();
    const journal: RunJournal = {
      intent: async (_t, i) => void entries.set(i.key, i),
      result: async (_t, key, result) => void entries.set(key, { ...entries.get(key)!, result }),
      lookup: async (_t, key) => entries.get(key),
    };
    let calls = 0;
    const p = port(async () => ({ ok: true, output: { released: ++calls } }), { journal });
    const args = { hotel: "H" };
    const undo = { undo: true as const, threadId: "th", key: "th:k:compensate", tool: "release", args, attempt: 1 };
    const made = await runAttempt(p, { ...undo, timeoutMs: 100, stepId: "book", approval: {} });
    expect(made.outcome).toEqual({ ok: true, output: { released: 1 } });
    expect(entries.get("th:k:compensate")).toMatchObject({ tool: "release", result: { ok: true } });
    // Called again, the journal's result answers: the undo does not go out twice.
    const again = await runAttempt(p, { ...undo, timeoutMs: 100, stepId: "book", approval: {} });
    expect([calls, again.effect]).toEqual([1, "journaled"]);
  });
});

describe("nextAttempt: a call in doubt is probed by a command, and the machine decides on its answer", () => {
  const verify = { tool: "find_charge", args: { scope: "today" }, inputs: ["order", "missing"] };
  const effecting = { sideEffects: ["pays"], idempotent: false, verify };
  const s = snapshot(effecting, { trusted: { order: "o-1", other: 2 } });
  const key = (nextAttempt(s, []) as { key: string }).key;
  const cut: CallOutcome = {
    ok: false,
    error: { name: "StepTimeout", message: "step timed out after 1000 ms" },
    timeout: true,
    cut: true,
  };
  const cutCall: Performed = {
    kind: "called",
    at,
    outcome: cut,
    key,
    effect: "unsettled",
    doubt: "cut",
    inDoubtAttempt: 1,
  };
  const found: Performed = {
    kind: "called",
    at,
    outcome: { ok: false, error: { name: "EffectInDoubt", message: "" } },
    key,
    effect: "unsettled",
    doubt: "found",
    inDoubtAttempt: 3,
  };
  const probed = (read: Extract<Performed, { kind: "probed" }>["read"]): Performed => ({ kind: "probed", at, read });

  it("a cut call left to the probe: the command is the step's verify, its trusted inputs, the key, the deadline, the cut", () => {
    expect(nextAttempt(s, [cutCall])).toEqual({
      kind: "probe",
      tool: "find_charge",
      args: { scope: "today", order: "o-1" },
      key,
      timeoutMs: 1000,
      cut: cut.error,
    });
    // An intent the journal held: the same probe, with no cut to record.
    expect(nextAttempt(s, [found])).toEqual({
      kind: "probe",
      tool: "find_charge",
      args: { scope: "today", order: "o-1" },
      key,
      timeoutMs: 1000,
    });
  });

  it("happened: the probe's output is the call's, effect.verified, and the drive ends", () => {
    const done = nextAttempt(s, [cutCall, probed({ kind: "happened", output: { x: 9 } })]);
    expect(done.kind).toBe("done");
    if (done.kind !== "done") return;
    expect([done.ending.kind, done.run.status, done.run.attempts, done.run.output]).toEqual([
      "succeeded",
      "succeeded",
      1,
      { x: 9 },
    ]);
    expect(done.decisions.map((d) => d.rule)).toEqual(["effect.verified"]);
    expect(done.last).toEqual({
      kind: "called",
      at,
      key,
      outcome: { ok: true, output: { x: 9 } },
      effect: "verified",
      settled: [{ how: "verified", key }],
    });
  });

  it("did not happen after a cut: the attempt fails with its cut (the ladder's to decide), effect.not-happened", () => {
    const done = nextAttempt(s, [cutCall, probed({ kind: "not-happened" })]);
    expect(done.kind === "done" && done.ending.kind === "deviation" && done.ending.deviation.kind).toBe("timeout");
    expect(done.kind === "done" && done.decisions.map((d) => d.rule)).toEqual(["effect.not-happened"]);
    // With a standing, the ladder retries it: the backoff, then the call again under the same key.
    const withStanding = snapshot(effecting, { trusted: { order: "o-1" }, standing });
    const slept = nextAttempt(withStanding, [cutCall, probed({ kind: "not-happened" })]);
    expect(slept.kind === "sleep" && slept.announce.map((d) => d.rule)).toEqual(["transient.retry"]);
    const again = nextAttempt(withStanding, [cutCall, probed({ kind: "not-happened" }), { kind: "slept", at }]);
    expect(again).toMatchObject({ kind: "call", key, attempt: 2 });
    expect(Object.hasOwn(again, "notHappened")).toBe(false);
  });

  it("did not happen, found in the journal: the same attempt's call goes out again under the key, not charged again", () => {
    const again = nextAttempt(s, [found, probed({ kind: "not-happened" })]);
    expect(again).toEqual({
      kind: "call",
      tool: "t",
      args: { a: 1 },
      key,
      operation: key,
      timeoutMs: 1000,
      attempt: 1,
      charge: 0,
      announce: [],
      notHappened: true,
    });
    const ok: Performed = { kind: "called", at, outcome: { ok: true, output: { x: 1 } }, key };
    const done = nextAttempt(s, [found, probed({ kind: "not-happened" }), ok]);
    expect(done.kind === "done" && [done.ending.kind, done.run.attempts]).toEqual(["succeeded", 1]);
    expect(done.kind === "done" && done.decisions.map((d) => d.rule)).toEqual(["effect.not-happened"]);
    // Cut again: probed again.
    const cutAgain = { ...cutCall, inDoubtAttempt: 4 };
    expect(nextAttempt(s, [found, probed({ kind: "not-happened" }), cutAgain])).toMatchObject({
      kind: "probe",
      cut: cut.error,
    });
  });

  it("no readable answer: the machine asks a person, the question carrying the key and the intent's journal attempt", () => {
    const reason =
      `the outcome of t under key ${key} is unknown (the call was cut before it answered); ` +
      "the tool is not declared to honour idempotency keys and its verify probe threw (down): did it happen?";
    const asked = nextAttempt(s, [found, probed({ kind: "unreadable", problem: "threw (down)" })]);
    expect(asked.kind).toBe("ask");
    if (asked.kind !== "ask") return;
    expect(asked.question).toEqual({ stepId: "s", tool: "t", args: { a: 1 }, key, journalAttempt: 3, reason });
    expect(asked.done.ending.kind === "deviation" && asked.done.ending.deviation).toEqual({
      kind: "effect_in_doubt",
      stepId: "s",
      attempt: 1,
      key,
      tool: "t",
      journalAttempt: 3,
      message: reason,
      error: { name: "EffectInDoubt", message: reason },
    });
    // Without a standing (the graph) no decision yet; with one, the ladder's effect.in-doubt.
    expect(asked.done.decisions).toEqual([]);
    const withStanding = nextAttempt(snapshot(effecting, { standing }), [
      found,
      probed({ kind: "unreadable", problem: "x" }),
    ]);
    expect(withStanding.kind === "ask" && withStanding.done.decisions.map((d) => d.rule)).toEqual(["effect.in-doubt"]);
  });

  it("a call the journal left in doubt with no probe to run asks too; a settled call does not", () => {
    const inDoubt: Performed = {
      kind: "called",
      at,
      outcome: { ok: false, error: { name: "EffectInDoubt", message: "did it happen?" } },
      key,
      effect: "in_doubt",
    };
    const asked = nextAttempt(snapshot({ sideEffects: ["pays"], idempotent: false }), [inDoubt]);
    expect(asked.kind === "ask" && asked.question).toEqual({
      stepId: "s",
      tool: "t",
      args: { a: 1 },
      key,
      reason: "did it happen?",
    });
    expect(nextAttempt(s, [cutCall, probed({ kind: "not-happened" })]).kind).toBe("done");
  });
});

describe("runAttempt performs the probe through the port and writes what its answer settles", () => {
  function journal() {
    const entries = new Map<string, JournalEntry>();
    const j: RunJournal = {
      intent: async (_t, i) => void entries.set(i.key, i),
      result: async (_t, key, result) => void entries.set(key, { ...entries.get(key)!, result }),
      lookup: async (_t, key) => entries.get(key),
    };
    return { j, entries };
  }
  const verify = { tool: "find_charge", inputs: ["order"] };
  const hanging = () => new Promise<CallOutcome>(() => undefined);

  it("a call cut by its deadline, probed: happened writes the probe's output under the key; one call, one probe", async () => {
    const { j, entries } = journal();
    const probes: [string, Record<string, unknown>, string][] = [];
    let calls = 0;
    const p = port(async () => (calls++, hanging()), {
      journal: j,
      probe: async (tool, args, key) => (probes.push([tool, args, key]), { happened: true, output: { x: 5 } }),
    });
    const s = snapshot(
      { sideEffects: ["pays"], idempotent: false, verify },
      { timeoutMs: 5, trusted: { order: "o-1" } },
    );
    const driven = await runAttempt(p, s);
    const key = driven.done.last!.key!;
    expect([calls, driven.gathered.map((g) => g.kind), probes]).toEqual([
      1,
      ["called", "probed"],
      [["find_charge", { order: "o-1" }, key]],
    ]);
    expect(entries.get(key)?.result).toEqual({ ok: true, output: { x: 5 } });
    expect([driven.done.ending.kind, driven.done.decisions.map((d) => d.rule)]).toEqual([
      "succeeded",
      ["effect.verified"],
    ]);
  });

  it("an intent found in doubt, probed not happened: called again under the key, the intent written once more", async () => {
    const { j, entries } = journal();
    const s = snapshot({ sideEffects: ["pays"], idempotent: false, verify });
    const key = (nextAttempt(s, []) as { key: string }).key;
    entries.set(key, { key, stepId: "s", tool: "t", args: { a: 1 }, attempt: 1, at });
    const started: number[] = [];
    const p = port(async () => ({ ok: true, output: { x: 2 } }), {
      journal: j,
      probe: async () => ({ happened: false }),
      starting: (c) => started.push(c.attempt),
    });
    const driven = await runAttempt(p, s);
    expect(driven.gathered.map((g) => g.kind)).toEqual(["called", "probed", "called"]);
    expect(started).toEqual([1]);
    expect(entries.get(key)?.result).toEqual({ ok: true, output: { x: 2 } });
    expect(driven.done.decisions.map((d) => d.rule)).toEqual(["effect.not-happened"]);
  });

  it("a probe that throws settles nothing: the intent stays without a result, and the call is in doubt", async () => {
    const { j, entries } = journal();
    const p = port(hanging, { journal: j, probe: async () => Promise.reject(new Error("down")) });
    const s = snapshot({ sideEffects: ["pays"], idempotent: false, verify }, { timeoutMs: 5 });
    const driven = await runAttempt(p, s);
    const key = driven.done.last!.key!;
    expect(entries.get(key)?.result).toBeUndefined();
    expect(driven.done.last?.effect).toBe("in_doubt");
    expect(driven.done.ending.kind === "deviation" && driven.done.ending.deviation.kind).toBe("effect_in_doubt");
    expect(driven.asked).toMatchObject({ stepId: "s", tool: "t", key, journalAttempt: 1 });
  });
});

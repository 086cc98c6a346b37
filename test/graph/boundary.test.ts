/**
 * A run's state belongs to the manager: outside writes, finished threads, inputs and answers are
 * checked at the boundary, and a rejected one writes nothing.
 */
import { Command, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { describe, expect, it } from "vitest";
import { isPlanManagerError, PermanentError, type PlanManagerError } from "../../src/errors.js";
import { pendingQuestion, resumeRun } from "../../src/index.js";
import { staticPlanner } from "../../src/planners/static-planner.js";
import type { PlanDraft } from "../../src/plan/schema/plan.js";
import { requestStop, resumeStopped } from "../../src/worker/stop-run.js";
import { brief, harness, scriptedTool, type Loose } from "../helpers/graph.js";

/** lookup (tool) → approve (a person) → refund (tool). */
const ticketPlan: PlanDraft = {
  steps: [
    { id: "lookup", goal: "Look up the order", tool: "lookup_order", inputs: ["ticket"], produces: ["order"] },
    {
      id: "approve",
      goal: "Approve the refund",
      human: { prompt: "Refund this order?" },
      dependsOn: ["lookup"],
      inputs: ["order"],
      produces: ["approved_by"],
    },
    { id: "refund", goal: "Refund", tool: "refund", dependsOn: ["approve"], inputs: ["order"], produces: ["done"] },
  ],
};

const notifyFirst = (): PlanDraft => ({
  steps: [
    { id: "notify", goal: "Notify", tool: "notify", dependsOn: ["approve"], produces: ["notified"] },
    { ...ticketPlan.steps[2]!, dependsOn: ["notify"] },
  ],
});

function ticket(options: { reviewPlan?: boolean; checkpointer?: BaseCheckpointSaver } = {}) {
  const lookup = scriptedTool("lookup_order", [{ order: "O-1" }]);
  const notify = scriptedTool("notify", [{ notified: true }]);
  const refund = scriptedTool("refund", [{ done: true }]);
  const h = harness(staticPlanner({ plan: ticketPlan, replan: notifyFirst }), [lookup, notify, refund], {
    context: { ticket: "T-9" },
    ...options,
  });
  return { h, lookup, notify, refund };
}

const complete = { action: "complete", output: { approved_by: "ana" } } as const;

async function failure(promise: Promise<unknown>): Promise<PlanManagerError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isPlanManagerError(error)) throw new Error(`expected a PlanManagerError, got ${String(error)}`);
  return error;
}

async function checkpointId(h: ReturnType<typeof ticket>["h"]): Promise<unknown> {
  return (await h.graph.getState(h.config)).config.configurable?.checkpoint_id;
}

describe("updateState from outside", () => {
  it.each([
    ["nonsense_key"],
    ["heldReplan"],
    ["status"],
    ["plan"],
    ["steps"],
    ["facts"],
    ["decisions"],
    ["replans"],
    ["outcome"],
  ])("rejects %s with invalid_update naming the key, writes nothing, and keeps the question", async (key) => {
    const { h } = ticket();
    await h.run();
    const before = await checkpointId(h);
    const error = await failure(h.graph.updateState(h.config, { [key]: 1, scopeChanges: ["also x"] }));
    expect([error.code, error.path]).toEqual(["invalid_update", key]);
    const owner = key === "nonsense_key" ? "it is not a key of the plan manager's state" : "the manager owns it";
    expect(error.message).toBe(
      `updateState: "${key}" cannot be written from outside a run (${owner}); ` +
        "the keys you may write are: scopeChanges",
    );
    expect(await checkpointId(h)).toBe(before);
    expect((await pendingQuestion(h.graph, h.config))?.stepId).toBe("approve");
  });

  it("a scope change at a human step keeps the question: getState shows it, resumeRun answers it, the change is planned", async () => {
    const { h, lookup, notify, refund } = ticket();
    const paused = await h.run();
    await h.graph.updateState(h.config, { scopeChanges: ["also notify the customer"] });
    const snapshot = await h.graph.getState(h.config);
    expect(snapshot.tasks.flatMap((t) => t.interrupts.map((i) => i.value))).toEqual([paused.__interrupt__[0].value]);
    expect(snapshot.values.scopeChanges).toEqual(["also notify the customer"]);
    const out = await resumeRun(h.graph, h.config, complete);
    expect(out.status).toBe("completed");
    expect(out.plan?.steps.map((s) => s.id)).toEqual(["lookup", "approve", "notify", "refund"]);
    expect([lookup.calls.length, notify.calls.length, refund.calls.length]).toEqual([1, 1, 1]);
    expect(out.scopeChanges).toEqual([]);
  });

  it("a scope change at plan review keeps the review pending", async () => {
    const { h } = ticket({ reviewPlan: true });
    await h.run();
    await h.graph.updateState(h.config, { scopeChanges: ["also notify the customer"] });
    expect((await pendingQuestion(h.graph, h.config))?.kind).toBe("plan_review");
    const out = await resumeRun(h.graph, h.config, { action: "approve" });
    expect(out.status).toBe("awaiting_human");
    expect(brief(out.decisions).slice(0, 2)).toEqual([
      "-: person → approve [human.approve-plan]",
      "-: scope_changed → replan_global [scope.replan-global]",
    ]);
  });
});

describe("a finished thread", () => {
  it("invoke with a new goal throws thread_finished naming the status; the goal is kept", async () => {
    const { h, lookup } = ticket();
    await h.run();
    await resumeRun(h.graph, h.config, complete);
    const before = await checkpointId(h);
    const error = await failure(h.graph.invoke({ goal: "x again" }, h.config));
    expect([error.code, error.message]).toEqual([
      "thread_finished",
      'thread "t1" has finished (status: completed): start a new run on a new thread_id',
    ]);
    expect(await checkpointId(h)).toBe(before);
    expect([(await h.state()).goal, lookup.calls.length]).toEqual(["test goal", 1]);
  });

  it("invoke(null) returns the final state, runs nothing and writes no checkpoint", async () => {
    const { h, lookup, refund } = ticket();
    await h.run();
    const done = await resumeRun(h.graph, h.config, complete);
    const before = await checkpointId(h);
    const count = await historyLength(h);
    const out = await h.graph.invoke(null, h.config);
    expect(out).toEqual(done);
    expect([out.status, out.facts.done?.value]).toEqual(["completed", true]);
    expect([await checkpointId(h), await historyLength(h)]).toEqual([before, count]);
    expect([lookup.calls.length, refund.calls.length]).toEqual([1, 1]);
  });

  it("an aborted thread stays aborted on invoke(null), which returns it as it ended", async () => {
    const { h } = ticket();
    await h.run();
    await resumeRun(h.graph, h.config, { action: "abort", reason: "no" });
    const before = await checkpointId(h);
    const out = await h.graph.invoke(null, h.config);
    expect([out.status, out.outcome?.failureReason]).toEqual(["aborted", (await h.state()).outcome.failureReason]);
    expect(await checkpointId(h)).toBe(before);
    expect((await failure(h.graph.invoke({ goal: "again" }, h.config))).message).toBe(
      'thread "t1" has finished (status: aborted): start a new run on a new thread_id',
    );
  });
});

async function historyLength(h: { graph: ReturnType<typeof ticket>["h"]["graph"]; config: object }) {
  let n = 0;
  for await (const _ of h.graph.getStateHistory(h.config)) n += 1;
  return n;
}

/** A card charge, then a person's approval, then shipping. */
function shop() {
  const calls: { amount: number; key: string }[] = [];
  const charge = scriptedTool(
    "charge",
    [
      (args: Record<string, unknown>, config: unknown) => {
        const key = (config as { configurable?: { idempotencyKey?: string } }).configurable?.idempotencyKey ?? "";
        calls.push({ amount: args.amount as number, key });
        return { receipt: `R-${calls.length}` };
      },
    ],
    { sideEffects: ["card charge"] },
  );
  const ship = scriptedTool("ship", [{ shipped: true }]);
  const plan: PlanDraft = {
    steps: [
      { id: "pay", goal: "Charge the card", tool: "charge", args: { amount: 100 }, produces: ["receipt"] },
      { id: "ok", goal: "Approve shipping", human: { prompt: "Ship?" }, dependsOn: ["pay"], produces: ["by"] },
      { id: "ship", goal: "Ship", tool: "ship", dependsOn: ["ok"], produces: ["shipped"] },
    ],
  };
  const h = harness(plan, [charge, ship], { threadId: "order-1" });
  return { h, calls, ship };
}

/** The checkpoint after the plan was made and before the charge ran. */
async function beforeCharge(h: ReturnType<typeof shop>["h"]) {
  for await (const snapshot of h.graph.getStateHistory(h.config)) {
    const values = snapshot.values as Loose;
    if (values.plan && !values.steps?.pay && snapshot.next.includes("executor")) return snapshot.config;
  }
  throw new Error("no checkpoint before the charge");
}

const approved = { action: "complete", output: { by: "ana" } } as const;

describe("a Command from outside", () => {
  it("cannot write what updateState may not: a forged trusted fact is invalid_update and nothing is written", async () => {
    const { h, calls } = shop();
    await h.run();
    const before = await checkpointId(h);
    const forged = {
      value: "DE00 ATTACKER",
      label: "trusted",
      producedBy: "input",
      planVersion: 0,
      assumptions: [],
      derivedFrom: [],
    };
    const error = await failure(
      h.graph.invoke(new Command({ update: { facts: { iban: forged } } }) as never, h.config),
    );
    expect([error.code, error.path, error.message]).toEqual([
      "invalid_update",
      "facts",
      'Command.update: "facts" cannot be written from outside a run (the manager owns it); ' +
        "the keys you may write are: scopeChanges",
    ]);
    const tuples = await failure(h.graph.invoke(new Command({ update: [["steps", {}]] }), h.config));
    expect([tuples.code, tuples.path]).toEqual(["invalid_update", "steps"]);
    expect(await checkpointId(h)).toBe(before);
    expect((await h.state()).facts.iban).toBeUndefined();
    expect(calls.length).toBe(1);
  });

  it("cannot reopen a completed thread to charge again: invalid_update, one charge", async () => {
    const { h, calls } = shop();
    await h.run();
    await resumeRun(h.graph, h.config, approved);
    const before = await checkpointId(h);
    const reopen = new Command({
      update: { status: "running", steps: { pay: { status: "pending", attempts: 0 } } },
      goto: "executor",
    });
    expect(await failure(h.graph.invoke(reopen as never, h.config))).toMatchObject({
      code: "invalid_update",
      path: "status",
    });
    const goto = await failure(h.graph.invoke(new Command({ goto: "executor" }), h.config));
    expect([goto.code, goto.message]).toEqual([
      "thread_finished",
      'thread "order-1" has finished (status: completed): start a new run on a new thread_id',
    ]);
    expect([await checkpointId(h), calls.length]).toEqual([before, 1]);
  });

  it("may carry a scope change with its answer, as updateState may", async () => {
    const { h, calls, ship } = shop();
    await h.run();
    const out = await h.run(new Command({ resume: approved, update: { scopeChanges: ["gift wrap it"] } }));
    expect([out.status, calls.length, ship.calls.length]).toEqual(["awaiting_human", 1, 0]);
    expect(brief(out.decisions).at(-1)).toBe("-: scope_changed → escalate [replan.unavailable]");
  });
});

describe("an answer to a thread with no question is refused, not lost", () => {
  it("a Command resume on a finished thread, even with the config of its old question, is thread_finished", async () => {
    const { h, refund } = ticket();
    await h.run();
    const asked = (await h.graph.getState(h.config)).config;
    await resumeRun(h.graph, h.config, complete);
    const before = await checkpointId(h);
    const late = new Command({ resume: { action: "complete", output: { approved_by: "bo" } } });
    for (const config of [h.config, asked]) {
      const error = await failure(h.graph.invoke(late, config));
      expect([error.code, error.path, error.message]).toEqual([
        "thread_finished",
        "status",
        'thread "t1" has finished (status: completed): it has no question to answer, so the answer was not taken',
      ]);
    }
    expect([await checkpointId(h), (await h.state()).facts.approved_by.value, refund.calls.length]).toEqual([
      before,
      "ana",
      1,
    ]);
  });

  it("a Command resume on a stopped thread is thread_stopped; resumeStopped asks the question again", async () => {
    const { h, refund } = ticket();
    await h.run();
    await requestStop(h.graph, h.config, { now: () => 0 });
    const before = await checkpointId(h);
    const error = await failure(h.graph.invoke(new Command({ resume: complete }), h.config));
    expect([error.code, error.path, error.message]).toEqual([
      "thread_stopped",
      "status",
      'thread "t1" was stopped by an operator, so the answer was not taken: carry on with ' +
        "resumeStopped(graph, config) or the CLI's resume command, then answer the question it asks again",
    ]);
    expect([await checkpointId(h), (await h.state()).status, refund.calls.length]).toEqual([before, "stopped", 0]);
    const reopened = (await resumeStopped(h.graph, h.config)) as Loose;
    expect([reopened.status, (await pendingQuestion(h.graph, h.config))?.stepId]).toEqual([
      "awaiting_human",
      "approve",
    ]);
    expect((await resumeRun(h.graph, h.config, complete)).status).toBe("completed");
  });
});

describe("time travel", () => {
  it.each([
    ["MemorySaver", undefined],
    ["SqliteSaver", () => SqliteSaver.fromConnString(":memory:")],
  ])(
    "a fork from the checkpoint after the input (next: planner) plans and runs again to the same end (%s)",
    async (_, saver) => {
      const { h, lookup, refund } = ticket({ ...(saver ? { checkpointer: saver() } : {}) });
      await h.run();
      const done = await resumeRun(h.graph, h.config, complete);
      let afterInput: Parameters<typeof h.graph.invoke>[1];
      for await (const snapshot of h.graph.getStateHistory(h.config)) {
        if (snapshot.next.length === 1 && snapshot.next[0] === "planner") afterInput = snapshot.config;
      }
      const paused = await h.graph.invoke(null, afterInput);
      expect([paused.status, paused.plan?.version, lookup.calls.length]).toEqual(["awaiting_human", 1, 2]);
      const again = await resumeRun(h.graph, h.config, complete);
      expect([again.status, again.outcome, refund.calls.length]).toEqual(["completed", done.outcome, 2]);
    },
  );

  it("a fork of a finished thread from the checkpoint after the input reuses the committed charge", async () => {
    const { h, calls } = shop();
    await h.run();
    const done = await resumeRun(h.graph, h.config, approved);
    const key = done.sideEffects?.[0]?.idempotencyKey;
    let afterInput: Parameters<typeof h.graph.invoke>[1];
    for await (const snapshot of h.graph.getStateHistory(h.config)) {
      if (snapshot.next.length === 1 && snapshot.next[0] === "planner") afterInput = snapshot.config;
    }
    const again = await h.graph.invoke(null, afterInput);
    expect([again.status, calls]).toEqual(["awaiting_human", [{ amount: 100, key }]]);
    expect(brief(again.decisions ?? [])).toEqual(["pay: none → reuse [effect.reused]"]);
  });
});

describe("a committed effect never runs again on any branch of the thread", () => {
  it("time travel on a finished thread from before the charge reuses the charge: one call, one key", async () => {
    const { h, calls } = shop();
    await h.run();
    const done = await resumeRun(h.graph, h.config, approved);
    const key = done.sideEffects?.[0]?.idempotencyKey;
    const again = await h.graph.invoke(null, await beforeCharge(h));
    expect([again.status, calls]).toEqual(["awaiting_human", [{ amount: 100, key }]]);
    expect(brief(again.decisions ?? [])).toEqual(["pay: none → reuse [effect.reused]"]);
    expect(again.sideEffects?.map((e) => e.idempotencyKey)).toEqual([key]);
  });

  it("updateState on an earlier checkpoint of a finished thread is thread_finished; the thread stays completed", async () => {
    const { h, calls } = shop();
    await h.run();
    await resumeRun(h.graph, h.config, approved);
    const before = await checkpointId(h);
    const error = await failure(h.graph.updateState(await beforeCharge(h), { scopeChanges: ["again"] }));
    expect([error.code, error.path]).toEqual(["thread_finished", "status"]);
    expect([await checkpointId(h), (await h.state()).status, calls.length]).toEqual([before, "completed", 1]);
  });

  it("a fork of a live thread from before the charge reuses the committed charge instead of charging again", async () => {
    const { h, calls } = shop();
    const paused = await h.run();
    const key = paused.sideEffects[0].idempotencyKey;
    const out = await h.graph.invoke(null, await beforeCharge(h));
    expect([out.status, calls]).toEqual(["awaiting_human", [{ amount: 100, key }]]);
    expect(brief(out.decisions ?? [])).toEqual(["pay: none → reuse [effect.reused]"]);
    expect(out.sideEffects?.map((e) => e.idempotencyKey)).toEqual([key]);
    expect(out.facts?.receipt?.value).toBe("R-1");
  });

  it("so does a fork made with updateState, and the committed charge goes with it", async () => {
    const { h, calls } = shop();
    const paused = await h.run();
    const key = paused.sideEffects[0].idempotencyKey;
    const forked = await h.graph.updateState(await beforeCharge(h), {});
    expect(((await h.graph.getState(forked)).values as Loose).sideEffects.map((e: Loose) => e.idempotencyKey)).toEqual([
      key,
    ]);
    const out = await h.graph.invoke(null, forked);
    expect([out.status, calls.length]).toEqual(["awaiting_human", 1]);
    expect(brief(out.decisions ?? [])).toEqual(["pay: none → reuse [effect.reused]"]);
  });
});

describe("input", () => {
  it.each([
    [{}, "goal", "input: goal must be a non-empty string, received undefined"],
    [{ goal: "  " }, "goal", "input: goal must be a non-empty string, received a blank string"],
    [
      { goal: "g", context: { when: 10n } },
      "context.when",
      "input: context.when is a BigInt; input context values must be JSON values " +
        "(plain objects, arrays, strings, numbers, booleans, null)",
    ],
    [
      { goal: "g", context: { f: () => 1 } },
      "context.f",
      "input: context.f is a function; input context values must be JSON values " +
        "(plain objects, arrays, strings, numbers, booleans, null)",
    ],
    [
      { goal: "g", context: { blob: "x".repeat(200_000) } },
      "context.blob",
      "input: context.blob is 200002 bytes of JSON, over the 64000-byte fact limit",
    ],
    [
      { goal: "x".repeat(1_000_000) },
      "goal",
      "input: goal is 1000000 characters, over the 16000-character limit; " +
        "pass long material in context, where a value may hold up to 64000 bytes of JSON",
    ],
  ])("input %# is rejected with invalid_input before any checkpoint", async (input, path, message) => {
    const { h, lookup } = ticket();
    const error = await failure(h.graph.invoke(input as never, h.config));
    expect([error.code, error.path, error.message]).toEqual(["invalid_input", path, message]);
    expect(await checkpointId(h)).toBeUndefined();
    expect(lookup.calls.length).toBe(0);
  });
});

describe("input goal", () => {
  it("a goal of exactly the limit runs, and its outcome names it whole", async () => {
    const { h } = ticket();
    const goal = "g".repeat(16_000);
    const out = await h.graph.invoke({ goal, context: { ticket: "T-9" } }, h.config);
    expect([out.status, out.goal.length]).toEqual(["awaiting_human", 16_000]);
  });
});

describe("input context", () => {
  it("a Date in context reaches a tool as its ISO string, as it would after a resume", async () => {
    const echo = scriptedTool("echo", [(args: Record<string, unknown>) => ({ seen: typeof args.at })]);
    const plan: PlanDraft = { steps: [{ id: "s", goal: "Echo", tool: "echo", inputs: ["at"], produces: ["seen"] }] };
    const h = harness(plan, [echo]);
    const out = await h.graph.invoke({ goal: "echo", context: { at: new Date(0) } }, h.config);
    expect(echo.calls).toEqual([{ at: "1970-01-01T00:00:00.000Z" }]);
    expect(out.facts.seen?.value).toBe("string");
  });
});

describe("resumeRun checks the answer against the question", () => {
  it.each([
    [
      { action: "approve" },
      'action "approve" is not available here; choose one of: complete, skip, change_scope, abort',
    ],
    [
      { action: "complete", output: { wrong_key: 1 } },
      'output is missing approved_by, which step "approve" must produce',
    ],
    [
      { action: "complete", output: { approved_by: 10n } },
      "output.approved_by is a BigInt; a person's answer must be JSON values " +
        "(plain objects, arrays, strings, numbers, booleans, null)",
    ],
    [
      { action: "complete", output: { approved_by: "x".repeat(100_000) } },
      "output is 100018 bytes of JSON, over the 64000-byte fact limit",
    ],
  ])("answer %# → invalid_resume, nothing written", async (value, problem) => {
    const { h } = ticket();
    await h.run();
    const before = await checkpointId(h);
    const error = await failure(resumeRun(h.graph, h.config, value as never));
    expect([error.code, error.message]).toEqual([
      "invalid_resume",
      `thread "t1", human_step for step "approve": ${problem}`,
    ]);
    expect(await checkpointId(h)).toBe(before);
  });

  it("provide only the keys the escalated step produces", async () => {
    const flaky = scriptedTool("lookup_order", [new PermanentError("no such order")]);
    const refund = scriptedTool("refund", [{ done: true }]);
    const h = harness(staticPlanner({ plan: ticketPlan }), [flaky, refund], { context: { ticket: "T-9" } });
    const paused = await h.run();
    expect([paused.status, paused.outcome]).toEqual(["awaiting_human", undefined]);
    expect((await pendingQuestion(h.graph, h.config))?.kind).toBe("escalation");
    const error = await failure(resumeRun(h.graph, h.config, { action: "provide", facts: { other: 1 } }));
    expect(error.message).toBe(
      'thread "t1", escalation for step "lookup": cannot provide other: step "lookup" produces order; provide only those',
    );
  });

  it("pendingQuestion is undefined when nothing is pending; response_schema lists the offered options and keys", async () => {
    const { h } = ticket();
    expect(await pendingQuestion(h.graph, h.config)).toBeUndefined();
    const out = await h.graph.invoke({ goal: "refund", context: { ticket: "T-9" } }, h.config);
    const question = await pendingQuestion(h.graph, h.config);
    expect(question).toEqual(out.__interrupt__?.[0]?.value);
    const state = await h.graph.getState(h.config);
    const schema = (state.tasks[0]?.interrupts[0] as { response_schema?: Loose } | undefined)?.response_schema;
    const actions = ((schema?.oneOf ?? []) as Loose[]).map((o) => o.properties.action.const);
    expect(actions).toEqual(["complete", "skip", "change_scope", "abort"]);
    const completeSchema = ((schema?.oneOf ?? []) as Loose[])[0]!;
    expect(completeSchema.properties.output.required).toEqual(["approved_by"]);
  });
});

describe("a person's answers are decisions", () => {
  it("approving the plan review and completing a human step append decisions by a person", async () => {
    const { h } = ticket({ reviewPlan: true });
    await h.run();
    await resumeRun(h.graph, h.config, { action: "approve" });
    const out = await resumeRun(h.graph, h.config, complete);
    expect(out.status).toBe("completed");
    expect(brief(out.decisions ?? [])).toEqual([
      "-: person → approve [human.approve-plan]",
      "approve: person → complete [human.complete]",
    ]);
  });

  it("a raw Command resume is still checked by the node", async () => {
    const { h } = ticket();
    await h.run();
    const out = await h.run(new Command({ resume: { action: "complete", output: { nope: 1 } } }));
    expect(out.__interrupt__[0].value.error).toBe('output is missing approved_by, which step "approve" must produce');
  });
});

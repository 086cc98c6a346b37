/**
 * External steps (docs/decisions/0042-external-steps.md): a step the calling agent does itself.
 * The run pauses with an `external_step` question; the agent's submission is judged by the one
 * attempt function and answered by the ladder with the same rules as a tool's result.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createAgent } from "langchain";
import { z } from "zod";
import { afterEach, describe, expect, it } from "vitest";
import {
  createPlanManager,
  isPlanManagerError,
  llmPlanner,
  pendingQuestion,
  resumeRun,
  staticPlanner,
  type PlanDraft,
} from "../../src/index.js";
import { DEFAULT_RETRY } from "../../src/plan/retry.js";
import { validatePlan } from "../../src/plan/validate.js";
import { effectKey } from "../../src/policy/attempt/attempt.js";
import { externalCall } from "../../src/policy/attempt/external.js";
import { planMiddleware } from "../../src/middleware/index.js";
import { LlmStepSchema } from "../../src/planners/llm-schema.js";
import { saverAdapter } from "../../src/storage/index.js";
import { userView } from "../../src/views/index.js";
import { fakeClock } from "../helpers/clock.js";
import { received, scriptedAgentModel } from "../helpers/agent-model.js";
import { ScriptedChatModel } from "../helpers/fake-model.js";
import { llmAnswer, llmStep } from "../helpers/llm-answers.js";
import { harness, scriptedTool, type Loose } from "../helpers/graph.js";

const INSTRUCTIONS = "Order the part on the vendor portal at the quoted price; answer with the order id";

function draft(order: Record<string, unknown> = {}): PlanDraft {
  return {
    assumptions: [{ id: "portal-open", statement: "the vendor portal takes orders" }],
    steps: [
      { id: "quote", goal: "get a quote", tool: "quote", produces: ["price"] },
      {
        id: "order",
        goal: "order the part",
        external: { instructions: INSTRUCTIONS },
        dependsOn: ["quote"],
        inputs: ["price"],
        produces: ["orderId"],
        successSignal: 'output.orderId != ""',
        assumptions: ["portal-open"],
        retry: { maxAttempts: 3, backoff: "none" },
        ...order,
      },
      { id: "notify", goal: "tell the team", tool: "notify", dependsOn: ["order"], inputs: ["orderId"] },
    ],
  } as PlanDraft;
}

function setup(order: Record<string, unknown> = {}, options: Record<string, unknown> = {}) {
  const quote = scriptedTool("quote", [{ price: 42 }]);
  const notify = scriptedTool("notify", [{ sent: true }]);
  const phone = scriptedTool("phoneOrder", [{ orderId: "PHONE-1" }]);
  const h = harness(draft(order), [quote, notify, phone], options);
  return { ...h, quote, notify, phone };
}

const rules = (state: Loose) => state.decisions.map((d: Loose) => `${d.stepId ?? "-"} ${d.rule}`);

describe("external steps: the question", () => {
  it("pauses with kind external_step carrying the goal, instructions, trusted inputs and success signal", async () => {
    const h = setup();
    const paused = await h.run();
    expect(paused.status).toBe("awaiting_human");
    const question = await pendingQuestion(h.graph, h.config);
    const offer = {
      step: { id: "order", goal: "order the part", instructions: INSTRUCTIONS },
      inputs: { price: 42 },
      produces: ["orderId"],
      successSignal: 'output.orderId != ""',
      attempt: 1,
    };
    // `offered` lists every external step offered now: here the one.
    expect(question).toEqual({
      kind: "external_step",
      reason: INSTRUCTIONS,
      stepId: "order",
      planVersion: 1,
      options: ["submit", "skip", "abort"],
      context: { goal: "test goal", ...offer, offered: [offer] },
    });
    expect(paused.__interrupt__[0].value).toEqual(question);
    expect(userView((await h.graph.getState(h.config)).values as never).at(-1)).toBe(
      "Waiting for the calling agent to do a step.",
    );
    expect(paused.steps.order).toEqual({ status: "running", attempts: 1, startedAt: "2026-01-01T00:00:00.000Z" });
  });
});

/** Submits through resumeRun and returns the state after, with the question it paused on (if any). */
async function submit(h: ReturnType<typeof setup>, body: Record<string, unknown>) {
  await resumeRun(h.graph, h.config, { action: "submit", stepId: "order", ...body } as never);
  return {
    state: (await h.graph.getState(h.config)).values as Loose,
    question: await pendingQuestion(h.graph, h.config),
  };
}

describe("external steps: a submitted output", () => {
  it("meets the success signal: its facts are trusted, the step succeeded and the run carries on", async () => {
    const h = setup();
    await h.run();
    const { state, question } = await submit(h, { output: { orderId: "PO-7" } });
    expect(question).toBeUndefined();
    expect(state.status).toBe("completed");
    expect(state.steps.order).toEqual({
      status: "succeeded",
      attempts: 1,
      startedAt: "2026-01-01T00:00:00.000Z",
      endedAt: "2026-01-01T00:00:00.000Z",
      output: { orderId: "PO-7" },
    });
    expect(state.facts.orderId).toEqual({
      value: "PO-7",
      label: "trusted",
      producedBy: "order",
      planVersion: 1,
      assumptions: ["portal-open"],
      derivedFrom: ["price"],
      observedAt: "2026-01-01T00:00:00.000Z",
    });
    expect(h.notify.calls).toEqual([{ orderId: "PO-7" }]);
    expect(rules(state)).toEqual([]);
  });

  it("misses the success signal: it is sent back with why (unmet.retry-once) and offered again", async () => {
    const h = setup({ retryOnUnmet: true });
    await h.run();
    const { state, question } = await submit(h, { output: { orderId: "" } });
    expect(rules(state)).toEqual(["order unmet.retry-once"]);
    expect(question?.kind).toBe("external_step");
    expect(question?.context).toMatchObject({
      attempt: 2,
      previousError: 'success signal "output.orderId != \\"\\"" is false for output {"orderId":""}',
    });
  });

  it("misses the success signal with no retry left: the ladder escalates with the rule that applies", async () => {
    const h = setup();
    await h.run();
    const { state, question } = await submit(h, { output: { orderId: "" } });
    // unmet → a local replan of the branch on "portal-open", which this planner cannot make.
    expect(rules(state)).toEqual(["order replan.unavailable"]);
    expect(question?.kind).toBe("escalation");
  });
});

describe("external steps: a submitted error is answered by the ladder like a tool's", () => {
  it("transient: retried, i.e. offered again as the next attempt, with the error as why", async () => {
    const h = setup();
    await h.run();
    const { state, question } = await submit(h, { error: { message: "portal timed out", class: "transient" } });
    expect(rules(state)).toEqual(["order transient.retry"]);
    expect(state.decisions[0].evidence).toBe("transient.error");
    expect(question?.kind).toBe("external_step");
    expect(question?.context).toMatchObject({ attempt: 2, previousError: "portal timed out" });
    expect(state.steps.order.attempts).toBe(2);
    // Offered a third time, then the attempts (maxAttempts 3) run out: the step has no fallback.
    const third = await submit(h, { error: { message: "portal timed out", class: "transient" } });
    expect(third.question?.context).toMatchObject({ attempt: 3 });
    const last = await submit(h, { error: { message: "portal timed out", class: "transient" } });
    // Exhausted: permanent now, and the local replan it calls for has no planner to make it.
    expect(rules(last.state)).toEqual(["order transient.retry", "order transient.retry", "order replan.unavailable"]);
    expect(last.question?.kind).toBe("escalation");
  });

  it("without a class: classified from the message by the evidence rules (transient.external-message)", async () => {
    const h = setup();
    await h.run();
    const { state, question } = await submit(h, { error: { message: "HTTP 503 from the portal, try again" } });
    expect(rules(state)).toEqual(["order transient.retry"]);
    expect(state.decisions[0].evidence).toBe("transient.external-message");
    expect(question?.context).toMatchObject({ attempt: 2 });
  });

  it("without a class, a message that names no passing trouble is unknown: escalated", async () => {
    const h = setup();
    await h.run();
    const { state, question } = await submit(h, { error: { message: "the part is discontinued" } });
    expect(state.decisions[0].evidence).toBe("unknown.unclassified");
    expect(rules(state)).toEqual(["order unknown.escalate"]);
    expect(question?.kind).toBe("escalation");
  });

  it("permanent: the step's fallback tool runs (deterministic.fallback) with the step's inputs", async () => {
    const h = setup({ fallback: { tool: "phoneOrder" } });
    await h.run();
    const { state, question } = await submit(h, { error: { message: "account locked", class: "permanent" } });
    expect(question).toBeUndefined();
    expect(rules(state)).toEqual(["order deterministic.fallback"]);
    expect(h.phone.calls).toEqual([{ price: 42 }]);
    expect(state.facts.orderId.value).toBe("PHONE-1");
    expect(state.status).toBe("completed");
  });

  it("assumption_broken with the assumption's id: falsified and the branch replanned", async () => {
    const replacement: PlanDraft = {
      steps: [
        { id: "order-phone", goal: "order by phone", tool: "phoneOrder", inputs: ["price"], produces: ["orderId"] },
      ],
    };
    const quote = scriptedTool("quote", [{ price: 42 }]);
    const notify = scriptedTool("notify", [{ sent: true }]);
    const phone = scriptedTool("phoneOrder", [{ orderId: "PHONE-2" }]);
    const planner = staticPlanner({ plan: draft(), replan: () => replacement });
    const r = harness(planner, [quote, notify, phone]);
    await r.run();
    await resumeRun(r.graph, r.config, {
      action: "submit",
      stepId: "order",
      error: {
        message: "the portal is closed for the holidays",
        class: "assumption_broken",
        assumption: "portal-open",
      },
    } as never);
    const state = (await r.graph.getState(r.config)).values as Loose;
    expect(rules(state)).toEqual(["order assumption.replan-local"]);
    expect(state.guards.falsified).toEqual(["portal-open"]);
    expect(state.plan.version).toBe(2);
    expect(phone.calls).toEqual([{ price: 42 }]);
    expect(state.status).toBe("completed");
  });
});

/** The thread's checkpoints, newest first: a refused submission must add none. */
async function checkpointIds(h: ReturnType<typeof setup>) {
  const ids: string[] = [];
  for await (const s of h.graph.getStateHistory(h.config)) ids.push(String(s.config.configurable?.checkpoint_id));
  return ids;
}

async function refused(h: ReturnType<typeof setup>, value: unknown): Promise<string> {
  const before = await checkpointIds(h);
  const error: unknown = await resumeRun(h.graph, h.config, value as never).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(await checkpointIds(h)).toEqual(before);
  if (!isPlanManagerError(error) || error.code !== "invalid_resume") throw new Error(`not refused: ${String(error)}`);
  return error.message;
}

describe("external steps: a submission that cannot answer is refused, nothing written", () => {
  it("names the wrong step", async () => {
    const h = setup();
    await h.run();
    expect(await refused(h, { action: "submit", stepId: "notify", output: { orderId: "PO-7" } })).toBe(
      'thread "t1", external_step for step "order": submit names step "notify", but the step waiting for the calling agent is "order"',
    );
  });

  it("carries both an output and an error, or neither", async () => {
    const h = setup();
    await h.run();
    const both = { action: "submit", stepId: "order", output: { orderId: "x" }, error: { message: "no" } };
    const expected =
      'thread "t1", external_step for step "order": submit carries exactly one of output (the step\'s result) and error (what went wrong)';
    expect(await refused(h, both)).toBe(expected);
    expect(await refused(h, { action: "submit", stepId: "order" })).toBe(expected);
  });

  it("reports an assumption the step does not rest on, or an unknown class", async () => {
    const h = setup();
    await h.run();
    const wrong = { message: "closed", class: "assumption_broken", assumption: "weather-fine" };
    expect(await refused(h, { action: "submit", stepId: "order", error: wrong })).toBe(
      'thread "t1", external_step for step "order": error.assumption must name the assumption found false; step "order" rests on one of portal-open',
    );
    expect(await refused(h, { action: "submit", stepId: "order", error: { message: "x", class: "fatal" } })).toMatch(
      /^thread "t1", external_step for step "order": invalid resume value: error\.class: Invalid option/,
    );
  });

  it("holds an output JSON cannot: a BigInt, or one over the fact size limit (10 MB)", async () => {
    const h = setup();
    await h.run();
    expect(await refused(h, { action: "submit", stepId: "order", output: { orderId: 7n } })).toBe(
      'thread "t1", external_step for step "order": output.orderId is a BigInt; a person\'s answer must be JSON values (plain objects, arrays, strings, numbers, booleans, null)',
    );
    const big = { orderId: "x".repeat(10 * 1024 * 1024) };
    expect(await refused(h, { action: "submit", stepId: "order", output: big })).toMatch(
      /^thread "t1", external_step for step "order": output is 10485774 bytes of JSON, over the \d+-byte fact limit$/,
    );
  });

  it("comes when no external step waits: a thread at a human step, and one that has finished", async () => {
    const h = setup();
    await h.run();
    await submit(h, { output: { orderId: "PO-7" } });
    expect(await refused(h, { action: "submit", stepId: "order", output: { orderId: "PO-8" } })).toBe(
      'thread "t1" has no pending interrupt (status: completed); there is nothing to resume',
    );
    const human = harness(
      { steps: [{ id: "sign", goal: "sign", human: { prompt: "sign it" }, produces: ["signed"] }] },
      [],
      { threadId: "t2" },
    );
    await human.run();
    const message = await refused(human as never, { action: "submit", stepId: "sign", output: { signed: true } });
    expect(message).toBe(
      'thread "t2", human_step for step "sign": action "submit" is not available here; choose one of: complete, skip, abort',
    );
  });

  it("lacks a key the step produces, as a human step's complete would: the missing keys are named", async () => {
    const h = setup({ produces: ["orderId", "eta"] });
    await h.run();
    expect(await refused(h, { action: "submit", stepId: "order", output: { orderId: "PO-7" } })).toBe(
      'thread "t1", external_step for step "order": output is missing eta, which step "order" must produce',
    );
    expect(await refused(h, { action: "submit", stepId: "order", output: { note: "done" } })).toBe(
      'thread "t1", external_step for step "order": output is missing orderId, eta, which step "order" must produce',
    );
    // An error is no output: nothing is missing from it.
    const { question } = await submit(h, { error: { message: "portal timed out", class: "transient" } });
    expect(question?.context).toMatchObject({ attempt: 2 });
  });

  it("a __proto__ key in the output is data: the facts are the produced keys, no prototype is polluted", async () => {
    const h = setup();
    await h.run();
    const output = JSON.parse('{"orderId":"PO-9","__proto__":{"polluted":true}}') as Record<string, unknown>;
    const { state } = await submit(h, { output });
    expect(state.status).toBe("completed");
    expect(state.facts.orderId.value).toBe("PO-9");
    expect(state.steps.order.output.orderId).toBe("PO-9");
    expect(h.notify.calls).toEqual([{ orderId: "PO-9" }]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});
function sqliteFile() {
  const dir = mkdtempSync(join(tmpdir(), "external-"));
  dirs.push(dir);
  return join(dir, "plans.sqlite");
}

const SIDE_EFFECTING = { sideEffects: ["places an order with the vendor"], idempotent: false };

describe("external steps with side effects", () => {
  it("carry effectKey's key in the question and commit the effect under it when the output comes", async () => {
    const h = setup(SIDE_EFFECTING);
    await h.run();
    const state = (await h.graph.getState(h.config)).values as Loose;
    const step = state.plan.steps.find((s: Loose) => s.id === "order");
    const call = externalCall(step, { price: 42 });
    const key = effectKey("t1", step, call.tool, call.args)!.key;
    expect(key).toMatch(/^t1:[0-9a-f]{16}$/);
    const question = await pendingQuestion(h.graph, h.config);
    const offer = {
      step: { id: "order", goal: "order the part", instructions: INSTRUCTIONS },
      inputs: { price: 42 },
      produces: ["orderId"],
      successSignal: 'output.orderId != ""',
      attempt: 1,
      idempotencyKey: key,
      sideEffects: ["places an order with the vendor"],
    };
    expect(question?.context).toEqual({ goal: "test goal", ...offer, offered: [offer] });
    const after = await submit(h, { output: { orderId: "PO-7" } });
    expect(after.state.sideEffects).toEqual([
      { stepId: "order", idempotencyKey: key, at: "2026-01-01T00:00:00.000Z", output: { orderId: "PO-7" } },
    ]);
  });

  it("a transient error offers the step again under the same key (the agent does the work once per key)", async () => {
    const h = setup(SIDE_EFFECTING);
    await h.run();
    const first = (await pendingQuestion(h.graph, h.config))?.context as Loose;
    const { question, state } = await submit(h, { error: { message: "portal timed out", class: "transient" } });
    expect(question?.context).toMatchObject({ attempt: 2, idempotencyKey: first.idempotencyKey });
    expect(state.sideEffects).toEqual([]);
  });

  it("round-trips on SqliteSaver: paused, a new graph instance on the same file takes the submission", async () => {
    const file = sqliteFile();
    const config = { configurable: { thread_id: "order-1" } };
    const build = () => {
      const checkpointer = SqliteSaver.fromConnString(file);
      const notify = scriptedTool("notify", [{ sent: true }]);
      const quote = scriptedTool("quote", [{ price: 42 }]);
      const graph = createPlanManager({
        tools: [quote, notify],
        planner: staticPlanner({ plan: draft(SIDE_EFFECTING) }),
        clock: fakeClock(),
      }).compile({ checkpointer });
      return { graph, checkpointer, notify, quote };
    };
    const first = build();
    const paused = (await first.graph.invoke({ goal: "order a part" }, config)) as Loose;
    expect(paused.__interrupt__[0].value.kind).toBe("external_step");
    const key = paused.__interrupt__[0].value.context.idempotencyKey;
    first.checkpointer.db.close();

    const second = build();
    expect((await pendingQuestion(second.graph, config))?.stepId).toBe("order");
    const done = (await resumeRun(second.graph, config, {
      action: "submit",
      stepId: "order",
      output: { orderId: "PO-7" },
    })) as Loose;
    expect(done.status).toBe("completed");
    expect(second.quote.calls).toEqual([]);
    expect(second.notify.calls).toEqual([{ orderId: "PO-7" }]);
    expect(done.sideEffects.map((e: Loose) => e.idempotencyKey)).toEqual([key]);

    // A fork from before the offer: the effect committed under the key on the other branch is reused, so the step
    // is not offered again; its output is the one submitted.
    let before: Loose | undefined;
    for await (const s of second.graph.getStateHistory(config))
      if ((s.values as Loose).plan && !(s.values as Loose).steps?.order) before = s.config;
    const forked = (await second.graph.invoke(null, before as never)) as Loose;
    expect(forked.status).toBe("completed");
    expect(forked.facts.orderId.value).toBe("PO-7");
    expect(forked.decisions.map((d: Loose) => d.rule)).toEqual(["effect.reused"]);
    second.checkpointer.db.close();
  });
});

describe("llmPlanner gives steps to the caller only when told it does work itself", () => {
  const externalAnswer = llmAnswer([
    llmStep("quote", { tool: "quote", produces: ["price"], successSignal: "has(output.price)" }),
    llmStep("order", {
      tool: null,
      external: { instructions: INSTRUCTIONS },
      dependsOn: ["quote"],
      inputs: ["price"],
      produces: ["orderId"],
      successSignal: 'output.orderId != ""',
    }),
  ]);
  const toolAnswer = llmAnswer([
    llmStep("quote", { tool: "quote", produces: ["price"], successSignal: "has(output.price)" }),
    llmStep("order", { tool: "phoneOrder", dependsOn: ["quote"], inputs: ["price"], produces: ["orderId"] }),
  ]);
  const tools = () => [scriptedTool("quote", [{ price: 42 }]), scriptedTool("phoneOrder", [{ orderId: "PHONE-1" }])];

  it("callerDoesWork: the prompt says so and an external step the model writes is offered to the caller", async () => {
    const model = new ScriptedChatModel([externalAnswer]);
    const planner = llmPlanner({ model, callerDoesWork: true });
    const h = harness(planner, tools());
    await h.run();
    expect(String(model.received[0]![0]!.content)).toContain(
      'may be an external step: tool null, "external" set with instructions',
    );
    expect(Object.keys(LlmStepSchema.shape)).toContain("external");
    const question = await pendingQuestion(h.graph, h.config);
    expect(question).toMatchObject({ kind: "external_step", stepId: "order", reason: INSTRUCTIONS });
    expect((await h.state()).plan.steps[1]).toEqual({
      id: "order",
      goal: "goal order",
      external: { instructions: INSTRUCTIONS },
      dependsOn: ["quote"],
      inputs: ["price"],
      produces: ["orderId"],
      successSignal: 'output.orderId != ""',
    });
  });

  it("without it, the prompt does not offer external steps and one the model writes goes back as an issue", async () => {
    const model = new ScriptedChatModel([externalAnswer, toolAnswer]);
    const h = harness(llmPlanner({ model }), tools());
    const out = await h.run();
    expect(String(model.received[0]![0]!.content)).not.toContain("external step");
    expect(String(model.received[1]!.at(-1)!.content)).toContain(
      'step "order" is external, but no caller here does work itself: give each a catalogue tool (or a human task) and set external to null',
    );
    expect(out.status).toBe("completed");
    expect(out.facts.orderId.value).toBe("PHONE-1");
  });

  it("rejects a callerDoesWork that is not a boolean, naming the option", () => {
    const model = new ScriptedChatModel([]);
    expect(() => llmPlanner({ model, callerDoesWork: "yes" as never })).toThrow(
      "llmPlanner: callerDoesWork must be true or false",
    );
  });
});

describe("external steps and the effect journal", () => {
  it("the offer is the intent; a submit journaled whose checkpoint was lost settles a later offer without asking", async () => {
    const file = sqliteFile();
    const checkpointer = SqliteSaver.fromConnString(file);
    const h = setup(SIDE_EFFECTING, { checkpointer, threadId: "order-2" });
    await h.run();
    const question = (await pendingQuestion(h.graph, h.config)) as Loose;
    const key = question.context.idempotencyKey as string;
    const journal = saverAdapter(checkpointer).journal!;
    expect(await journal.lookup("order-2", key)).toEqual({
      key,
      stepId: "order",
      tool: `external:${INSTRUCTIONS}`,
      args: { price: 42 },
      attempt: 1,
      at: "2026-01-01T00:00:00.000Z",
    });
    // The submit reaches the journal; the process dies before its checkpoint is written.
    const put = checkpointer.put.bind(checkpointer);
    const putWrites = checkpointer.putWrites.bind(checkpointer);
    checkpointer.put = () => Promise.reject(new Error("killed"));
    checkpointer.putWrites = () => Promise.reject(new Error("killed"));
    const killed = await resumeRun(h.graph, h.config, {
      action: "submit",
      stepId: "order",
      output: { orderId: "PO-J" },
    }).catch((e: unknown) => e);
    expect((killed as Error).message).toBe("killed");
    checkpointer.put = put;
    checkpointer.putWrites = putWrites;
    expect((await journal.lookup("order-2", key))?.result).toEqual({ ok: true, output: { orderId: "PO-J" } });
    expect((await h.graph.getState(h.config)).values.sideEffects).toEqual([]);

    // An operator goes back to before the offer: the journal's result is the step's; nobody is asked again.
    let before: Loose | undefined;
    for await (const s of h.graph.getStateHistory(h.config))
      if ((s.values as Loose).plan && !(s.values as Loose).steps?.order) before = s.config;
    const out = (await h.graph.invoke(null, before as never)) as Loose;
    expect(out.__interrupt__).toBeUndefined();
    expect(out.status).toBe("completed");
    expect(out.facts.orderId.value).toBe("PO-J");
    expect(out.sideEffects.map((e: Loose) => e.idempotencyKey)).toEqual([key]);
    expect(out.decisions.map((d: Loose) => d.rule)).toEqual(["effect.reused"]);
    expect(out.decisions[0].reason).toContain("the effect journal holds its result");
    checkpointer.db.close();
  });
});

describe("external steps inside createAgent", () => {
  it("write_plan refuses one: the agent is the caller and does its work with its own tools", async () => {
    const quote = tool(async () => ({ price: 42 }), {
      name: "quote",
      description: "quote",
      schema: z.object({}).passthrough(),
    });
    const plan = {
      steps: [
        { id: "quote", goal: "get a quote", tool: "quote", produces: ["price"] },
        { id: "order", goal: "order the part", external: { instructions: INSTRUCTIONS }, dependsOn: ["quote"] },
      ],
    };
    const model = scriptedAgentModel([[{ name: "write_plan", args: plan }], "done"]);
    const agent = createAgent({
      model,
      tools: [quote],
      middleware: [planMiddleware({ sleep: async () => {}, now: () => 0 })],
      checkpointer: new MemorySaver(),
    });
    await agent.invoke(
      { messages: [{ role: "user", content: "order the part" }] },
      { configurable: { thread_id: "a1" } },
    );
    expect(received(model, 1).at(-1)).toContain(
      'step "order" is external; inside createAgent you do the work yourself: give the step one of your tools',
    );
  });
});

describe("external steps and a scope change", () => {
  it("a scope change answered at the question: the new version offers the step again", async () => {
    const steps = draft().steps.slice(0, 2);
    const notify = { id: "tell", goal: "tell the team", tool: "notify", dependsOn: ["order"], inputs: ["orderId"] };
    const planner = staticPlanner({
      plan: { ...draft(), steps },
      replan: () => ({ steps: [steps[1]!, notify] }),
    });
    const notifyTool = scriptedTool("notify", [{ sent: true }]);
    const h = harness(planner, [scriptedTool("quote", [{ price: 42 }]), notifyTool]);
    await h.run();
    await resumeRun(h.graph, h.config, { action: "change_scope", request: "also tell the team" });
    const question = await pendingQuestion(h.graph, h.config);
    expect(question).toMatchObject({ kind: "external_step", stepId: "order", planVersion: 2 });
    expect(rules((await h.graph.getState(h.config)).values as Loose)).toEqual([
      "order human.change-scope",
      "- scope.replan-global",
    ]);
    await resumeRun(h.graph, h.config, { action: "submit", stepId: "order", output: { orderId: "PO-3" } });
    expect(((await h.graph.getState(h.config)).values as Loose).status).toBe("completed");
    expect(notifyTool.calls).toEqual([{ orderId: "PO-3" }]);
  });
});

describe("external steps: retry_after_ms", () => {
  it("a transient error's retry_after_ms is the wait the next offer asks for; no tool's concurrency changes", async () => {
    const h = setup({}, { policy: { maxConcurrency: 4 } });
    await h.run();
    const { state, question } = await submit(h, {
      error: { message: "rate limited by the portal", class: "transient", retry_after_ms: 5000 },
    });
    expect(rules(state)).toEqual(["order transient.retry"]);
    expect(question?.context).toMatchObject({ attempt: 2, retryAfterMs: 5000 });
    expect(state.dispatch.limits).toEqual({});
    expect(h.clock.sleeps).toEqual([]);
  });
});

describe("external steps: the plan validator", () => {
  const validate = (order: Record<string, unknown>) =>
    validatePlan(draft(order), {
      tools: new Set(["quote", "notify", "phoneOrder"]),
      policy: { defaultRetry: DEFAULT_RETRY },
    });
  const issues = (order: Record<string, unknown>) => {
    const result = validate(order);
    return result.ok ? [] : result.issues.map((i) => `${i.code} ${i.path.join(".")}: ${i.message}`);
  };

  it("accepts an external step with a registered fallback tool", () => {
    expect(issues({ fallback: { tool: "phoneOrder" } })).toEqual([]);
  });

  it("refuses one that also names a tool or a human task, or whose instructions are empty or misspelt", () => {
    expect(issues({ tool: "quote" })).toEqual([
      'several_executors steps.1.tool: step "order" is done by the calling agent (external) and names tool "quote": a step has one of tool, agent, human, external',
    ]);
    expect(issues({ human: { prompt: "do it" } })).toEqual([
      'several_executors steps.1.human: step "order" is done by the calling agent (external) and names a human task: a step has one of tool, agent, human, external',
    ]);
    expect(issues({ external: { instructions: "" } })[0]).toMatch(/^schema steps\.1\.external\.instructions: /);
    expect(issues({ external: { instruction: "do it" } })).toContain(
      'unknown_field steps.1.external.instruction: step "order" external has unknown field "instruction" (did you mean "instructions"?)',
    );
  });
});

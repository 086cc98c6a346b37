/**
 * The effect journal (docs/decisions/0038-effect-journal.md): a side-effecting call whose
 * tool does not honour keys, cut before it answered — the process killed in the call (SQLite), or our
 * deadline firing while it runs (any saver) — is never called again without a settlement: the same key
 * for a tool that honours keys, the step's verify probe, or a person's answer to `effect.in-doubt`.
 */
import { tool } from "@langchain/core/tools";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { resumeRun, type PlanDraft, type PlanManagerOptions } from "../../src/index.js";
import { validatePlan } from "../../src/policy/index.js";
import { isPlanManagerError } from "../../src/errors.js";
import { planMetrics } from "../../src/views/index.js";
import { harness, type Loose } from "../helpers/graph.js";
import { llmAnswer, llmStep } from "../helpers/llm-answers.js";
import { LlmPlanAnswerSchema, LlmStepSchema, toPlanDraft } from "../../src/planners/llm-schema.js";
import { PLANNER_SYSTEM_PROMPT } from "../../src/planners/prompts.js";

const opened: SqliteSaver[] = [];
const openSaver = (file: string) => {
  const saver = SqliteSaver.fromConnString(file);
  opened.push(saver);
  return saver;
};
afterAll(() => {
  for (const saver of opened) if (saver.db.open) saver.db.close();
});
const dir = mkdtempSync(join(tmpdir(), "effect-journal-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A charge that does not dedupe by key: each call is a charge. `first` decides how the first call goes. */
function chargeTool(first?: () => Promise<unknown>) {
  const calls: { amount: unknown; key: unknown }[] = [];
  const t = tool(
    async (args: { amount: number }, config) => {
      calls.push({ amount: args.amount, key: config.configurable?.idempotencyKey });
      if (calls.length === 1 && first) return first();
      return { receipt: `r-${calls.length}` };
    },
    { name: "charge", description: "charges the card", schema: z.object({ amount: z.number() }) },
  );
  return Object.assign(t, { calls });
}

/** A read-only lookup of a charge by key: `answer` is what it says. */
function lookupTool(answer: () => unknown) {
  const keys: unknown[] = [];
  const t = tool(
    async (_args: Record<string, unknown>, config) => {
      keys.push(config.configurable?.idempotencyKey);
      return answer();
    },
    { name: "find_charge", description: "looks a charge up by key", schema: z.object({}).passthrough() },
  );
  return Object.assign(t, { keys });
}

function plan(extra: Record<string, unknown> = {}): PlanDraft {
  return {
    steps: [
      {
        id: "pay",
        goal: "Charge the card",
        tool: "charge",
        args: { amount: 10 },
        produces: ["receipt"],
        sideEffects: ["charges the card"],
        idempotent: false,
        timeoutMs: 30,
        retry: { maxAttempts: 3, backoff: "none" },
        ...extra,
      },
    ],
  };
}

type Tools = PlanManagerOptions["tools"];

function hanging() {
  const entered = deferred();
  const gate = deferred();
  return {
    entered: entered.promise,
    release: () => gate.resolve(),
    first: async () => {
      entered.resolve();
      await gate.promise;
      return { receipt: "r-1" };
    },
  };
}

/** SQLite: the process dies while the charge runs (its database connection is gone); a fresh one resumes. */
async function killInCall(draft: PlanDraft, others: Tools, options: Partial<PlanManagerOptions> = {}) {
  const file = join(dir, `kill-${files++}.sqlite`);
  const first = hanging();
  const charge = chargeTool(first.first);
  const dying = openSaver(file);
  const run = harness(draft, [charge, ...others], { checkpointer: dying, ...options })
    .run()
    .catch((e: unknown) => e);
  await first.entered;
  dying.db.close();
  first.release();
  const error = (await run) as Error;
  expect(error).toBeInstanceOf(Error);
  const saver = openSaver(file);
  // The dead process's lease on the thread: on another host it would run out; here its pid lives on.
  saver.db.prepare("DELETE FROM langgraph_replan_thread_claims").run();
  const h = harness(draft, [charge, ...others], { checkpointer: saver, ...options });
  return { h, charge, out: await h.run(null) };
}

/** Any saver: the step's deadline fires while the charge is still running. */
async function deadlineInCall(
  draft: PlanDraft,
  others: Tools,
  options: Partial<PlanManagerOptions> = {},
  checkpointer: BaseCheckpointSaver = new MemorySaver(),
) {
  const charge = chargeTool(() => new Promise(() => undefined));
  const h = harness(draft, [charge, ...others], { checkpointer, ...options });
  return { h, charge, out: await h.run() };
}

const WAYS = [
  { name: "killed in the call, resumed on SQLite", cut: killInCall },
  { name: "cut by its deadline, on MemorySaver", cut: deadlineInCall },
  {
    name: "cut by its deadline, on SQLite",
    cut: (d: PlanDraft, o: Tools, opt?: Partial<PlanManagerOptions>) =>
      deadlineInCall(d, o, opt, openSaver(join(dir, `deadline-${files++}.sqlite`))),
  },
];

const rules = (out: Loose) => out.decisions.map((d: Loose) => d.rule);

/**
 * The main branch: the charge cut, a person's retry, cut again (two intents under one key). Then a fork
 * from before the charge, asked about the call in doubt; the charge hangs on `more` further calls after that.
 */
async function forkedDoubt(more: number) {
  const calls: { amount: unknown; key: unknown }[] = [];
  const charge = Object.assign(
    tool(
      async (args: { amount: number }, config) => {
        calls.push({ amount: args.amount, key: config.configurable?.idempotencyKey });
        return calls.length <= 2 + more ? new Promise(() => undefined) : { receipt: `r-${calls.length}` };
      },
      { name: "charge", description: "charges the card", schema: z.object({ amount: z.number() }) },
    ),
    { calls },
  );
  const h = harness(plan({ timeoutMs: 100 }), [charge], { checkpointer: new MemorySaver() });
  expect([(await h.run()).status, calls.length]).toEqual(["awaiting_human", 1]);
  const second = (await resumeRun(h.graph, h.config, { action: "retry" })) as Loose;
  expect([second.status, rules(second).at(-1), calls.length]).toEqual(["awaiting_human", "effect.in-doubt", 2]);
  let before: Loose | undefined;
  for await (const snapshot of h.graph.getStateHistory(h.config)) {
    const values = snapshot.values as Loose;
    if (values.plan && !values.steps?.pay && snapshot.next.includes("executor")) before = snapshot.config;
  }
  expect(before).toBeDefined();
  const forked = (await h.graph.invoke(null, before)) as Loose;
  return { h, charge, out: forked };
}

describe.each(WAYS)("a charge whose tool does not honour keys, $name", ({ cut }) => {
  it("a tool declared to honour keys is called again under the same key, once", async () => {
    const { charge, out } = await cut(plan({ honoursIdempotencyKey: true }), []);
    expect(out.status).toBe("completed");
    expect(charge.calls.length).toBe(2);
    expect(charge.calls[1]!.key).toBe(charge.calls[0]!.key);
    expect(out.facts.receipt.value).toBe("r-2");
    expect(out.sideEffects.map((e: Loose) => e.idempotencyKey)).toEqual([charge.calls[0]!.key]);
    // The call made again is a settlement, recorded and counted.
    expect(out.decisions.map((d: Loose) => [d.rule, d.stepId, d.failureClass, d.action])).toEqual([
      ["effect.recalled", "pay", "none", "retry"],
    ]);
    expect(planMetrics(out as never).effectsRecalled).toBe(1);
  });

  it("effects.honoursKeys in the options does the same for the tools it names", async () => {
    const { charge, out } = await cut(plan(), [], { effects: { honoursKeys: ["charge"] } });
    expect(out.status).toBe("completed");
    expect(charge.calls.map((c) => c.key)).toEqual([charge.calls[0]!.key, charge.calls[0]!.key]);
  });

  it("a verify probe that says it happened settles it: one call, the probe's output recorded", async () => {
    const probe = lookupTool(() => ({ happened: true, output: { receipt: "r-found" } }));
    const { charge, out } = await cut(plan({ verify: { tool: "find_charge" } }), [probe]);
    expect(out.status).toBe("completed");
    expect(charge.calls.length).toBe(1);
    expect(probe.keys).toEqual([charge.calls[0]!.key]);
    expect(out.facts.receipt.value).toBe("r-found");
    expect(out.steps.pay.output).toEqual({ receipt: "r-found" });
    expect(rules(out)).toEqual(["effect.verified"]);
    expect(out.sideEffects).toEqual([
      { stepId: "pay", idempotencyKey: charge.calls[0]!.key, at: expect.any(String), output: { receipt: "r-found" } },
    ]);
  });

  it("a verify probe that says it did not happen lets the charge go out once more under the same key", async () => {
    const probe = lookupTool(() => ({ happened: false }));
    const { charge, out } = await cut(plan({ verify: { tool: "find_charge" } }), [probe]);
    expect(out.status).toBe("completed");
    expect(charge.calls.map((c) => c.key)).toEqual([charge.calls[0]!.key, charge.calls[0]!.key]);
    expect(out.facts.receipt.value).toBe("r-2");
    expect(probe.keys.length).toBe(1);
    // The probe's "no" is a decision; cut by our deadline, the attempt failed and the ladder retried it.
    const resumed = cut === killInCall;
    expect(rules(out)).toEqual(resumed ? ["effect.not-happened"] : ["effect.not-happened", "transient.retry"]);
    expect(out.decisions[0].reason).toBe(
      `charge: the call under key ${charge.calls[0]!.key} was cut before it answered; the verify probe says it ` +
        "did not happen, so it may go out again under the same key",
    );
    const m = planMetrics(out as never);
    expect([m.effectsVerified, m.effectsNotHappened, m.effectsRecalled, m.effectsInDoubt]).toEqual([0, 1, 0, 0]);
  });

  it("a verify probe that throws or answers garbage settles nothing: a person is asked", async () => {
    for (const answer of [
      () => {
        throw new Error("lookup down");
      },
      () => ({ happened: "yes" }),
    ]) {
      const { charge, out } = await cut(plan({ verify: { tool: "find_charge" } }), [lookupTool(answer)]);
      expect(out.status).toBe("awaiting_human");
      expect(charge.calls.length).toBe(1);
      expect(rules(out)).toEqual(["effect.in-doubt"]);
    }
  });

  it("with no verify, a person is asked with effect.in-doubt: happened, retry or abort", async () => {
    const { charge, out } = await cut(plan(), []);
    expect(charge.calls.length).toBe(1);
    expect(out.status).toBe("awaiting_human");
    const decision = out.decisions.at(-1);
    expect([decision.rule, decision.failureClass, decision.action]).toEqual(["effect.in-doubt", "unknown", "escalate"]);
    const question = out.pendingHuman;
    expect(question.kind).toBe("escalation");
    expect(question.options).toEqual(["happened", "retry", "abort"]);
    expect(question.context.inDoubt).toEqual({ key: charge.calls[0]!.key, tool: "charge" });
  });

  it("answered happened: the output is recorded as committed and the tool is not called again", async () => {
    const { h, charge } = await cut(plan(), []);
    const done = (await resumeRun(h.graph, h.config, { action: "happened", output: { receipt: "r-seen" } })) as Loose;
    expect(done.status).toBe("completed");
    expect(charge.calls.length).toBe(1);
    const state = await h.state();
    expect(state.facts.receipt.value).toBe("r-seen");
    expect(state.sideEffects.map((e: Loose) => [e.idempotencyKey, e.output])).toEqual([
      [charge.calls[0]!.key, { receipt: "r-seen" }],
    ]);
    expect(rules(state)).toEqual(["effect.in-doubt", "human.effect-happened"]);
  });

  it("answered retry: called once more under the same key", async () => {
    const { h, charge } = await cut(plan(), []);
    const done = (await resumeRun(h.graph, h.config, { action: "retry" })) as Loose;
    expect(done.status).toBe("completed");
    expect(charge.calls.map((c) => c.key)).toEqual([charge.calls[0]!.key, charge.calls[0]!.key]);
    const state = await h.state();
    expect(rules(state)).toEqual(["effect.in-doubt", "human.effect-retry"]);
    expect(state.decisions[1].reason).toBe(`a person allowed charge once more under key ${charge.calls[0]!.key}`);
    expect([planMetrics(state as never).effectsInDoubt, planMetrics(state as never).effectsRetried]).toEqual([1, 1]);
  });

  it("answered abort: the run ends aborted, the tool not called again", async () => {
    const { h, charge } = await cut(plan(), []);
    const done = (await resumeRun(h.graph, h.config, { action: "abort" })) as Loose;
    expect(done.status).toBe("aborted");
    expect(charge.calls.length).toBe(1);
  });

  it("a malformed answer is a typed error that writes nothing", async () => {
    const { h, charge } = await cut(plan(), []);
    const before = await h.graph.getState(h.config);
    for (const answer of [
      { action: "happened", output: { nothing: 1 } },
      { action: "happened", output: { receipt: 10n } },
      { action: "skip" },
    ]) {
      const error = await resumeRun(h.graph, h.config, answer as never).catch((e: unknown) => e);
      expect(isPlanManagerError(error) && error.code).toBe("invalid_resume");
    }
    expect((await h.graph.getState(h.config)).config).toEqual(before.config);
    expect(charge.calls.length).toBe(1);
  });
});

describe("the journal's other windows", () => {
  it("a person's retry whose call is cut too (the process killed in it) is asked about again, not called a third time", async () => {
    const file = join(dir, `retry-cut-${files++}.sqlite`);
    const cuts = [hanging(), hanging()];
    const calls: unknown[] = [];
    const charge = tool(
      async (_args: { amount: number }, config) => {
        calls.push(config.configurable?.idempotencyKey);
        const cut = cuts[calls.length - 1];
        return cut ? cut.first() : { receipt: `r-${calls.length}` };
      },
      { name: "charge", description: "charges the card", schema: z.object({ amount: z.number() }) },
    );
    const draft = plan({ timeoutMs: 60_000 });
    // The process dies in the charge: its database connection is gone before the call answers.
    const dieIn = async (saver: SqliteSaver, run: Promise<unknown>, cut: ReturnType<typeof hanging>) => {
      await cut.entered;
      saver.db.close();
      cut.release();
      expect(await run.catch((e: unknown) => e)).toBeInstanceOf(Error);
    };
    const fresh = () => {
      const saver = openSaver(file);
      saver.db.prepare("DELETE FROM langgraph_replan_thread_claims").run();
      return { saver, h: harness(draft, [charge], { checkpointer: saver }) };
    };
    const first = openSaver(file);
    await dieIn(first, harness(draft, [charge], { checkpointer: first }).run(), cuts[0]!);
    const second = fresh();
    expect((await second.h.run(null)).status).toBe("awaiting_human");
    await dieIn(second.saver, resumeRun(second.h.graph, second.h.config, { action: "retry" }), cuts[1]!);
    expect(calls.length).toBe(2);
    const third = fresh();
    const out = await third.h.run(null);
    expect(calls.length).toBe(2);
    expect(out.status).toBe("awaiting_human");
    expect(rules(out).at(-1)).toBe("effect.in-doubt");
    expect(out.pendingHuman.context.inDoubt).toEqual({ key: calls[0], tool: "charge" });
  });

  it("a person's retry on a fork, whose call in doubt another branch numbered higher, lets exactly one call go out", async () => {
    const { h, charge, out } = await forkedDoubt(0);
    expect([out.status, rules(out).at(-1), charge.calls.length]).toEqual(["awaiting_human", "effect.in-doubt", 2]);
    const done = (await resumeRun(h.graph, h.config, { action: "retry" })) as Loose;
    expect(done.status).toBe("completed");
    expect(charge.calls.map((c) => c.key)).toEqual(Array(3).fill(charge.calls[0]!.key));
    expect(done.facts.receipt.value).toBe("r-3");
    expect(rules(done)).toEqual(["effect.in-doubt", "human.effect-retry"]);
  });

  it("the approved call on a fork, cut too, is asked about again, not called a fourth time", async () => {
    const { h, charge } = await forkedDoubt(1);
    const out = (await resumeRun(h.graph, h.config, { action: "retry" })) as Loose;
    expect([out.status, rules(out).at(-1), charge.calls.length]).toEqual(["awaiting_human", "effect.in-doubt", 3]);
    expect((await h.state()).pendingHuman.context.inDoubt).toEqual({ key: charge.calls[0]!.key, tool: "charge" });
    const again = (await h.graph.invoke(null, h.config)) as Loose;
    expect([again.status, charge.calls.length]).toEqual(["awaiting_human", 3]);
  });

  it("a timed-out charge is settled before the ladder moves to the fallback: nothing is charged twice", async () => {
    let backups = 0;
    const counted = tool(
      async () => {
        backups += 1;
        return { receipt: "b" };
      },
      { name: "charge_backup", description: "d", schema: z.object({}).passthrough() },
    );
    const draft = plan({ retry: { maxAttempts: 1, backoff: "none" }, fallback: { tool: "charge_backup" } });
    const { charge, out } = await deadlineInCall(draft, [counted]);
    expect(charge.calls.length).toBe(1);
    expect(backups).toBe(0);
    expect(out.status).toBe("awaiting_human");
    expect(rules(out)).toEqual(["effect.in-doubt"]);
  });

  for (const [name, make] of [
    ["SQLite", () => openSaver(join(dir, `lost-${files++}.sqlite`))],
    ["MemorySaver", () => new MemorySaver()],
  ] as const) {
    it(`a result the journal holds is reused when the checkpoint after the call was lost (${name})`, async () => {
      const saver = make() as BaseCheckpointSaver;
      const charge = chargeTool();
      const h = harness(plan(), [charge], { checkpointer: saver });
      // Killed between the call's end and its checkpoint: every write after the call is lost.
      const put = saver.put.bind(saver);
      const putWrites = saver.putWrites.bind(saver);
      const dead = () => Promise.reject(new Error("killed"));
      saver.put = (...args) => (charge.calls.length > 0 ? dead() : put(...args));
      saver.putWrites = (...args) => (charge.calls.length > 0 ? dead() : putWrites(...args));
      expect(((await h.run().catch((e: unknown) => e)) as Error).message).toBe("killed");
      saver.put = put;
      saver.putWrites = putWrites;
      const out = await h.run(null);
      expect(out.status).toBe("completed");
      expect(charge.calls.length).toBe(1);
      expect(out.facts.receipt.value).toBe("r-1");
      expect(rules(out)).toEqual(["effect.reused"]);
      expect(out.sideEffects.map((e: Loose) => e.idempotencyKey)).toEqual([charge.calls[0]!.key]);
    });
  }

  it("a tool that honours keys, cut by its deadline twice, is asked about rather than called a third time", async () => {
    const keys: unknown[] = [];
    const hangs = tool(
      async (_args: { amount: number }, config) => {
        keys.push(config.configurable?.idempotencyKey);
        return new Promise(() => undefined);
      },
      { name: "charge", description: "hangs", schema: z.object({ amount: z.number() }) },
    );
    const out = await harness(plan({ honoursIdempotencyKey: true }), [hangs]).run();
    expect(out.status).toBe("awaiting_human");
    expect(keys).toEqual([keys[0], keys[0]]);
    expect(rules(out)).toEqual(["effect.recalled", "effect.in-doubt"]);
    expect(out.pendingHuman.reason).toContain("was cut by its deadline twice");
  });

  it("a timeout or a reset connection the tool itself throws is in doubt: asked, not retried", async () => {
    const thrown = [
      Object.assign(new Error("connect ETIMEDOUT 10.0.0.1:443"), { code: "ETIMEDOUT" }),
      Object.assign(new Error("socket hang up"), { code: "ECONNRESET" }),
      Object.assign(new Error("Error calling tool charge: McpError: MCP error -32001: Request timed out"), {
        name: "ToolException",
      }),
      Object.assign(new Error("Error calling tool charge: McpError: MCP error -32000: Connection closed"), {
        name: "ToolException",
      }),
      Object.assign(new Error("This operation was aborted"), { name: "AbortError" }),
      Object.assign(new Error("The operation timed out"), { name: "TimeoutError" }),
    ];
    for (const error of thrown) {
      const charge = chargeTool(async () => {
        throw error;
      });
      const out = await harness(plan(), [charge]).run();
      expect([error.message, out.status, charge.calls.length, rules(out)]).toEqual([
        error.message,
        "awaiting_human",
        1,
        ["effect.in-doubt"],
      ]);
      expect(out.pendingHuman.context.inDoubt).toEqual({ key: charge.calls[0]!.key, tool: "charge" });
    }
  });

  it("an MCP error that says the server refused the call is an answer, not a doubt", async () => {
    const charge = chargeTool(async () => {
      throw Object.assign(new Error("Error calling tool charge: McpError: MCP error -32602: Invalid params"), {
        name: "ToolException",
      });
    });
    const out = await harness(plan(), [charge]).run();
    expect(rules(out)).not.toContain("effect.in-doubt");
    expect(charge.calls.length).toBe(1);
  });

  it("a charge that threw records its error, not a doubt: the ladder retries as before", async () => {
    const { TransientError } = await import("../../src/index.js");
    const charge = chargeTool(async () => {
      throw new TransientError("busy");
    });
    const out = await harness(plan(), [charge]).run();
    expect(out.status).toBe("completed");
    expect(charge.calls.length).toBe(2);
    expect(rules(out)).toEqual(["transient.retry"]);
  });
});

describe("verify in a plan", () => {
  const tools = new Set(["charge", "find_charge", "refund"]);
  const issues = (verifyTool: string) => {
    const result = validatePlan(plan({ verify: { tool: verifyTool } }), {
      tools,
      sideEffectTools: new Set(["charge", "refund"]),
      policy: { defaultRetry: { maxAttempts: 3, backoff: "none", initialDelayMs: 0, maxDelayMs: 0 } },
    });
    return result.ok ? [] : result.issues.map((i) => [i.code, i.path.join(".")]);
  };

  it("a verify probe must be a registered tool without side effects", () => {
    expect(issues("find_charge")).toEqual([]);
    expect(issues("find_chrage")).toEqual([["invalid_verify_tool", "steps.0.verify.tool"]]);
    expect(issues("refund")).toEqual([["invalid_verify_tool", "steps.0.verify.tool"]]);
  });
});

describe("the LLM planner knows verify, and does not take honoursIdempotencyKey from a model", () => {
  it("reads verify from a strict answer and from a natural one; a model's honoursIdempotencyKey is dropped", () => {
    expect(Object.keys(LlmStepSchema.shape)).not.toContain("honoursIdempotencyKey");
    const strict = llmAnswer([
      llmStep("pay", {
        tool: "charge",
        argsJson: '{"amount":10}',
        sideEffects: ["charges the card"],
        idempotent: false,
        verify: { tool: "find_charge", argsJson: '{"since":"today"}', inputs: ["order"] },
      }),
    ]);
    // A model that claims the tool honours keys anyway: the claim is untrusted, read and dropped.
    const natural = {
      steps: [{ id: "pay", goal: "g", tool: "charge", honoursIdempotencyKey: true, verify: { tool: "find_charge" } }],
    };
    const read = (answer: unknown) => toPlanDraft(LlmPlanAnswerSchema.parse(answer)).draft.steps[0];
    expect(read(strict)).toEqual({
      id: "pay",
      goal: "goal pay",
      tool: "charge",
      args: { amount: 10 },
      sideEffects: ["charges the card"],
      idempotent: false,
      verify: { tool: "find_charge", args: { since: "today" }, inputs: ["order"] },
    });
    expect(read(natural)).toEqual({ id: "pay", goal: "g", tool: "charge", verify: { tool: "find_charge" } });
    expect(PLANNER_SYSTEM_PROMPT).not.toContain("honoursIdempotencyKey");
    expect(PLANNER_SYSTEM_PROMPT).toContain("Give a verify tool when the catalogue has a read-only one");
  });
});

describe("effects.honoursKeys", () => {
  it("names registered tools only, and must be a list of names", () => {
    const charge = chargeTool();
    for (const [effects, message] of [
      [{ honoursKeys: ["chrage"] }, 'effects.honoursKeys names tool "chrage", which is not in tools'],
      [{ honoursKeys: "charge" }, "effects.honoursKeys"],
      [{ honoursKey: ["charge"] }, "effects"],
    ] as const) {
      const error = (() => {
        try {
          harness(plan(), [charge], { effects: effects as never });
        } catch (e) {
          return e;
        }
      })();
      expect(isPlanManagerError(error) && error.code).toBe("invalid_options");
      expect((error as Error).message).toContain(message);
    }
  });
});

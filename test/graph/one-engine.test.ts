/**
 * One attempt engine: the same scripted tool failures run through the graph (`createPlanManager`
 * with a static planner) and through `createAgent` + `planMiddleware` (a scripted model that
 * writes the same plan and calls each step's tool once), and both record the same rule ids, in
 * the same order, and hand the tools the same idempotency keys.
 */
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { planMiddleware } from "../../src/middleware/index.js";
import { AssumptionBrokenError, PermanentError, TransientError } from "../../src/errors.js";
import { staticPlanner, type PlanDraft, type PolicyOptions } from "../../src/index.js";
import { RULES, type RuleId } from "../../src/policy/ladder/rules.js";
import { scriptedAgentModel, type Turn } from "../helpers/agent-model.js";
import { harness, httpError } from "../helpers/graph.js";
import { countedTool, ledger, type Ledger } from "../helpers/agent-tools.js";

/** One call's script per tool: entry n answers call n (the last repeats); an Error is thrown. */
type Script = Record<string, unknown[]>;

interface Case {
  name: string;
  plan: PlanDraft;
  script: Script;
  /** The tools with side effects (tool metadata for the graph, `sideEffectTools` for the middleware). */
  effects?: string[];
  /** Tools declared to honour idempotency keys (`effects.honoursKeys`, in both). */
  honoursKeys?: string[];
  policy?: PolicyOptions;
  /** The calls the agent's model makes, one turn each, in order: [tool, args]. Default: each step once. */
  calls?: [string, Record<string, unknown>][];
  /** The graph's planner answers a replan with this draft; the agent's model writes `revision.plan` then makes `revision.calls`. */
  replan?: (request: { affectedSteps: PlanDraft["steps"] }) => PlanDraft;
  revision?: { plan: PlanDraft; calls: [string, Record<string, unknown>][] };
  rules: string[];
}

/**
 * The replanner's own rules (stage `replanning`: a planner that threw, a draft that failed) are the
 * planner's; inside createAgent the model is the planner. Without a replan draft, the graph's planner
 * throws, and the comparison is the ladder's decisions.
 */
const ladderRules = (rules: string[]) => rules.filter((r) => RULES[r as RuleId]?.stage !== "replanning");

function tools(l: Ledger, script: Script) {
  return Object.entries(script).map(([name, entries]) =>
    countedTool(l, name, (n) => {
      const entry = entries[Math.min(n - 1, entries.length - 1)];
      if (entry instanceof Error) throw entry;
      return entry;
    }),
  );
}

const withMeta = (t: ReturnType<typeof countedTool>, effects: string[]) =>
  effects.includes(t.name) ? Object.assign(t, { metadata: { sideEffects: [t.name] } }) : t;

/** The graph: no replan function is needed to compare the ladder; a replan ends the comparison. */
async function throughGraph(c: Case, l: Ledger) {
  const replan =
    c.replan ??
    (() => {
      throw new Error("no replan in this case");
    });
  const h = harness(
    staticPlanner({ plan: c.plan, replan }),
    tools(l, c.script).map((t) => withMeta(t, c.effects ?? [])),
    { policy: c.policy ?? {}, ...(c.honoursKeys ? { effects: { honoursKeys: c.honoursKeys } } : {}) },
  );
  const out = await h.run();
  return ladderRules((out.decisions as { rule: string }[]).map((d) => d.rule));
}

async function throughAgent(c: Case, l: Ledger) {
  const calls = c.calls ?? c.plan.steps.map((s) => [s.tool!, s.args ?? {}] as [string, Record<string, unknown>]);
  const turn = ([name, args]: [string, Record<string, unknown>]): Turn => [{ name, args }];
  const revised: Turn[] = c.revision
    ? [[{ name: "write_plan", args: c.revision.plan }], ...c.revision.calls.map(turn)]
    : [];
  const turns: Turn[] = [[{ name: "write_plan", args: c.plan }], ...calls.map(turn), ...revised, "done"];
  const agent = createAgent({
    model: scriptedAgentModel(turns),
    tools: tools(l, c.script),
    middleware: [
      planMiddleware({
        sleep: async () => {},
        now: () => 0,
        sideEffectTools: c.effects ?? [],
        policy: c.policy ?? {},
        ...(c.honoursKeys ? { effects: { honoursKeys: c.honoursKeys } } : {}),
      }),
    ],
    checkpointer: new MemorySaver(),
  });
  const out = await agent.invoke(
    { messages: [{ role: "user", content: "go" }] },
    { configurable: { thread_id: "t1" } },
  );
  return ladderRules(out.decisions.map((d) => d.rule));
}

const fixed = { backoff: "fixed", initialDelayMs: 1 } as const;
const one = (
  extra: Partial<PlanDraft["steps"][number]> = {},
  assumptions: PlanDraft["assumptions"] = [],
): PlanDraft => ({
  ...(assumptions.length ? { assumptions } : {}),
  steps: [{ id: "fetch", goal: "Fetch the report", tool: "fetch", args: { id: 7 }, produces: ["report"], ...extra }],
});
const doc = [{ id: "doc_public", statement: "the document is public" }];
const report = { report: "r" };

/** The tool's own connection reset: the charge may have gone through (its outcome is unknown). */
const reset = () => Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
const charge = (extra: Partial<PlanDraft["steps"][number]> = {}): PlanDraft => ({
  steps: [{ id: "pay", goal: "Pay", tool: "charge", args: { amount: 5 }, produces: ["receipt"], ...extra }],
});

/** The booking for the right date, replacing the one for the wrong date. */
const rebook: PlanDraft = {
  steps: [{ id: "rebook", goal: "Book the hotel", tool: "book", args: { date: "05-02" }, produces: ["booking"] }],
};

const payPlan: PlanDraft = {
  assumptions: [{ id: "vendor_ok", statement: "the vendor accepts the order" }],
  steps: [
    { id: "pay", goal: "Pay", tool: "charge", args: { amount: 100, to: "ACME" }, produces: ["receipt"] },
    { id: "confirm", goal: "Confirm", tool: "confirm", args: {}, dependsOn: ["pay"], assumptions: ["vendor_ok"] },
  ],
};
/** The payment handed back under a new id (the same operation), and nothing else left to do. */
const payAgain: PlanDraft = {
  steps: [{ id: "pay_again", goal: "Pay", tool: "charge", args: { amount: 100, to: "ACME" }, produces: ["receipt"] }],
};

const CASES: Case[] = [
  {
    name: "transient, then success: retried after backoff",
    plan: one({ retry: { maxAttempts: 3, ...fixed } }),
    script: { fetch: [new TransientError("busy"), new TransientError("busy"), report] },
    rules: ["transient.retry", "transient.retry"],
  },
  {
    name: "transient until retries run out: exhausted, no fallback, escalate",
    plan: one({ retry: { maxAttempts: 2, ...fixed } }),
    script: { fetch: [new TransientError("busy")] },
    rules: ["transient.retry", "exhausted.escalate"],
  },
  {
    name: "transient until retries run out, with a fallback: the fallback runs",
    plan: one({ retry: { maxAttempts: 2, ...fixed }, fallback: { tool: "mirror" } }),
    script: { fetch: [new TransientError("busy")], mirror: [report] },
    rules: ["transient.retry", "exhausted.fallback"],
  },
  {
    name: "deterministic: the fallback tool",
    plan: one({ fallback: { tool: "mirror" } }),
    script: { fetch: [new PermanentError("retired")], mirror: [report] },
    rules: ["deterministic.fallback"],
  },
  {
    name: "deterministic, no fallback, no assumption: escalate",
    plan: one(),
    script: { fetch: [httpError(404)] },
    rules: ["deterministic.escalate"],
  },
  {
    name: "deterministic on an assumption: replan that branch",
    plan: one({ assumptions: ["doc_public"] }, doc),
    script: { fetch: [httpError(403)] },
    rules: ["deterministic.replan-local"],
  },
  {
    name: "deterministic on an optional step: skipped",
    plan: one({ optional: true }),
    script: { fetch: [httpError(404)] },
    rules: ["optional.skip"],
  },
  {
    name: "success signal unmet, retryOnUnmet: once more, then escalate",
    plan: one({ successSignal: "output.report != ''", retryOnUnmet: true }),
    script: { fetch: [{ report: "" }] },
    rules: ["unmet.retry-once", "unmet.escalate"],
  },
  {
    name: "retryOnUnmet counts unmet results, not attempts: an unmet signal after a transient failure is retried once",
    plan: one({ successSignal: "output.report != ''", retryOnUnmet: true, retry: { maxAttempts: 3, ...fixed } }),
    script: { fetch: [new TransientError("busy"), { report: "" }, report] },
    rules: ["transient.retry", "unmet.retry-once"],
  },
  {
    name: "retryOnUnmet never goes past maxAttempts: transient then unmet with maxAttempts 2 escalates",
    plan: one({ successSignal: "output.report != ''", retryOnUnmet: true, retry: { maxAttempts: 2, ...fixed } }),
    script: { fetch: [new TransientError("busy"), { report: "" }, report] },
    rules: ["transient.retry", "unmet.escalate"],
  },
  {
    name: "retryOnUnmet after a transient failure still retries an unmet signal only once",
    plan: one({ successSignal: "output.report != ''", retryOnUnmet: true, retry: { maxAttempts: 3, ...fixed } }),
    script: { fetch: [new TransientError("busy"), { report: "" }, { report: "" }] },
    rules: ["transient.retry", "unmet.retry-once", "unmet.escalate"],
  },
  {
    name: "a produced field missing (validation): unmet, on an assumption: replan",
    plan: one({ assumptions: ["doc_public"] }, doc),
    script: { fetch: [{ other: 1 }] },
    rules: ["unmet.replan-local"],
  },
  {
    name: "rate limited (429 with Retry-After): retried after the server's delay",
    plan: one({ retry: { maxAttempts: 3, ...fixed } }),
    script: { fetch: [Object.assign(httpError(429), { retryAfterMs: 50 }), report] },
    rules: ["transient.retry"],
  },
  {
    name: "timed out (TimeoutError): transient, retried",
    plan: one({ retry: { maxAttempts: 2, ...fixed } }),
    script: { fetch: [Object.assign(new Error("took too long"), { name: "TimeoutError" }), report] },
    rules: ["transient.retry"],
  },
  {
    name: "an assumption the tool reports broken: replan that branch",
    plan: one({ assumptions: ["doc_public"] }, doc),
    script: { fetch: [new AssumptionBrokenError("doc_public", "private")] },
    rules: ["assumption.replan-local"],
  },
  {
    name: "an assumption the output proves false: replan the steps resting on it",
    plan: {
      assumptions: [{ id: "in_stock", statement: "in stock", check: "facts.stock > 0" }],
      steps: [
        { id: "check", goal: "Check stock", tool: "check_stock", args: {}, produces: ["stock"] },
        { id: "reserve", goal: "Reserve", tool: "reserve", args: {}, dependsOn: ["check"], assumptions: ["in_stock"] },
      ],
    },
    script: { check_stock: [{ stock: 0 }], reserve: [{ ok: true }] },
    calls: [["check_stock", {}]],
    rules: ["assumption.replan-local"],
  },
  {
    name: "budget: the next attempt would exceed budget.maxCost",
    plan: one({ cost: 5, retry: { maxAttempts: 3, ...fixed } }),
    script: { fetch: [new TransientError("busy")] },
    policy: { budget: { maxCost: 8 } },
    rules: ["transient.retry", "budget.replan-cheaper"],
  },
  {
    name: "unknown error: escalate",
    plan: one(),
    script: { fetch: [new Error("something odd")] },
    rules: ["unknown.escalate"],
  },
  {
    name: "maxDecisions reached: a person must look",
    plan: one({ retry: { maxAttempts: 5, ...fixed } }),
    script: { fetch: [new TransientError("busy")] },
    policy: { maxDecisions: 2 },
    rules: ["transient.retry", "transient.retry", "guard.max-decisions"],
  },
  {
    name: "a precondition is false and no producer rests on an assumption: escalate",
    plan: one({ preconditions: ["facts.ready == true"] }),
    script: { fetch: [report] },
    rules: ["precondition.escalate"],
  },
  {
    name: "a replan rung with policy.maxReplans spent: escalate",
    plan: one({ assumptions: ["doc_public"] }, doc),
    script: { fetch: [new AssumptionBrokenError("doc_public", "private")] },
    policy: { maxReplans: 0 },
    rules: ["guard.max-replans"],
  },
  {
    name: "side effect: the fallback call of a side-effecting step gets the operation's key",
    plan: {
      steps: [
        {
          id: "pay",
          goal: "Pay",
          tool: "charge",
          args: { amount: 5 },
          fallback: { tool: "charge_backup", args: { amount: 5 } },
        },
      ],
    },
    effects: ["charge"],
    script: { charge: [new PermanentError("card network down")], charge_backup: [{ receipt: "R-2" }] },
    rules: ["deterministic.fallback"],
  },
  {
    name: "side effect: a side-effecting fallback tool makes the step's calls keyed",
    plan: {
      steps: [
        {
          id: "pay",
          goal: "Pay",
          tool: "quote",
          args: { amount: 5 },
          fallback: { tool: "charge_backup", args: { amount: 5 } },
        },
      ],
    },
    effects: ["charge_backup"],
    script: { quote: [new PermanentError("quote service retired")], charge_backup: [{ receipt: "R-2" }] },
    rules: ["deterministic.fallback"],
  },
  {
    name: "side effect: a replan hands a committed operation back under a new step id; it is reused",
    plan: payPlan,
    effects: ["charge"],
    script: { charge: [{ receipt: "R-1" }], confirm: [new AssumptionBrokenError("vendor_ok", "asks again")] },
    calls: [
      ["charge", { amount: 100, to: "ACME" }],
      ["confirm", {}],
    ],
    replan: () => payAgain,
    revision: { plan: payAgain, calls: [["charge", { amount: 100, to: "ACME", step: "pay_again" }]] },
    rules: ["assumption.replan-local", "effect.reused"],
  },
  {
    name: "side effect: a plan cannot drop a side-effecting tool's key by calling its step idempotent",
    plan: {
      steps: [{ id: "pay", goal: "Pay", tool: "pay", args: { amount: 5 }, idempotent: true, produces: ["receipt"] }],
    },
    effects: ["pay"],
    script: { pay: [{ receipt: "R-1" }] },
    rules: [],
  },
  {
    name: "compensation: a replan drops the committed booking; its compensate runs once under <key>:compensate",
    plan: {
      assumptions: [{ id: "dates_ok", statement: "the dates are right" }],
      steps: [
        {
          id: "book",
          goal: "Book the hotel",
          tool: "book",
          args: { date: "05-01" },
          produces: ["booking"],
          assumptions: ["dates_ok"],
          compensate: { tool: "cancel", inputs: ["booking"] },
        },
        { id: "confirm", goal: "Confirm", tool: "confirm", args: {}, dependsOn: ["book"], assumptions: ["dates_ok"] },
      ],
    },
    effects: ["book", "cancel"],
    script: {
      book: [{ booking: "B-1" }, { booking: "B-2" }],
      cancel: [{ cancelled: true }],
      confirm: [new AssumptionBrokenError("dates_ok", "the guest meant the 2nd")],
    },
    calls: [
      ["book", {}],
      ["confirm", {}],
    ],
    replan: () => rebook,
    revision: { plan: rebook, calls: [["book", { step: "rebook" }]] },
    rules: ["assumption.replan-local", "compensate.run"],
  },
  {
    name: "in doubt: a call cut by the tool's own reset, to a tool that honours keys, goes out again under the same key once",
    plan: charge(),
    effects: ["charge"],
    honoursKeys: ["charge"],
    script: { charge: [reset(), { receipt: "R-1" }] },
    rules: ["effect.recalled"],
  },
  {
    name: "in doubt: the step's verify probe says it happened; the tool is not called again",
    plan: charge({ verify: { tool: "find_charge", args: { amount: 5 } } }),
    effects: ["charge"],
    script: { charge: [reset(), { receipt: "R-2" }], find_charge: [{ happened: true, output: { receipt: "R-1" } }] },
    rules: ["effect.verified"],
  },
  {
    name: "in doubt: the verify probe says it did not happen; called again under the same key",
    plan: charge({ verify: { tool: "find_charge", args: { amount: 5 } } }),
    effects: ["charge"],
    script: { charge: [reset(), { receipt: "R-2" }], find_charge: [{ happened: false }] },
    rules: ["effect.not-happened", "transient.retry"],
  },
  {
    name: "in doubt: no keys honoured, no probe: a person is asked (effect.in-doubt), the tool is not called again",
    plan: charge({ retry: { maxAttempts: 3, ...fixed } }),
    effects: ["charge"],
    script: { charge: [reset(), { receipt: "R-2" }] },
    rules: ["effect.in-doubt"],
  },
];

describe("one attempt engine: the graph and the middleware take the same decisions", () => {
  it.each(CASES)("$name", async (c) => {
    const graphLedger = ledger();
    const agentLedger = ledger();
    const graph = await throughGraph(c, graphLedger);
    const agent = await throughAgent(c, agentLedger);
    expect({ graph, agent }).toEqual({ graph: c.rules, agent: c.rules });
    // The same operations got the same keys (both run on thread t1), and ran as often.
    expect(agentLedger.keys).toEqual(graphLedger.keys);
    expect(agentLedger.calls).toEqual(graphLedger.calls);
    // Every call of a side-effecting tool went out under a key.
    const unkeyed = (c.effects ?? []).filter((t) => (graphLedger.keys[t] ?? []).includes(undefined));
    expect(unkeyed).toEqual([]);
  });
});

/**
 * Parity: one table of guarantees, each row a scenario run through the graph (`createPlanManager`)
 * and through `createAgent` + `planMiddleware`, comparing what both faces recorded and did: the
 * decisions' rule ids, the tools' calls and the idempotency keys they were handed, the committed
 * effects' keys. A row's `agentOnly` rules are decisions about calls the model made beyond the plan
 * (the graph makes each call itself, so it never makes them); everything else must be equal.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BaseMessage } from "@langchain/core/messages";
import { Command, MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createAgent } from "langchain";
import { afterAll, describe, expect, it } from "vitest";
import { planMiddleware, type PlanMiddlewareOptions } from "../../src/middleware/index.js";
import {
  AssumptionBrokenError,
  createPlanManager,
  PermanentError,
  staticPlanner,
  TransientError,
  type PlanDraft,
  type PolicyOptions,
} from "../../src/index.js";
import { RULES, type RuleId } from "../../src/policy/ladder/rules.js";
import { lastResults, scriptedAgentModel, type Turn } from "../helpers/agent-model.js";
import { countedTool, ledger, type Ledger } from "../helpers/agent-tools.js";
import { fakeClock } from "../helpers/clock.js";
import { harness } from "../helpers/graph.js";
import { stoppingSleep } from "../helpers/stopping-sleep.js";

const dir = mkdtempSync(join(tmpdir(), "parity-"));
const opened: SqliteSaver[] = [];
afterAll(() => {
  for (const saver of opened) if (saver.db.open) saver.db.close();
  rmSync(dir, { recursive: true, force: true });
});
let files = 0;
function sqlite(file: string): SqliteSaver {
  const saver = SqliteSaver.fromConnString(file);
  opened.push(saver);
  return saver;
}

/** What one face recorded: rule ids, the tools' calls and keys, the committed effects' keys, the replies the model read. */
interface Face {
  rules: string[];
  calls: Record<string, number>;
  keys: Record<string, (string | undefined)[]>;
  effects: string[];
  /** The plan quality gate's findings, as `rule@planVersion`, in the order found. */
  findings: string[];
  /** The agent: the tool messages the model read, in order. The graph: the plan issues it refused, as `code: message`. */
  said: string[];
}

interface Row {
  name: string;
  graph: () => Promise<Face>;
  agent: () => Promise<Face>;
  /** The decisions both faces record. */
  rules: string[];
  /** Decisions the agent's face adds about the model's calls beyond the plan. */
  agentOnly?: string[];
  calls: Record<string, number>;
  /**
   * The agent's findings when its versions differ from the graph's: a plan the middleware sends back
   * before it is recorded is no version, where the graph records it and then replans. Default: the graph's.
   */
  agentFindings?: string[];
  /** Every face's replies must contain these (the graph: its refusal; the agent: the tool messages). */
  said?: { graph?: string[]; agent?: string[] };
}

/** The replanner's own rules (a planner without a replan threw) are the planner's; inside createAgent the model is it. */
const ladderRules = (rules: string[]) => rules.filter((r) => RULES[r as RuleId]?.stage !== "replanning");

const receipt = (n: number) => ({ receipt: `R-${n}` });
const payStep = (extra: Partial<PlanDraft["steps"][number]> = {}) => ({
  id: "pay",
  goal: "Pay ACME",
  tool: "pay",
  args: { to: "ACME", amount: 10 },
  produces: ["receipt"],
  ...extra,
});

interface Out {
  decisions?: { rule: string }[];
  sideEffects?: { idempotencyKey: string }[];
  quality?: { findings: { rule: string; planVersion?: number | undefined }[] } | undefined;
}

function face(l: Ledger, out: Out): Face {
  return {
    rules: ladderRules((out.decisions ?? []).map((d) => d.rule)),
    calls: l.calls,
    keys: l.keys,
    effects: (out.sideEffects ?? []).map((e) => e.idempotencyKey),
    findings: (out.quality?.findings ?? []).map((f) => `${f.rule}@${f.planVersion}`),
    said: [],
  };
}

/** The graph: a static planner hands the plan (and `replan`, the revision); side-effecting tools say so in their metadata. */
async function graphRun(
  l: Ledger,
  plan: PlanDraft,
  tools: ReturnType<typeof countedTool>[],
  effects: string[],
  more: { policy?: PolicyOptions; replan?: PlanDraft } = {},
): Promise<Face> {
  const marked = tools.map((t) =>
    effects.includes(t.name) ? Object.assign(t, { metadata: { sideEffects: [t.name] } }) : t,
  );
  const revised = more.replan;
  const planner = staticPlanner(revised ? { plan, replan: () => revised } : { plan });
  const out = await harness(planner, marked, { policy: more.policy ?? {} }).run();
  const issues = (out.outcome as { issues?: { code: string; message: string }[] } | undefined)?.issues ?? [];
  return { ...face(l, out), said: issues.map((i) => `${i.code}: ${i.message}`) };
}

/** The agent: a scripted model writes the plan and makes the turns' calls; side-effecting tools are `sideEffectTools`. */
async function agentRun(
  l: Ledger,
  turns: Turn[],
  tools: ReturnType<typeof countedTool>[],
  options: PlanMiddlewareOptions,
): Promise<Face> {
  const model = scriptedAgentModel(turns);
  const agent = createAgent({
    model,
    tools,
    middleware: [planMiddleware({ sleep: async () => {}, now: () => 0, ...options })],
    checkpointer: new MemorySaver(),
  });
  const out = await agent.invoke(
    { messages: [{ role: "user", content: "go" }] },
    { configurable: { thread_id: "t1" } },
  );
  const said = model.received.flatMap((messages: BaseMessage[]) => lastResults(messages).map((m) => String(m.content)));
  return { ...face(l, out), said };
}

/** The payment provider: each call of `pay` is a charge (it does not honour keys). */
function provider(l: Ledger) {
  return [countedTool(l, "pay", (n) => receipt(n))];
}

/**
 * A process killed inside `charge`, after the card was charged and before the result was written,
 * then a new process (a new saver on the file, a new graph or agent) taking the run up with
 * `invoke(null)`. The kill is the saver's connection closing while the charge runs, as in
 * test/graph/effect-journal.test.ts. `find_charge` answers by the key it is handed, as a payment
 * provider's lookup does: without the key it cannot find the charge.
 */
function killable() {
  const l = ledger();
  const byKey = new Map<string, unknown>();
  let release!: () => void;
  let entered!: () => void;
  const inCharge = new Promise<void>((r) => (entered = r));
  const gate = new Promise<void>((r) => (release = r));
  const tools = () => [
    countedTool(l, "charge", async (n) => {
      byKey.set(l.keys.charge!.at(-1)!, receipt(n));
      if (n === 1) {
        entered();
        await gate;
      }
      return receipt(n);
    }),
    countedTool(l, "find_charge", () => {
      const key = l.keys.find_charge!.at(-1);
      return key !== undefined && byKey.has(key) ? { happened: true, output: byKey.get(key) } : { happened: false };
    }),
  ];
  const plan: PlanDraft = { steps: [payStep({ tool: "charge", verify: { tool: "find_charge" } })] };
  /** Runs the first process on a new file until it is inside the charge, kills it, and opens the file anew. */
  async function dies(first: (saver: SqliteSaver) => Promise<unknown>): Promise<SqliteSaver> {
    const file = join(dir, `kill-${files++}.sqlite`);
    const dying = sqlite(file);
    const run = first(dying).catch((e: unknown) => e);
    await inCharge;
    dying.db.close();
    release();
    expect(await run).toBeInstanceOf(Error);
    return sqlite(file);
  }
  return { l, tools, plan, dies };
}

async function killedGraph(): Promise<Face> {
  const { l, tools, plan, dies } = killable();
  const marked = () =>
    tools().map((t) => (t.name === "charge" ? Object.assign(t, { metadata: { sideEffects: ["charge"] } }) : t));
  const saver = await dies((dying) => harness(plan, marked(), { checkpointer: dying }).run());
  // The dead process's lease on the thread: on another host it would run out; here its pid lives on.
  saver.db.prepare("DELETE FROM langgraph_replan_thread_claims").run();
  return face(l, await harness(plan, marked(), { checkpointer: saver }).run(null));
}

/** `given`: the tools themselves are given to planMiddleware, so a restarted process can probe under the key before any model call. */
function killedAgent(given = true) {
  return async (): Promise<Face> => {
    const { l, tools, plan, dies } = killable();
    const agentOf = (saver: BaseCheckpointSaver, turns: Turn[]) => {
      const own = tools();
      const options = {
        sleep: async () => {},
        now: () => 0,
        sideEffectTools: ["charge"],
        ...(given ? { tools: own } : {}),
      };
      return createAgent({
        model: scriptedAgentModel(turns),
        tools: own,
        middleware: [planMiddleware(options)],
        checkpointer: saver,
      });
    };
    const config = { configurable: { thread_id: "t1" } };
    const turns: Turn[] = [[{ name: "write_plan", args: plan }], [{ name: "charge", args: {} }], "never"];
    const saver = await dies((dying) =>
      agentOf(dying, turns).invoke({ messages: [{ role: "user", content: "go" }] }, config),
    );
    // A new process: a new saver on the file, a new agent and middleware; it resumes at the tools node.
    return face(l, await agentOf(saver, ["paid"]).invoke(null, config));
  };
}

/** A parcel sent by courier (dear) or by post (cheap). */
const parcels = (l: Ledger) => [
  countedTool(l, "courier", () => ({ sent: "courier" })),
  countedTool(l, "post", () => ({ sent: "post" })),
];
const dear: PlanDraft = { steps: [{ id: "send", goal: "Send the parcel", tool: "courier", cost: 5 }] };
const cheap: PlanDraft = { steps: [{ id: "send_post", goal: "Send the parcel by post", tool: "post", cost: 0.4 }] };

/** A lookup whose first call never answers: only the step's deadline ends it. */
const hangsOnce = {
  step: {
    id: "look",
    goal: "Look it up",
    tool: "lookup",
    produces: ["found"],
    timeoutMs: 20,
    retry: { maxAttempts: 2, backoff: "none" as const, initialDelayMs: 0, maxDelayMs: 0 },
  },
  tools: (l: Ledger) => [
    countedTool(l, "lookup", async (n) => {
      if (n === 1) await new Promise(() => undefined);
      return { found: n };
    }),
  ],
};

/**
 * A rate service that is always busy, and a user who stops the run during every retry's backoff and
 * takes it up with `invoke(null)`, five times: the attempts the stopped runs made still count.
 */
const busyRate = (extra: Partial<PlanDraft["steps"][number]> = {}) => ({
  step: { id: "rate", goal: "Fetch the rate", tool: "fetch_rate", produces: ["rate"], cost: 2, ...extra },
  tools: (l: Ledger) => [
    countedTool(l, "fetch_rate", () => {
      throw new TransientError("rate service busy");
    }),
    countedTool(l, "cached_rate", () => ({ rate: 1.08 })),
  ],
});
const STOPS = 5;
/** The revision a run over its budget gets: yesterday's rate, at no cost. */
const cachedRate: PlanDraft = { steps: [{ id: "cached", goal: "Read yesterday's rate", tool: "cached_rate" }] };

function stoppedGraph(rate: ReturnType<typeof busyRate>, policy: PolicyOptions = {}) {
  return async (): Promise<Face> => {
    const l = ledger();
    const { sleep, next } = stoppingSleep(l);
    const planner = staticPlanner({ plan: { steps: [rate.step] }, replan: () => cachedRate });
    const manager = createPlanManager({ tools: rate.tools(l), planner, policy, clock: { now: () => 0, sleep } });
    const graph = manager.compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "t1" } };
    for (let run = 0; run < STOPS; run += 1)
      await graph.invoke(run === 0 ? { goal: "g" } : null, { ...config, signal: next() }).catch(() => undefined);
    return face(l, (await graph.getState(config)).values as Out);
  };
}

function stoppedAgent(rate: ReturnType<typeof busyRate>, policy: PolicyOptions = {}) {
  return async (): Promise<Face> => {
    const l = ledger();
    const { sleep, next } = stoppingSleep(l);
    const turns: Turn[] = [[{ name: "write_plan", args: { steps: [rate.step] } }], [{ name: "fetch_rate", args: {} }]];
    const revised: Turn[] = [[{ name: "write_plan", args: cachedRate }], [{ name: "cached_rate", args: {} }]];
    const agent = createAgent({
      model: scriptedAgentModel([...turns, ...(policy.budget ? revised : []), "done"]),
      tools: rate.tools(l),
      middleware: [planMiddleware({ sleep, now: () => 0, policy })],
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "t1" } };
    const start = { messages: [{ role: "user", content: "go" }] };
    for (let run = 0; run < STOPS; run += 1)
      await agent.invoke(run === 0 ? start : null, { ...config, signal: next() }).catch(() => undefined);
    return face(l, (await agent.graph.getState(config)).values as Out);
  };
}

const ROWS: Row[] = [
  {
    name: "two identical side-effecting calls in one model turn: one effect; the second reuses it (effect.reused)",
    graph: () => {
      const l = ledger();
      return graphRun(l, { steps: [payStep()] }, provider(l), ["pay"]);
    },
    agent: () => {
      const l = ledger();
      const call = { name: "pay", args: { to: "ACME", amount: 10 } };
      const turns: Turn[] = [[{ name: "write_plan", args: { steps: [payStep()] } }], [call, call], "done"];
      return agentRun(l, turns, provider(l), { sideEffectTools: ["pay"] });
    },
    rules: [],
    agentOnly: ["effect.reused"],
    calls: { pay: 1 },
  },
  {
    name: "two different calls to one side-effecting step in one model turn: the second is refused, never run",
    graph: () => {
      const l = ledger();
      return graphRun(l, { steps: [payStep()] }, provider(l), ["pay"]);
    },
    agent: () => {
      const l = ledger();
      // The step leaves its arguments to the model: each call would be a different operation.
      const { args: _args, ...open } = payStep();
      const turns: Turn[] = [
        [{ name: "write_plan", args: { steps: [open] } }],
        [
          { name: "pay", args: { to: "ACME", amount: 10 } },
          { name: "pay", args: { to: "ACME", amount: 9999 } },
        ],
        "done",
      ];
      return agentRun(l, turns, provider(l), { sideEffectTools: ["pay"] });
    },
    rules: [],
    calls: { pay: 1 },
    said: { agent: ['step "pay" is already being called in this model turn'] },
  },
  {
    name: "a plan whose verify probe is a side-effecting tool is refused (invalid_verify_tool)",
    graph: () => {
      const l = ledger();
      return graphRun(l, { steps: [payStep({ verify: { tool: "pay" } })] }, provider(l), ["pay"]);
    },
    agent: () => {
      const l = ledger();
      const turns: Turn[] = [[{ name: "write_plan", args: { steps: [payStep({ verify: { tool: "pay" } })] } }], "stop"];
      return agentRun(l, turns, provider(l), { sideEffectTools: ["pay"] });
    },
    rules: [],
    calls: {},
    said: {
      graph: [
        'invalid_verify_tool: step "pay" verify names tool "pay", which declares side effects; a verify probe must only read (give a read-only lookup tool)',
      ],
      agent: [
        'step "pay" verify names tool "pay", which declares side effects; a verify probe must only read (give a read-only lookup tool)',
      ],
    },
  },
  {
    name: "a process killed inside a side-effecting call, resumed with invoke(null): the verify probe gets the key and settles it (effect.verified)",
    graph: killedGraph,
    agent: killedAgent(),
    rules: ["effect.verified"],
    calls: { charge: 1, find_charge: 1 },
  },
  {
    name: "a plan over budget.maxCost is sent back (budget.replan-cheaper); a model that calls its step anyway cannot run it",
    graph: () => {
      const l = ledger();
      return graphRun(l, dear, parcels(l), [], { policy: { budget: { maxCost: 1 } }, replan: cheap });
    },
    agent: () => {
      const l = ledger();
      const turns: Turn[] = [
        [{ name: "write_plan", args: dear }],
        // The model ignores the request for a cheaper plan and sends by courier.
        [{ name: "courier", args: {} }],
        [{ name: "write_plan", args: cheap }],
        [{ name: "post", args: {} }],
        "sent",
      ];
      return agentRun(l, turns, parcels(l), { policy: { budget: { maxCost: 1 } } });
    },
    rules: ["budget.replan-cheaper"],
    calls: { post: 1 },
    // The graph gates the dear version 1 and the cheap version 2; inside createAgent the cheap plan is version 1.
    agentFindings: ["quality.structure@1"],
    said: { agent: ['Not run: courier is step "send" of a plan that was not recorded'] },
  },
  {
    name: "a call that hangs past its step's timeoutMs is cut by the one deadline, retried, and succeeds: the same rule on both faces",
    graph: () => {
      const l = ledger();
      return graphRun(l, { steps: [hangsOnce.step] }, hangsOnce.tools(l), []);
    },
    agent: () => {
      const l = ledger();
      const turns: Turn[] = [
        [{ name: "write_plan", args: { steps: [hangsOnce.step] } }],
        [{ name: "lookup", args: {} }],
        "done",
      ];
      return agentRun(l, turns, hangsOnce.tools(l), {});
    },
    rules: ["transient.retry"],
    calls: { lookup: 2 },
  },
  {
    name: "a run stopped during every retry's backoff and resumed with invoke(null): the stopped attempts count, retry.maxAttempts holds",
    graph: stoppedGraph(busyRate({ retry: { maxAttempts: 3 } })),
    agent: stoppedAgent(busyRate({ retry: { maxAttempts: 3 } })),
    rules: ["transient.retry", "transient.retry", "exhausted.escalate"],
    calls: { fetch_rate: 3 },
  },
  {
    name: "a run stopped during every retry's backoff and resumed with invoke(null): the stopped attempts' charge counts, budget.maxCost holds",
    graph: stoppedGraph(busyRate({ retry: { maxAttempts: 5 } }), { budget: { maxCost: 5 } }),
    agent: stoppedAgent(busyRate({ retry: { maxAttempts: 5 } }), { budget: { maxCost: 5 } }),
    rules: ["transient.retry", "transient.retry", "budget.replan-cheaper"],
    calls: { fetch_rate: 2, cached_rate: 1 },
  },
];

describe("parity: the graph and createAgent + planMiddleware keep the same guarantees", () => {
  it.each(ROWS)("$name", async (row) => {
    const graph = await row.graph();
    const agent = await row.agent();
    expect({ graph: graph.rules, agent: agent.rules }).toEqual({
      graph: row.rules,
      agent: [...row.rules, ...(row.agentOnly ?? [])],
    });
    expect({ graph: graph.calls, agent: agent.calls }).toEqual({ graph: row.calls, agent: row.calls });
    // The same operations went out under the same keys, and committed under them.
    expect(agent.keys).toEqual(graph.keys);
    expect(agent.effects).toEqual(graph.effects);
    // The quality gate read the same plan versions the same way.
    expect(agent.findings).toEqual(row.agentFindings ?? graph.findings);
    for (const [who, f] of [["graph", graph] as const, ["agent", agent] as const]) {
      const joined = f.said.join("\n");
      for (const text of row.said?.[who] ?? []) expect(joined, `${who} said`).toContain(text);
    }
  });
});

describe("a restarted agent whose verify probe the middleware cannot hand the key", () => {
  it("does not run the probe without it: a person is asked (effect.in-doubt), the card is charged once", async () => {
    const agent = await killedAgent(false)();
    expect([agent.rules, agent.calls]).toEqual([["effect.in-doubt"], { charge: 1 }]);
  });
});

describe("side-by-side calls of one model turn inside createAgent", () => {
  it("two steps of one operation, called side by side: one charge; the second step is answered from it (effect.reused)", async () => {
    const l = ledger();
    // Both steps leave their arguments to the model, which gives both the same ones.
    const open = (id: string) => ({ id, goal: "Pay ACME", tool: "pay", produces: ["receipt"] });
    const call = (step: string) => ({ name: "pay", args: { to: "ACME", amount: 10, step } });
    const turns: Turn[] = [
      [{ name: "write_plan", args: { steps: [open("pay1"), open("pay2")] } }],
      [call("pay1"), call("pay2")],
      "done",
    ];
    const agent = await agentRun(l, turns, provider(l), { sideEffectTools: ["pay"] });
    // One committed effect, recorded once (a reused operation adds no record, as in the graph).
    expect([agent.calls, agent.rules, agent.effects.length]).toEqual([{ pay: 1 }, ["effect.reused"], 1]);
  });
});

/**
 * Undos on both faces: one runner (runtime/undo.ts), so the same questions, answers and calls. A hotel
 * is booked on the wrong date; the confirmation says so; the revision books another date, and the
 * first booking is released (`release_hotel`), or the run is aborted and the booking released.
 */
const release = { tool: "release_hotel", inputs: ["hotel"] };
const hotelStep = (id: string, date: string, extra: Partial<PlanDraft["steps"][number]> = {}) => ({
  id,
  goal: "Book the hotel",
  tool: "book_hotel",
  args: { date },
  produces: ["hotel"],
  ...extra,
});
const datedTrip: PlanDraft = {
  assumptions: [{ id: "dates_ok", statement: "the dates are right" }],
  steps: [
    hotelStep("hotel", "05-01", {
      assumptions: ["dates_ok"],
      compensate: release,
      retry: { maxAttempts: 2, backoff: "none" },
    }),
    { id: "confirm", goal: "Confirm", tool: "confirm", dependsOn: ["hotel"], assumptions: ["dates_ok"] },
  ],
};
const redatedTrip: PlanDraft = {
  steps: [hotelStep("hotel2", "05-02"), { id: "confirm2", goal: "Confirm", tool: "confirm", dependsOn: ["hotel2"] }],
};
const undoEffects = ["book_hotel", "release_hotel", "charge"];

function trip(l: Ledger, releaseBody: (n: number) => unknown) {
  return [
    countedTool(l, "book_hotel", (_n, args) => ({ hotel: `H-${String(args.date)}` })),
    countedTool(l, "release_hotel", (n) => releaseBody(n)),
    countedTool(l, "confirm", (n) => {
      if (n === 1) throw new AssumptionBrokenError("dates_ok", "the dates were wrong");
      return { ok: true };
    }),
    countedTool(l, "charge", () => {
      throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    }),
  ];
}
const markEffects = (tools: ReturnType<typeof countedTool>[]) =>
  tools.map((t) => (undoEffects.includes(t.name) ? Object.assign(t, { metadata: { sideEffects: [t.name] } }) : t));

/** The graph's run, then a person's answers, one per question. */
async function graphAnswered(
  l: Ledger,
  tools: ReturnType<typeof countedTool>[],
  plan: PlanDraft,
  answers: unknown[],
  checkpointer?: BaseCheckpointSaver,
): Promise<Face> {
  const planner = staticPlanner({ plan, replan: () => redatedTrip });
  const h = harness(planner, markEffects(tools), checkpointer ? { checkpointer } : {});
  let out = await h.run(checkpointer ? null : undefined);
  for (const answer of answers) out = await h.run(new Command({ resume: answer }));
  return face(l, out);
}

const tripTurns: Turn[] = [
  [{ name: "write_plan", args: datedTrip }],
  [{ name: "book_hotel", args: {} }],
  [{ name: "confirm", args: {} }],
  [{ name: "write_plan", args: redatedTrip }],
  [{ name: "book_hotel", args: {} }],
  [{ name: "confirm", args: {} }],
  "booked",
];

function tripAgent(turns: Turn[], tools: ReturnType<typeof countedTool>[], saver: BaseCheckpointSaver) {
  return createAgent({
    model: scriptedAgentModel(turns),
    tools,
    middleware: [planMiddleware({ sleep: async () => {}, now: () => 0, sideEffectTools: undoEffects })],
    checkpointer: saver,
  });
}

/** The agent's run, then a person's answers, one per question. */
async function agentAnswered(l: Ledger, turns: Turn[], tools: ReturnType<typeof countedTool>[], answers: unknown[]) {
  const agent = tripAgent(turns, tools, new MemorySaver());
  const config = { configurable: { thread_id: "t1" } };
  let out = await agent.invoke({ messages: [{ role: "user", content: "go" }] }, config);
  for (const answer of answers) out = await agent.invoke(new Command({ resume: answer }), config);
  return face(l, out);
}

const failingRelease = () => {
  throw new PermanentError("the hotel's system is down");
};
const abortPlan: PlanDraft = {
  steps: [
    hotelStep("hotel", "05-01", { compensate: release }),
    { id: "pay", goal: "Pay", tool: "charge", args: { amount: 40 }, dependsOn: ["hotel"] },
  ],
};

/** Each face killed inside the release, after it happened; a new process resumes with `invoke(null)`. */
function killedInRelease() {
  const l = ledger();
  let entered!: () => void;
  let freed!: () => void;
  const inRelease = new Promise<void>((r) => (entered = r));
  const gate = new Promise<void>((r) => (freed = r));
  const tools = () =>
    trip(l, async (n) => {
      if (n === 1) {
        entered();
        await gate;
      }
      return { released: true };
    });
  async function dies(first: (saver: SqliteSaver) => Promise<unknown>): Promise<SqliteSaver> {
    const file = join(dir, `kill-${files++}.sqlite`);
    const dying = sqlite(file);
    const run = first(dying).catch((e: unknown) => e);
    await inRelease;
    dying.db.close();
    freed();
    expect(await run).toBeInstanceOf(Error);
    return sqlite(file);
  }
  return { l, tools, dies };
}
const happened = { action: "happened", output: { released: true } };

async function killedUndoGraph(): Promise<Face> {
  const { l, tools, dies } = killedInRelease();
  const planner = staticPlanner({ plan: datedTrip, replan: () => redatedTrip });
  const saver = await dies((dying) => harness(planner, markEffects(tools()), { checkpointer: dying }).run());
  saver.db.prepare("DELETE FROM langgraph_replan_thread_claims").run();
  return graphAnswered(l, tools(), datedTrip, [happened], saver);
}

async function killedUndoAgent(): Promise<Face> {
  const { l, tools, dies } = killedInRelease();
  const config = { configurable: { thread_id: "t1" } };
  const start = { messages: [{ role: "user", content: "go" }] };
  const saver = await dies((dying) => tripAgent(tripTurns, tools(), dying).invoke(start, config));
  // A new process: a new saver on the file, a new agent and middleware; it resumes in the hook running the undo.
  const second = tripAgent(tripTurns.slice(4), tools(), saver);
  await second.invoke(null, config);
  return face(l, await second.invoke(new Command({ resume: happened }), config));
}

const UNDO_ROWS: Row[] = [
  {
    name: "an undo that fails asks a person (compensate.failed) on both faces; skip leaves the effect standing",
    graph: () => {
      const l = ledger();
      return graphAnswered(l, trip(l, failingRelease), datedTrip, [{ action: "skip" }]);
    },
    agent: () => {
      const l = ledger();
      return agentAnswered(l, tripTurns, trip(l, failingRelease), [{ action: "skip" }]);
    },
    rules: ["assumption.replan-local", "compensate.failed", "human.skip"],
    calls: { book_hotel: 2, confirm: 2, release_hotel: 2 },
  },
  {
    name: "a run that ends aborted undoes its committed effects on both faces",
    graph: () => {
      const l = ledger();
      return graphAnswered(
        l,
        trip(l, () => ({ released: true })),
        abortPlan,
        [{ action: "abort" }],
      );
    },
    agent: () => {
      const l = ledger();
      const turns: Turn[] = [
        [{ name: "write_plan", args: abortPlan }],
        [{ name: "book_hotel", args: {} }],
        [{ name: "charge", args: {} }],
        "never reached",
      ];
      return agentAnswered(
        l,
        turns,
        trip(l, () => ({ released: true })),
        [{ action: "abort" }],
      );
    },
    rules: ["effect.in-doubt", "human.abort", "compensate.run"],
    calls: { book_hotel: 1, charge: 1, release_hotel: 1 },
  },
  {
    name: "a process killed inside an undo, resumed with invoke(null): asked as in doubt (compensate.failed), recorded once, the revision stands",
    graph: killedUndoGraph,
    agent: killedUndoAgent,
    rules: ["assumption.replan-local", "compensate.failed", "human.effect-happened"],
    calls: { book_hotel: 2, confirm: 2, release_hotel: 1 },
  },
];

describe("parity of undos: one runner behind both faces", () => {
  it.each(UNDO_ROWS)("$name", async (row) => {
    const graph = await row.graph();
    const agent = await row.agent();
    expect({ graph: graph.rules, agent: agent.rules }).toEqual({ graph: row.rules, agent: row.rules });
    expect({ graph: graph.calls, agent: agent.calls }).toEqual({ graph: row.calls, agent: row.calls });
    expect(agent.keys).toEqual(graph.keys);
    expect(agent.effects).toEqual(graph.effects);
  });
});

/**
 * Guarantees the graph gives before a version's first step and before each step's call: the plan
 * quality gate, evidence freshness and assumption watches. Both faces run on one fake clock that a
 * tool moves on; a person's answer is given to both alike.
 */
interface Scenario {
  plan: PlanDraft;
  replan?: PlanDraft;
  tools: (l: Ledger, clock: ReturnType<typeof fakeClock>) => ReturnType<typeof countedTool>[];
  effects?: string[];
  /** The model's turns inside createAgent after it wrote `plan`; "revise": it writes `replan`. */
  turns: Turn[];
  /** Answers to the run's questions, in order, given to both faces. */
  answers?: unknown[];
}

async function graphFace(s: Scenario): Promise<Face> {
  const l = ledger();
  const clock = fakeClock();
  const marked = s
    .tools(l, clock)
    .map((t) => (s.effects?.includes(t.name) ? Object.assign(t, { metadata: { sideEffects: [t.name] } }) : t));
  const revised = s.replan;
  const planner = staticPlanner(revised ? { plan: s.plan, replan: () => revised } : { plan: s.plan });
  const graph = createPlanManager({ tools: marked, planner, clock }).compile({ checkpointer: new MemorySaver() });
  const config = { configurable: { thread_id: "t1" } };
  await graph.invoke({ goal: "go" }, config);
  for (const answer of s.answers ?? []) await graph.invoke(new Command({ resume: answer }), config);
  return face(l, (await graph.getState(config)).values as Out);
}

async function agentFace(s: Scenario): Promise<Face> {
  const l = ledger();
  const clock = fakeClock();
  const write = (args: PlanDraft | undefined): Turn => [{ name: "write_plan", args: args ?? {} }];
  const turns = [write(s.plan), ...s.turns.map((t) => (t === "revise" ? write(s.replan) : t))];
  const model = scriptedAgentModel(turns);
  const agent = createAgent({
    model,
    tools: s.tools(l, clock),
    middleware: [planMiddleware({ sleep: async () => {}, now: clock.now, sideEffectTools: s.effects ?? [] })],
    checkpointer: new MemorySaver(),
  });
  const config = { configurable: { thread_id: "t1" } };
  let out = await agent.invoke({ messages: [{ role: "user", content: "go" }] }, config);
  for (const answer of s.answers ?? []) out = await agent.invoke(new Command({ resume: answer }), config);
  const said = model.received.flatMap((messages: BaseMessage[]) => lastResults(messages).map((m) => String(m.content)));
  return { ...face(l, out as Out), said };
}

const approve = { action: "approve" };
/** Reads a price that goes up by one each time; `wait` moves the clock on 5 s. */
const market = (l: Ledger, clock: ReturnType<typeof fakeClock>) => [
  countedTool(l, "quote", (n) => ({ price: 100 + n })),
  countedTool(l, "wait", () => {
    clock.advance(5000);
    return { waited: true };
  }),
  countedTool(l, "order", () => ({ ordered: true })),
];
const fetchStep = { id: "fetch", goal: "Read the price", tool: "quote", produces: ["price"] };
const pauseStep = {
  id: "pause",
  goal: "Wait for the market",
  tool: "wait",
  dependsOn: ["fetch"],
  successSignal: "output.waited == true",
};
const buyStep = {
  id: "buy",
  goal: "Order at the price",
  tool: "order",
  dependsOn: ["pause"],
  inputs: ["price"],
  freshFor: { price: 1000 },
  successSignal: "output.ordered == true",
};

type GateRow = Omit<Row, "graph" | "agent"> & { scenario: Scenario; findings: string[] };

const GATE_ROWS: GateRow[] = [
  {
    name: "the quality gate holds a plan with a too-wide estimate for a person (quality.hold), then runs it",
    scenario: {
      plan: {
        steps: [{ ...fetchStep, assumptions: ["cheap"] }],
        assumptions: [{ id: "cheap", statement: "the price is low", estimate: { low: 1, high: 1000 } }],
      },
      tools: market,
      turns: [[{ name: "quote", args: {} }], "done"],
      answers: [approve],
    },
    rules: ["quality.hold", "human.approve-plan"],
    calls: { quote: 1 },
    findings: ["quality.estimate-bounds@1"],
  },
  {
    name: "an input older than its step's freshFor: its producer runs again first (evidence.stale), then the step",
    scenario: {
      plan: { steps: [fetchStep, pauseStep, buyStep] },
      tools: market,
      turns: [
        [{ name: "quote", args: {} }],
        [{ name: "wait", args: {} }],
        [{ name: "order", args: {} }],
        [{ name: "quote", args: {} }],
        [{ name: "order", args: {} }],
        "done",
      ],
    },
    rules: ["evidence.stale"],
    calls: { quote: 2, wait: 1, order: 1 },
    findings: [],
    said: { agent: ['"fetch" runs again first. Call step "fetch" (quote) again first, then step "buy"'] },
  },
  {
    name: "a stale input whose producer has side effects is not read again: a person is asked (evidence.stale-escalate)",
    scenario: {
      plan: { steps: [{ ...fetchStep, successSignal: "output.price > 0" }, pauseStep, buyStep] },
      tools: market,
      effects: ["quote"],
      turns: [[{ name: "quote", args: {} }], [{ name: "wait", args: {} }], [{ name: "order", args: {} }], "never"],
    },
    rules: ["evidence.stale-escalate"],
    calls: { quote: 1, wait: 1 },
    findings: [],
  },
  {
    name: "a watched assumption drifts before the step resting on it starts (assumption.drift): a revision, never the step",
    scenario: {
      plan: {
        steps: [
          { id: "reserve", goal: "Reserve", tool: "reserve", assumptions: ["in_stock"], successSignal: "output.ok" },
        ],
        assumptions: [
          { id: "in_stock", statement: "the part is in stock", watch: { tool: "stock", check: "output.available" } },
        ],
      },
      replan: { steps: [{ id: "backorder", goal: "Backorder", tool: "backorder", successSignal: "output.ok" }] },
      tools: (l) => [
        countedTool(l, "stock", () => ({ available: false })),
        countedTool(l, "reserve", () => ({ ok: true })),
        countedTool(l, "backorder", () => ({ ok: true })),
      ],
      turns: [[{ name: "reserve", args: {} }], "revise", [{ name: "backorder", args: {} }], "done"],
    },
    rules: ["assumption.drift"],
    calls: { stock: 1, backorder: 1 },
    findings: [],
    said: { agent: ['Not run: Step "reserve" did not go as planned: assumption "in_stock"'] },
  },
];
const GATES = GATE_ROWS.map((g) => ({ ...g, graph: () => graphFace(g.scenario), agent: () => agentFace(g.scenario) }));

describe("parity before a version's first step and before each step's call", () => {
  it.each(GATES)("$name", async (row) => {
    const graph = await row.graph();
    const agent = await row.agent();
    expect({ graph: graph.rules, agent: agent.rules }).toEqual({ graph: row.rules, agent: row.rules });
    expect({ graph: graph.calls, agent: agent.calls }).toEqual({ graph: row.calls, agent: row.calls });
    expect({ graph: graph.findings, agent: agent.findings }).toEqual({ graph: row.findings, agent: row.findings });
    expect(agent.keys).toEqual(graph.keys);
    const joined = agent.said.join("\n");
    for (const text of row.said?.agent ?? []) expect(joined).toContain(text);
  });
});

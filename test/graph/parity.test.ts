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
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createAgent } from "langchain";
import { afterAll, describe, expect, it } from "vitest";
import { planMiddleware, type PlanMiddlewareOptions } from "../../src/middleware/index.js";
import { staticPlanner, type PlanDraft, type PolicyOptions } from "../../src/index.js";
import { RULES, type RuleId } from "../../src/policy/ladder/rules.js";
import { lastResults, scriptedAgentModel, type Turn } from "../helpers/agent-model.js";
import { countedTool, ledger, type Ledger } from "../helpers/agent-tools.js";
import { harness } from "../helpers/graph.js";

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

function face(l: Ledger, out: { decisions?: { rule: string }[]; sideEffects?: { idempotencyKey: string }[] }): Face {
  return {
    rules: ladderRules((out.decisions ?? []).map((d) => d.rule)),
    calls: l.calls,
    keys: l.keys,
    effects: (out.sideEffects ?? []).map((e) => e.idempotencyKey),
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

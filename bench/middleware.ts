/**
 * The governance fault grid (bench/governance.ts: explicit/implicit × transient/permanent,
 * wrong root cause, missing resource, new evidence) run through LangChain's `createAgent` with a
 * scripted model that behaves like a typical LLM agent: it works through its steps one tool call
 * per turn, takes a returned value as success, repeats a call that errored (three tries, then
 * gives up), and ignores a false assumption unless a tool message tells it — then it rewrites
 * its plan with the route that works (what the graph's scripted planner knows). Three set-ups:
 *  (a) no middleware; (b) todoListMiddleware + toolRetryMiddleware; (c) planMiddleware.
 */
import type { BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent, todoListMiddleware, toolRetryMiddleware } from "langchain";
import { planMiddleware } from "../src/middleware/index.js";
import type { Step } from "../src/index.js";
import { lastResults, scriptedAgentModel, type Reply } from "../test/helpers/agent-model.js";
import { makeWorld, repair, worldPlan, worldTools, type Cell, type Ledger, type World } from "./governance.js";
import { fmt, type Table } from "./lib.js";

type Setup = "none" | "todo+retry" | "plan";
const CELLS: Cell[] = [
  "explicit-transient",
  "explicit-permanent",
  "implicit-transient",
  "implicit-permanent",
  "wrong-root-cause",
  "missing-resource",
  "new-evidence",
  "lost-ack",
];
const TRIES = 3;

interface Outcome {
  recovered: boolean;
  attempts: number;
  modelCalls: number;
  reexecuted: number;
}

/** The typical agent's memory of one run: its steps, what it believes done, and what each step returned. */
interface Mind {
  steps: Step[];
  done: Set<string>;
  ok: Map<string, boolean>;
  tries: Map<string, number>;
  told: boolean;
  started: boolean;
  gaveUp: boolean;
}

function typicalAgent(w: World, setup: Setup) {
  const mind: Mind = {
    steps: worldPlan(w).steps,
    done: new Set(),
    ok: new Map(),
    tries: new Map(),
    told: false,
    started: false,
    gaveUp: false,
  };
  const turn = (messages: BaseMessage[]): Reply => {
    read(mind, messages);
    if (mind.gaveUp) return "I could not finish: a step keeps failing.";
    if (!mind.started) {
      mind.started = true;
      if (setup === "plan") return [{ name: "write_plan", args: { ...worldPlan(w), steps: mind.steps } }];
      if (setup === "todo+retry") return [{ name: "write_todos", args: { todos: todos(mind) } }];
    }
    if (mind.told) {
      mind.told = false;
      mind.steps = repaired(w, mind.steps);
      return [{ name: "write_plan", args: { steps: mind.steps } }];
    }
    const next = mind.steps.find((s) => !mind.done.has(s.id) && (s.dependsOn ?? []).every((d) => mind.done.has(d)));
    if (!next) return "Done.";
    const call = { name: next.tool!, args: { step: next.id } };
    return setup === "todo+retry" ? [call, { name: "write_todos", args: { todos: todos(mind) } }] : [call];
  };
  return { mind, model: scriptedAgentModel(Array.from({ length: 400 }, () => turn)) };
}

/** What the last tool messages say, as a typical agent reads them. */
function read(mind: Mind, messages: BaseMessage[]): void {
  for (const r of lastResults(messages)) {
    const text = typeof r.content === "string" ? r.content : JSON.stringify(r.content);
    if (r.name === "write_plan" || r.name === "write_todos") continue;
    const stepId = stepOf(mind, r.name ?? "");
    if (!stepId) continue;
    if (text.includes("call write_plan with the whole plan") || text.includes("which is false: revise the plan")) {
      mind.told = true;
      continue;
    }
    if (r.status === "error") {
      const n = (mind.tries.get(stepId) ?? 0) + 1;
      mind.tries.set(stepId, n);
      if (n >= TRIES) mind.gaveUp = true;
      continue;
    }
    mind.done.add(stepId);
    const output = parse(text);
    mind.ok.set(stepId, output.ok === true && output.evidence_ok !== false);
  }
}

function stepOf(mind: Mind, tool: string): string | undefined {
  return mind.steps.find((s) => s.tool === tool && !mind.done.has(s.id))?.id;
}

function parse(text: string): Record<string, unknown> {
  const json = text.slice(text.indexOf("{"));
  try {
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function todos(mind: Mind) {
  return mind.steps.map((s) => ({ content: s.goal, status: mind.done.has(s.id) ? "completed" : "pending" }));
}

/** The plan rewritten once the agent is told the route is broken (the graph's scripted planner's repair). */
function repaired(w: World, steps: Step[]): Step[] {
  const faulty = `s${w.faulty}`;
  const replacement = w.cell === "new-evidence" ? "verify" : `${faulty}_alt`;
  return steps.flatMap((s) => {
    if (s.id === faulty) return repair(w, s);
    const rested = (s.assumptions ?? []).includes("route_ok");
    const deps = (s.dependsOn ?? []).map((d) => (d === faulty ? replacement : d));
    if (w.cell === "new-evidence" && rested && !deps.includes("verify")) deps.push("verify");
    return [
      { ...s, assumptions: (s.assumptions ?? []).filter((a) => a !== "route_ok"), dependsOn: [...new Set(deps)] },
    ];
  });
}

/** A governance world; in `lost-ack` the faulty step is the last one, which commits the side effect. */
function world(seed: number, cell: Cell): World {
  const w = makeWorld(seed, cell);
  return cell === "lost-ack" ? { ...w, faulty: w.n - 1 } : w;
}

async function runSetup(w: World, setup: Setup): Promise<Outcome> {
  const ledger: Ledger = { attempts: 0, useful: 0, commits: new Map(), calls: new Map(), planner: 0 };
  const { mind, model } = typicalAgent(w, setup);
  const last = `t${w.n - 1}`;
  const stack =
    setup === "plan"
      ? [planMiddleware({ sideEffectTools: [last], sleep: async () => {} })]
      : setup === "todo+retry"
        ? [todoListMiddleware(), toolRetryMiddleware({ maxRetries: 2, initialDelayMs: 0, jitter: false })]
        : [];
  const agent = createAgent({
    model,
    tools: worldTools(w, ledger),
    middleware: stack,
    checkpointer: new MemorySaver(),
  });
  const out = (await agent.invoke(
    { messages: [{ role: "user", content: "Reach the goal" }] },
    { configurable: { thread_id: "bench" }, recursionLimit: 10_000 },
  )) as { status?: string; __interrupt__?: unknown };
  const recovered =
    setup === "plan"
      ? out.status === "completed" && out.__interrupt__ === undefined
      : mind.steps.every((s) => mind.ok.get(s.id) === true) && w.cell !== "new-evidence";
  return {
    recovered: recovered && (w.cell !== "new-evidence" || (ledger.calls.get("verify") ?? 0) > 0),
    attempts: ledger.attempts,
    modelCalls: model.received.length,
    // Calls under one idempotency key are one operation (the API answers a repeat with the first result).
    reexecuted: Math.max(0, ledger.commits.size - 1),
  };
}

export async function middleware(quick: boolean): Promise<Table> {
  const seeds = quick ? 3 : 8;
  const rows: (string | number)[][] = [];
  for (const cell of CELLS) {
    for (const setup of ["none", "todo+retry", "plan"] as const) {
      const outcomes: Outcome[] = [];
      for (let seed = 1; seed <= seeds; seed++)
        outcomes.push(await runSetup(world(seed * 7919 + CELLS.indexOf(cell), cell), setup));
      const avg = (f: (o: Outcome) => number) => outcomes.reduce((s, o) => s + f(o), 0) / outcomes.length;
      rows.push([
        cell,
        setup === "none" ? "no middleware" : setup === "plan" ? "planMiddleware" : "todoList + toolRetry",
        `${fmt(avg((o) => Number(o.recovered)) * 100, 0)}%`,
        fmt(
          avg((o) => o.attempts),
          1,
        ),
        fmt(
          avg((o) => o.modelCalls),
          1,
        ),
        outcomes.reduce((s, o) => s + o.reexecuted, 0),
      ]);
    }
  }
  return {
    title: `Agent middleware: the governance fault grid through createAgent, ${seeds} worlds per cell (DAGs of 5–30 steps)`,
    head: ["cell", "set-up", "recovery", "tool attempts/run", "model calls/run", "side effects re-executed"],
    rows,
    note:
      "A scripted model that behaves like a typical LLM agent (one tool call per turn; a returned value is success; " +
      "an error is repeated up to 3 times, then it gives up; a false assumption is ignored unless a tool message says " +
      "so, then it rewrites the plan with the route that works). Recovery: every step reached with a good result " +
      "(planMiddleware: the run completed with no open question). lost-ack: the last step commits its side effect, then " +
      "times out once. Side effects re-executed: commits beyond one per run (calls under one idempotency key count once).",
  };
}

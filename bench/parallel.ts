/**
 * Parallel steps (docs/decisions/0012-parallel-dispatch.md): seeded DAG plans of 14–28 steps whose tool
 * latencies are log-uniform in 15–250 ms, each run by
 *   - the manager with maxConcurrency = the plan's size (≥ its width), 4 and 1;
 *   - a barrier contender on bare LangGraph: `Send` fan-out of every ready step per superstep;
 *   - an eager Promise scheduler with no checkpoints (the LLMCompiler-style floor).
 * Every scheduler honours the same rule for shared `sideEffects` (no overlap, plan order).
 * Wall times are compared with the critical path and with the sum of latencies.
 */
import { tool } from "@langchain/core/tools";
import { Annotation, END, MemorySaver, Send, START, StateGraph } from "@langchain/langgraph";
import { z } from "zod";
import { createPlanManager, staticPlanner, type PlanDraft } from "../src/index.js";
import { mayStart } from "../src/policy/attempt/may-start.js";
import type { Plan } from "../src/plan/schema/plan.js";
import type { StepRun } from "../src/plan/schema/run.js";
import type { Step } from "../src/plan/schema/step.js";
import { fmt, median, type Table } from "./lib.js";

async function repeatEach(runs: number, fn: () => Promise<number>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < runs; i++) out.push(await fn());
  return out;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const work = tool(async ({ ms }: { ms: number }) => (await sleep(ms), { ok: true }), {
  name: "work",
  description: "waits ms milliseconds",
  schema: z.object({ ms: z.number() }),
});

/** mulberry32: a small seeded generator, so every run measures the same plans. */
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Dag {
  seed: number;
  steps: Step[];
  latency: Record<string, number>;
}

export function seededDag(seed: number): Dag {
  const r = rng(seed);
  const n = 14 + Math.floor(r() * 15);
  const steps: Step[] = [];
  const latency: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const id = `s${i}`;
    const ms = Math.round(Math.exp(Math.log(15) + r() * (Math.log(250) - Math.log(15))));
    latency[id] = ms;
    const deps = new Set<string>();
    if (i > 0) for (let k = 0; k < 2; k++) if (r() < 0.6) deps.add(`s${Math.floor(r() * i)}`);
    const resource = i % 7 === 3 ? ["ledger"] : i % 7 === 5 ? ["mail"] : undefined;
    steps.push({
      id,
      goal: `step ${i}`,
      tool: "work",
      args: { ms },
      ...(deps.size > 0 ? { dependsOn: [...deps] } : {}),
      // Each is its own effect, even when two draw the same latency: label the operation.
      ...(resource ? { sideEffects: resource, operation: id } : {}),
    } as Step);
  }
  return { seed, steps, latency };
}

function criticalPath(d: Dag): number {
  const finish: Record<string, number> = {};
  for (const s of d.steps) finish[s.id] = Math.max(0, ...(s.dependsOn ?? []).map((x) => finish[x]!)) + d.latency[s.id]!;
  return Math.max(...Object.values(finish));
}

/** Steps per dependency level, the widest level: a lower bound of the DAG's width. */
function width(d: Dag): number {
  const level: Record<string, number> = {};
  for (const s of d.steps) level[s.id] = Math.max(-1, ...(s.dependsOn ?? []).map((x) => level[x]!)) + 1;
  const counts = new Map<number, number>();
  for (const l of Object.values(level)) counts.set(l, (counts.get(l) ?? 0) + 1);
  return Math.max(...counts.values());
}

/** Ready steps the shared start rule allows now (the rule every scheduler here honours). */
function startable(d: Dag, runs: Record<string, StepRun>, running: string[], max: number): Step[] {
  const plan = { version: 1, steps: d.steps, assumptions: [] } as Plan;
  const out: Step[] = [];
  for (const s of d.steps) {
    if (runs[s.id]) continue;
    if (!(s.dependsOn ?? []).every((x) => runs[x]?.status === "succeeded")) continue;
    const calls = [...running, ...out.map((o) => o.id)].map((id) => ({ stepId: id, tool: "work" }));
    const standing = { plan, steps: runs, ready: new Set([s.id]), falsified: [] };
    if (mayStart(s, { ...standing, dispatch: { running: calls, maxConcurrency: max, toolLimits: {} } }, "work").ok)
      out.push(s);
  }
  return out;
}

/** The floor: a plain eager Promise scheduler, no checkpoints. */
export async function eagerFloor(d: Dag): Promise<number> {
  const t0 = performance.now();
  const runs: Record<string, StepRun> = {};
  const running = new Map<string, Promise<string>>();
  while (Object.values(runs).filter((r) => r.status === "succeeded").length < d.steps.length) {
    for (const s of startable(d, runs, [...running.keys()], Infinity)) {
      runs[s.id] = { status: "running", attempts: 1 };
      running.set(
        s.id,
        work.invoke({ ms: d.latency[s.id]! }).then(() => s.id),
      );
    }
    const id = await Promise.race(running.values());
    running.delete(id);
    runs[id] = { status: "succeeded", attempts: 1 };
  }
  return performance.now() - t0;
}

const BarrierState = Annotation.Root({
  done: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

/** The barrier contender: bare LangGraph, every ready step sent at once; the next superstep waits for all. */
export async function sendBarrier(d: Dag): Promise<number> {
  const runsOf = (done: string[]) =>
    Object.fromEntries(done.map((id) => [id, { status: "succeeded", attempts: 1 } as StepRun]));
  const route = (state: typeof BarrierState.State) => {
    const ready = startable(d, runsOf(state.done), [], Infinity);
    return ready.length === 0 ? END : ready.map((s) => new Send("work", { id: s.id }));
  };
  const graph = new StateGraph(BarrierState)
    .addNode("plan", () => ({}))
    .addNode("work", async (input: { id: string }) => {
      await work.invoke({ ms: d.latency[input.id]! });
      return { done: [input.id] };
    })
    .addEdge(START, "plan")
    .addConditionalEdges("plan", route, ["work", END])
    .addEdge("work", "plan")
    .compile({ checkpointer: new MemorySaver() });
  const t0 = performance.now();
  await graph.invoke({}, { configurable: { thread_id: `send-${d.seed}` }, recursionLimit: 1000 });
  return performance.now() - t0;
}

export async function manager(d: Dag, maxConcurrency: number): Promise<number> {
  const draft: PlanDraft = { steps: d.steps };
  const graph = createPlanManager({
    tools: [work],
    planner: staticPlanner({ plan: draft }),
    policy: { maxConcurrency },
  }).compile({ checkpointer: new MemorySaver() });
  const t0 = performance.now();
  const out = (await graph.invoke(
    { goal: "bench" },
    { configurable: { thread_id: `m-${d.seed}-${maxConcurrency}` } },
  )) as {
    status: string;
  };
  if (out.status !== "completed") throw new Error(`plan ${d.seed}: ${out.status}`);
  return performance.now() - t0;
}

export async function parallel(quick: boolean): Promise<Table> {
  const seeds = quick ? [1, 2, 3] : [1, 2, 3, 4, 5, 6, 7, 8];
  const runs = quick ? 1 : 3;
  // The median of `runs` runs each (the machine is shared and noisy), after one warm-up plan.
  const timed = async (fn: () => Promise<number>) => median(await repeatEach(runs, fn));
  await manager(seededDag(0), 4);
  await sendBarrier(seededDag(0));
  const rows: (string | number)[][] = [];
  const ratio = { wide: [] as number[], barrier: [] as number[], cp: [] as number[] };
  for (const seed of seeds) {
    const d = seededDag(seed);
    const sum = Object.values(d.latency).reduce((a, b) => a + b, 0);
    const cp = criticalPath(d);
    const floor = await timed(() => eagerFloor(d));
    const wide = await timed(() => manager(d, d.steps.length));
    const four = await timed(() => manager(d, 4));
    const one = await timed(() => manager(d, 1));
    const barrier = await timed(() => sendBarrier(d));
    ratio.wide.push(wide / floor);
    ratio.barrier.push(barrier / floor);
    ratio.cp.push(wide / cp);
    rows.push([
      seed,
      d.steps.length,
      width(d),
      Math.round(sum),
      Math.round(cp),
      Math.round(floor),
      `${Math.round(wide)} (${fmt(wide / floor)}×)`,
      `${Math.round(four)} (${fmt(four / floor)}×)`,
      `${Math.round(one)} (${fmt(one / cp)}× cp)`,
      `${Math.round(barrier)} (${fmt(barrier / floor)}×)`,
    ]);
  }
  return {
    title: "Parallel steps: wall time (ms) of seeded DAG plans, latencies log-uniform 15–250 ms",
    note:
      `cp = critical path (sum of latencies on the longest dependency chain); floor = eager Promise scheduler, ` +
      `no checkpoints; (×) = over the floor unless marked cp. Median manager(max = steps)/floor ` +
      `${fmt(median(ratio.wide))}×, manager(max = steps)/cp ${fmt(median(ratio.cp))}×, barrier/floor ` +
      `${fmt(median(ratio.barrier))}×; median of ${runs} run(s) per cell. Every scheduler keeps steps ` +
      `sharing a sideEffects entry apart, in plan order. MemorySaver for the manager and the barrier contender.`,
    head: [
      "plan",
      "steps",
      "width≥",
      "sum",
      "cp",
      "floor",
      "manager max=steps",
      "manager max=4",
      "manager max=1",
      "Send barrier",
    ],
    rows,
  };
}

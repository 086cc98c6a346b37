/**
 * One contender under concurrent load, in its own process so peak RSS is its own:
 * `tsx bench/concurrency-worker.ts <manager|bare> <threads> <steps> <dbfile>` prints JSON.
 */
import { tool } from "@langchain/core/tools";
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { z } from "zod";
import { createPlanManager, staticPlanner } from "../src/index.js";
import { chainPlan } from "./fixtures.js";
import { percentile } from "./lib.js";

const [kind = "manager", threadsArg = "10", stepsArg = "20", db = "/tmp/bench-concurrency.sqlite"] =
  process.argv.slice(2);
const threads = Number(threadsArg);
const steps = Number(stepsArg);

const last = new Map<string, number>();
const latencies: number[] = [];
const noop = tool(
  async (_args, config) => {
    const thread = String(config?.configurable?.thread_id);
    const now = performance.now();
    const prev = last.get(thread);
    if (prev !== undefined) latencies.push(now - prev);
    last.set(thread, now);
    return { ok: true };
  },
  { name: "noop", description: "does nothing", schema: z.object({}).passthrough() },
);

const saver = SqliteSaver.fromConnString(db);
let graph: { invoke: (input: never, config: object) => Promise<unknown> };
if (kind === "manager") {
  graph = createPlanManager({ tools: [noop], planner: staticPlanner({ plan: chainPlan(steps) }) }).compile({
    checkpointer: saver,
  });
} else {
  const S = Annotation.Root({ done: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }) });
  const builder = new StateGraph(S) as unknown as StateGraph<typeof S.spec, typeof S.State, typeof S.Update, string>;
  for (let i = 0; i < steps; i++) {
    builder.addNode(`n${i}`, async (_s, config) => {
      await noop.invoke({}, config);
      return { done: 1 };
    });
  }
  builder.addEdge(START, "n0");
  for (let i = 1; i < steps; i++) builder.addEdge(`n${i - 1}`, `n${i}`);
  builder.addEdge(`n${steps - 1}`, END);
  graph = builder.compile({ checkpointer: saver });
}

let peak = process.memoryUsage().rss;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
const started = performance.now();
const results = await Promise.allSettled(
  Array.from({ length: threads }, (_, i) =>
    graph.invoke((kind === "manager" ? { goal: "load" } : {}) as never, {
      configurable: { thread_id: `${kind}-${i}` },
      recursionLimit: 10_000,
    }),
  ),
);
const elapsed = (performance.now() - started) / 1000;
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage().rss);
const errors = results.filter((r) => r.status === "rejected").length;
const completed =
  kind === "manager"
    ? results.filter((r) => r.status === "fulfilled" && (r.value as { status?: string }).status === "completed").length
    : threads - errors;
saver.db.close();
process.stdout.write(
  JSON.stringify({
    kind,
    threads,
    steps,
    elapsed,
    stepsPerSecond: (threads * steps) / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    peakRssMb: peak / 1024 / 1024,
    errors,
    completed,
  }) + "\n",
);

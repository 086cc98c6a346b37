/**
 * What OpenTelemetry costs per step (docs/decisions/0052-opentelemetry.md): an N-step chain of
 * no-op tool calls on MemorySaver, with `@opentelemetry/api` installed and no provider registered,
 * and with a tracer and a meter provider registered (an in-memory span exporter, a meter read on
 * demand). With `--base=<dir>` holding another checkout's `src/` (e.g. `git archive main src | tar
 * -x -C <dir>`, and `<dir>/node_modules` linked to this one's), the same chain built from that
 * source runs alongside, as "before": the cost with no provider against the code before telemetry.
 */
import { join, resolve } from "node:path";
import { metrics, trace } from "@opentelemetry/api";
import { MemorySaver } from "@langchain/langgraph";
import { MeterProvider, MetricReader } from "@opentelemetry/sdk-metrics";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { chainPlan, managerGraph, noop } from "./fixtures.js";
import { fmt, median, repeat, type Table } from "./lib.js";

type Graph = { invoke: (input: never, config: object) => Promise<unknown> };

class HeldReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

let thread = 0;

async function timeRun(graph: Graph): Promise<number> {
  const started = performance.now();
  await graph.invoke({ goal: "bench" } as never, { configurable: { thread_id: `otel-${thread++}` } });
  return performance.now() - started;
}

/** A run with both providers registered for its length, and taken down after; `spans`: how many it exported. */
async function tracedRun(graph: Graph, exporter: InMemorySpanExporter): Promise<{ ms: number; spans: number }> {
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const meterProvider = new MeterProvider({ readers: [new HeldReader()] });
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  try {
    const ms = await timeRun(graph);
    return { ms, spans: exporter.getFinishedSpans().length };
  } finally {
    trace.disable();
    metrics.disable();
    exporter.reset();
  }
}

/** The same chain built from another checkout's source. */
async function baseGraph(base: string, n: number): Promise<Graph> {
  const src = (await import(join(resolve(base), "src", "index.ts"))) as typeof import("../src/index.js");
  const planner = src.staticPlanner({ plan: chainPlan(n) });
  return src.createPlanManager({ tools: [noop], planner }).compile({ checkpointer: new MemorySaver() }) as Graph;
}

export async function otelCost(quick: boolean, base?: string): Promise<Table> {
  const n = quick ? 20 : 50;
  const runs = quick ? 7 : 21;
  const before = base ? await baseGraph(base, n) : undefined;
  const graph = managerGraph(n, new MemorySaver());
  const exporter = new InMemorySpanExporter();
  let spans = 0;
  // Each round runs every variant once, in turn, so that machine noise hits them alike.
  const rounds = await repeat(runs, async () => {
    const b = before ? await timeRun(before) : Number.NaN;
    const off = await timeRun(graph);
    const traced = await tracedRun(graph, exporter);
    spans = traced.spans;
    return { b, off, on: traced.ms };
  });
  const perStep = (pick: (r: (typeof rounds)[number]) => number) => fmt(median(rounds.map(pick)) / n, 3);
  const ratio = (pick: (r: (typeof rounds)[number]) => number) => fmt(median(rounds.map(pick)), 3);
  const rows: (string | number)[][] = [];
  if (before) rows.push(["before (the base's source)", n, perStep((r) => r.b), "1.000", "-"]);
  rows.push(["API installed, no provider", n, perStep((r) => r.off), before ? ratio((r) => r.off / r.b) : "-", 0]);
  rows.push([
    "tracer + meter provider, in-memory exporter",
    n,
    perStep((r) => r.on),
    before ? ratio((r) => r.on / r.b) : "-",
    spans,
  ]);
  return {
    title: `OpenTelemetry: cost per step (median of ${runs} after a warm-up)`,
    head: ["telemetry", "steps", "ms/step", "× before", "spans per run"],
    rows,
    note:
      "An N-step chain of no-op tool calls on MemorySaver; the variants run in turn within each round. " +
      "× before is the median of per-round ratios against the same chain built from the code before telemetry " +
      "(`--base=<dir>`; '-' when not given). With no provider registered a run gets no telemetry at all " +
      "(one property read per event); with both registered each step is a span, and each run a run span and a plan version span.",
  };
}

/**
 * OpenTelemetry for tests: a tracer provider exporting to memory, a meter provider read on demand,
 * both registered globally (as an operator's setup does) and taken down again; and the spans as a
 * tree of text lines, which is what the tests compare.
 */
import { context, metrics, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { MeterProvider, MetricReader, type DataPoint } from "@opentelemetry/sdk-metrics";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from "@opentelemetry/sdk-trace-base";

/** A reader that exports nowhere: the test collects when it wants to read. */
class TestReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

export interface Telemetry {
  spans: () => ReadableSpan[];
  /** Every counter's points, as `name{attr=value,…} = value` lines, sorted. */
  counts: () => Promise<string[]>;
  reset: () => void;
  shutdown: () => Promise<void>;
}

export function registerTelemetry(): Telemetry {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new TestReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  trace.setGlobalTracerProvider(tracerProvider);
  metrics.setGlobalMeterProvider(meterProvider);
  return {
    spans: () => exporter.getFinishedSpans(),
    counts: async () => {
      const { resourceMetrics } = await reader.collect();
      const lines = resourceMetrics.scopeMetrics.flatMap((s) =>
        s.metrics.flatMap((m) =>
          (m.dataPoints as DataPoint<number>[]).map((p) => `${m.descriptor.name}${attrs(p.attributes)} = ${p.value}`),
        ),
      );
      return lines.sort();
    },
    reset: () => exporter.reset(),
    shutdown: async () => {
      trace.disable();
      metrics.disable();
      context.disable();
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

function attrs(attributes: Record<string, unknown>): string {
  const keys = Object.keys(attributes).sort();
  return keys.length === 0 ? "" : `{${keys.map((k) => `${k}=${String(attributes[k])}`).join(",")}}`;
}

/**
 * The spans as an indented tree, children in start order: `name [attr=value …]` then each event as
 * `  · event [attr=value …]`. `show` picks the attributes printed (all others are left out).
 */
export function spanTree(spans: ReadableSpan[], show: readonly string[]): string[] {
  const byParent = new Map<string | undefined, ReadableSpan[]>();
  const ids = new Set(spans.map((s) => s.spanContext().spanId));
  for (const span of spans) {
    const parent = span.parentSpanContext?.spanId;
    const key = parent !== undefined && ids.has(parent) ? parent : undefined;
    byParent.set(key, [...(byParent.get(key) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    const children = (byParent.get(parent) ?? []).sort((a, b) => order(a) - order(b));
    for (const span of children) {
      const pad = "  ".repeat(depth);
      lines.push(`${pad}${span.name}${picked(span.attributes, show)}${status(span)}`);
      for (const event of span.events) lines.push(`${pad}  · ${event.name}${picked(event.attributes ?? {}, show)}`);
      walk(span.spanContext().spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines;
}

function order(span: ReadableSpan): number {
  return span.startTime[0] * 1e9 + span.startTime[1];
}

function picked(attributes: Record<string, unknown>, show: readonly string[]): string {
  const shown = show
    .filter((k) => attributes[k] !== undefined)
    .map((k) => `${k.replace("langgraph_replan.", "")}=${String(attributes[k])}`);
  return shown.length === 0 ? "" : ` [${shown.join(" ")}]`;
}

function status(span: ReadableSpan): string {
  return span.status.code === 2 ? " ERROR" : "";
}

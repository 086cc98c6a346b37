/**
 * `@opentelemetry/api` is an optional peer: loaded once, by a dynamic import, the first time a run
 * starts; absent, every run goes untraced and nothing else changes. With it present but no tracer
 * or meter provider registered, a run gets no telemetry at all (`telemetryScope`), so that an
 * operator who installed the API for something else pays nothing per step
 * (docs/decisions/0052-opentelemetry.md).
 */
import type * as Api from "@opentelemetry/api";
import { SCOPE } from "./names.js";

export type OtelApi = typeof Api;

let loading: Promise<OtelApi | undefined> | undefined;
let loaded: OtelApi | undefined;

/** The API, once; undefined when the package is not installed. */
export function loadOtel(): Promise<OtelApi | undefined> {
  loading ??= import("@opentelemetry/api").then(
    (api) => (loaded = api),
    () => undefined,
  );
  return loading;
}

/** The API if a run has loaded it already (for the calls a run makes, which cannot wait). */
export function loadedOtel(): OtelApi | undefined {
  return loaded;
}

/** What a run emits through: the tracer if a tracer provider is registered, the meter if a meter provider is. */
export interface TelemetryScope {
  api: OtelApi;
  tracer?: Api.Tracer;
  meter?: Api.Meter;
}

/** The scope of a run starting now, or undefined when neither provider is registered. */
export function telemetryScope(api: OtelApi): TelemetryScope | undefined {
  const provider = api.trace.getTracerProvider();
  // The global provider is a proxy until one is registered: its delegate tracer says whether one is.
  const tracing = !(provider instanceof api.ProxyTracerProvider) || provider.getDelegateTracer(SCOPE) !== undefined;
  const meter = api.metrics.getMeter(SCOPE);
  const metering = meter.constructor !== api.createNoopMeter().constructor;
  if (!tracing && !metering) return undefined;
  return { api, ...(tracing ? { tracer: api.trace.getTracer(SCOPE) } : {}), ...(metering ? { meter } : {}) };
}

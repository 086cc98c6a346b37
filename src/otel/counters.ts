/** The run's counters through the meter (docs/guides/operations.md "Tracing"). */
import type { Attributes, Counter, Meter } from "@opentelemetry/api";
import { METRICS } from "./names.js";

export interface Counters {
  decisions: Counter<Attributes>;
  attempts: Counter<Attributes>;
  effects: Counter<Attributes>;
  planVersions: Counter<Attributes>;
}

const made = new WeakMap<Meter, Counters>();

/** One set of instruments per meter: a run does not create them again. */
export function countersOf(meter: Meter): Counters {
  const known = made.get(meter);
  if (known) return known;
  const counters: Counters = {
    decisions: meter.createCounter(METRICS.decisions, { description: "Decisions, by rule, action and failure class" }),
    attempts: meter.createCounter(METRICS.attempts, { description: "Step attempts ended, by outcome and tool" }),
    effects: meter.createCounter(METRICS.effects, {
      description: "Side effects committed, in doubt and compensated",
    }),
    planVersions: meter.createCounter(METRICS.planVersions, { description: "Plan versions made, by kind" }),
  };
  made.set(meter, counters);
  return counters;
}

/**
 * The replanner's one port (docs/decisions/0056-replan-gathers-through-one-port.md): it performs
 * whatever the pure replan decision (policy/replan/replan-step.ts) asks for — replan memory's
 * entries, a draft from the planner, the reviewer's findings about the proposed version — and hands
 * it back as data; then it performs the decision itself: the state update, and the store writes it
 * implies. What the planner and the reviewer spend is pushed to the run's `usage`.
 */
import type { Runtime } from "../../runtime/options.js";
import type { PlanManagerUpdate } from "../../runtime/state.js";
import type { Gathered, ReplanAsk, ReplanDecision } from "../../policy/replan/replan-step.js";
import { reviewVersion } from "../shared/quality-hold.js";
import { chargeReplan, type ReplanRun } from "./context.js";
import { applyOutcome } from "./apply.js";
import { memoryOn } from "./memory-read.js";
import { askPlanner } from "./request.js";

export interface ReplanPort {
  /** One ask of the decision, performed: what it gathered. */
  gather(ask: ReplanAsk): Promise<Gathered>;
  /** The decision, performed: the state update it makes, once the store writes it implies are made. */
  apply(decision: ReplanDecision): Promise<PlanManagerUpdate>;
}

/** The port of one replan. Replan memory is read and written only when the run has a store. */
export function replanPort(rt: Runtime, run: ReplanRun): ReplanPort {
  const { config, frame, state, usage } = run;
  const memory = config.store && memoryOn(rt.memory, config.store, config);
  return {
    // State writes first; the store's after the decision, whatever becomes of them.
    async apply(decision) {
      const budget = decision.charged ? chargeReplan(state, usage) : undefined;
      const spent = { usage, budget, facts: frame.falsification.labels.facts };
      const update = applyOutcome(rt, state, config, decision, spent);
      if (memory && decision.writes.length > 0) await memory.write(decision.writes);
      return update;
    },
    async gather(ask) {
      if (ask.next === "read_memory") return { read: await memory!.read(ask.key, frame.assumption, run.now()) };
      if (ask.next === "review_version") {
        const version = { goal: state.goal, plan: ask.plan };
        return { reviewed: await reviewVersion(rt, config, version, usage, "replan") };
      }
      return { answer: await askPlanner(rt, run, ask) };
    },
  };
}

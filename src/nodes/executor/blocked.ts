/** A visit where no step can run and none will: the run fails, and what it committed is undone first. */
import type { PlanManagerUpdate } from "../../runtime/state.js";
import { endCompensations } from "../shared/compensate-next.js";
import type { Visit } from "./visit.js";

export function blockedRun(v: Visit, waiting: readonly string[]): PlanManagerUpdate {
  const message = `no step can run: waiting on ${waiting.join(", ")}`;
  const outcome = { summary: "", failureReason: "blocked", message, recoverable: false };
  // What this visit committed ends with the run too (docs/decisions/0039-compensation.md).
  const seen = {
    ...v.state,
    sideEffects: [...v.state.sideEffects, ...v.effects],
    facts: { ...v.state.facts, ...v.facts },
  };
  const undo = endCompensations(v.rt, seen, v.config, "failed", v.now());
  return { ...v.update(), deviation: null, status: "failed", outcome, ...undo };
}

/**
 * The ladder's answer to stale evidence (docs/decisions/0041-evidence-freshness-and-drift.md), and what that
 * answer writes. Pure: an input older than its step's `freshFor` makes the step that produced it run again first
 * (`evidence.stale`), bounded like any backtrack (`policy.maxBacktrackDepth`, `policy.maxBacktracksPerStep`); a
 * producer with side effects, or one that is not a step of the plan (the run's input), escalates instead.
 */
import type { Plan } from "../../plan/schema/plan.js";
import type { Fact, StepRun } from "../../plan/schema/run.js";
import { sideEffecting } from "../../plan/operation.js";
import type { ResolvedPolicy } from "../options.js";
import { backtrackDepthGuard, backtracksGuard } from "./guards.js";
import type { DeviationOf } from "./deviation.js";
import type { RuleId } from "./rules.js";

export interface StaleAnswer {
  rule: RuleId;
  reason: string;
  /** The steps that run again (`evidence.stale` only). */
  producers: string[];
}

/** The rule that answers stale inputs, and why: refresh the producers, or escalate. */
export function staleAnswer(
  deviation: DeviationOf<"stale_evidence">,
  plan: Plan,
  backtracks: Readonly<Record<string, number>>,
  policy: Pick<ResolvedPolicy, "maxBacktrackDepth" | "maxBacktracksPerStep">,
): StaleAnswer {
  const producers = [...new Set(deviation.stale.map((s) => s.producedBy))];
  const what = deviation.message;
  const missing = producers.filter((id) => !plan.steps.some((s) => s.id === id));
  if (missing.length > 0) {
    const reason = `${what}; produced by ${missing.map((m) => `"${m}"`).join(", ")}, no step of the plan, so it cannot be observed again here`;
    return { rule: "evidence.stale-escalate", reason, producers: [] };
  }
  const effects = producers.filter((id) => sideEffecting(plan.steps.find((s) => s.id === id)!));
  if (effects.length > 0) {
    const reason = `${what}; ${effects.map((m) => `"${m}"`).join(", ")} has side effects: running it again would repeat them`;
    return { rule: "evidence.stale-escalate", reason, producers: [] };
  }
  const guard = backtracksGuard(producers, backtracks, policy) ?? backtrackDepthGuard(producers, policy);
  if (guard) return { rule: guard.rule, reason: `${what}; ${guard.reason}`, producers: [] };
  const again = producers.map((p) => `"${p}"`).join(", ");
  return { rule: "evidence.stale", reason: `${what}; ${again} runs again first`, producers };
}

/**
 * What `evidence.stale` writes: each producer pending again with a fresh round of attempts, the stale facts
 * `suspect` until they are observed again, and one more backtrack counted per producer.
 */
export function refreshWrites(
  deviation: DeviationOf<"stale_evidence">,
  producers: readonly string[],
  steps: Readonly<Record<string, StepRun>>,
  facts: Readonly<Record<string, Fact>>,
  backtracks: Readonly<Record<string, number>>,
): { steps: Record<string, StepRun>; facts: Record<string, Fact>; backtracks: Record<string, number> } {
  const runs: Record<string, StepRun> = {};
  const counted = { ...backtracks };
  for (const id of producers) {
    const { nextDelayMs: _delay, error: _error, ...run } = steps[id] ?? { status: "pending" as const, attempts: 0 };
    runs[id] = { ...run, status: "pending", retryBase: run.attempts };
    counted[id] = (counted[id] ?? 0) + 1;
  }
  const suspect: Record<string, Fact> = {};
  for (const { key } of deviation.stale) {
    const fact = facts[key];
    if (fact) suspect[key] = { ...fact, label: "suspect" };
  }
  return { steps: runs, facts: suspect, backtracks: counted };
}

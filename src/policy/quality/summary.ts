/**
 * How well a run went, beside its status (docs/decisions/0040-plan-quality-gate.md): `outcome.quality`.
 * A run is degraded when a required result rests on less than its plan promised: a fallback's
 * output, a fact that became suspect after a step read it, or inputs refreshed because they went
 * stale (decisions under `evidence.stale`). Optional steps skipped are counted but do not degrade:
 * the plan allowed them to fail, and the summary line already says how many were skipped. The
 * gate's findings are listed, not counted as degradation: they are about the plan, and a person
 * approved any that held it. Pure.
 */
import type { Decision } from "../ladder/decision.js";
import type { RuleId } from "../ladder/rules.js";
import type { Fact, StepRun } from "../../plan/schema/run.js";
import type { QualityFinding, QualitySummary } from "../../plan/schema/quality.js";

export type { QualitySummary } from "../../plan/schema/quality.js";

/** The rule whose decisions count as stale refreshes: a producer run again because an input was too old. */
const STALE_RULE: RuleId = "evidence.stale";

export interface QualityFacts {
  runs: readonly { usedFallback?: boolean | undefined; status: string; skipReason?: string | undefined }[];
  /** Keys of the facts labelled suspect. */
  suspect: ReadonlySet<string>;
  /** Inputs of every step that succeeded. */
  inputsRead: readonly (readonly string[])[];
  decisions: readonly Pick<Decision, "rule">[];
  findings: readonly QualityFinding[];
}

export function qualitySummary(q: QualityFacts): QualitySummary {
  const fallbacksUsed = q.runs.filter((r) => r.usedFallback === true && r.status === "succeeded").length;
  const optionalSkipped = q.runs.filter((r) => r.status === "skipped" && r.skipReason === "optional_failed").length;
  const read = new Set(q.inputsRead.flat());
  const suspectFactsUsed = [...q.suspect].filter((k) => read.has(k)).length;
  const staleRefreshes = q.decisions.filter((d) => d.rule === STALE_RULE).length;
  const degraded = fallbacksUsed + suspectFactsUsed + staleRefreshes > 0;
  return { degraded, fallbacksUsed, optionalSkipped, suspectFactsUsed, findings: q.findings.length, staleRefreshes };
}

/** "1 fallback used, 2 optional steps skipped": why a run is degraded, for the summary line and the views. */
export function degradedReasons(s: QualitySummary): string {
  const parts: string[] = [];
  const count = (n: number, one: string, many: string) => parts.push(`${n} ${n === 1 ? one : many}`);
  if (s.fallbacksUsed > 0) count(s.fallbacksUsed, "fallback used", "fallbacks used");
  if (s.suspectFactsUsed > 0) count(s.suspectFactsUsed, "suspect fact used", "suspect facts used");
  if (s.staleRefreshes > 0) count(s.staleRefreshes, "stale input refreshed", "stale inputs refreshed");
  return parts.join(", ");
}

/** What `runQuality` reads of a run: the graph's state and the middleware's plan state both have it. */
export interface RunRecords {
  plan?: { steps: readonly { id: string; inputs?: string[] | undefined }[] } | undefined;
  steps: Readonly<Record<string, StepRun>>;
  facts: Readonly<Record<string, Pick<Fact, "label">>>;
  decisions: readonly Pick<Decision, "rule">[];
  quality?: { findings: QualityFinding[] } | undefined;
}

/** `outcome.quality` from a run's records: the current plan's steps, the facts' labels, the decisions, the findings. */
export function runQuality(state: RunRecords): QualitySummary {
  const steps = state.plan?.steps ?? [];
  const runs = steps.flatMap((s) => (state.steps[s.id] ? [state.steps[s.id]!] : []));
  const suspect = new Set(Object.keys(state.facts).filter((k) => state.facts[k]!.label === "suspect"));
  const succeeded = steps.filter((s) => state.steps[s.id]?.status === "succeeded");
  const inputsRead = suspect.size === 0 ? [] : succeeded.map((s) => s.inputs ?? []);
  return qualitySummary({
    runs,
    suspect,
    inputsRead,
    decisions: state.decisions,
    findings: state.quality?.findings ?? [],
  });
}

/**
 * Run metrics the seeds ask for, computed from state alone: replans per run, local:global
 * ratio, first-replan success, trusted-state carry rate, retry-exhaustion rate.
 */
import type { PlanManagerStateType } from "../runtime/state.js";
import { costsByTier, type TierCost } from "./model-costs.js";
import { compensationCounts, type CompensationCounts } from "./compensations.js";
import { inDoubtCounts } from "./effects.js";

/**
 * A run's metrics: replans, local:global ratio, first-replan success, carry rate, retry exhaustion,
 * compensations and settled calls in doubt.
 */
export interface PlanMetrics {
  replans: number;
  localReplans: number;
  globalReplans: number;
  /** local / global; null when there was no global replan. */
  localGlobalRatio: number | null;
  /**
   * Did the first replan fix the problem (no later replan triggered by a step it introduced, and
   * the run did not fail)? null without replans.
   */
  firstReplanSuccess: boolean | null;
  /** Share of facts that kept the `trusted` label across replans; null without replans. */
  trustedCarryRate: number | null;
  /** Share of retried steps whose retries ran out; null when nothing was retried. */
  retryExhaustionRate: number | null;
  decisions: number;
  toolAttempts: number;
  /** Steps a person did instead of their tool (`provide` at an escalation). */
  doneByPerson: number;
  /** Extensions of a rolling-horizon plan (not counted in `replans`). */
  extensions: number;
  /** Steps whose attempt ran past `policy.stallFactor` × their `estimateMs`. */
  stalls: number;
  /** Cost of agent steps' model calls per tier; present only when an agent step called a model. */
  costByTier?: Partial<Record<TierCost["tier"], number>>;
  /** Compensations of abandoned side effects per status; present only when an effect was abandoned. */
  compensations?: CompensationCounts;
  /**
   * Side-effecting calls whose outcome was unknown (docs/decisions/0038-effect-journal.md), one count per
   * settlement, 0 when none: the step's verify probe said it happened (`effect.verified`) …
   */
  effectsVerified: number;
  /** … or that it did not, so it may go out again (`effect.not-happened`); */
  effectsNotHappened: number;
  /** called again under a key its tool honours (`effect.recalled`); */
  effectsRecalled: number;
  /** a person was asked (`effect.in-doubt`) … */
  effectsInDoubt: number;
  /** … and said it happened, with its output (`human.effect-happened`), */
  effectsHappened: number;
  /** … or to call it once more under its key (`human.effect-retry`). */
  effectsRetried: number;
}

type MetricsState = Pick<PlanManagerStateType, "replans" | "decisions" | "steps" | "status"> &
  Partial<Pick<PlanManagerStateType, "usage" | "compensations">>;

/** The metrics of a run's state. */
export function planMetrics(state: MetricsState): PlanMetrics {
  // An extension plans the next steps; it repairs nothing, so it is not a replan.
  const replans = state.replans.filter((r) => r.scope !== "extend");
  const local = replans.filter((r) => r.scope === "local").length;
  const global = replans.length - local;
  let firstReplanSuccess: boolean | null = null;
  const first = replans[0];
  if (first) {
    const introduced = new Set(first.newSteps);
    const later = state.decisions.filter(
      (d) => (d.action === "replan_local" || d.action === "replan_global") && d.planVersion >= first.toVersion,
    );
    firstReplanSuccess =
      state.status !== "failed" && !later.some((d) => d.stepId !== undefined && introduced.has(d.stepId));
  }
  const carried = replans.reduce((sum, r) => sum + r.facts.trusted.length, 0);
  const total = replans.reduce(
    (sum, r) => sum + r.facts.trusted.length + r.facts.suspect.length + r.facts.invalidated.length,
    0,
  );
  const retried = new Set(state.decisions.filter((d) => d.action === "retry" && d.stepId).map((d) => d.stepId));
  const exhausted = new Set(
    state.decisions.filter((d) => d.rule.startsWith("exhausted.") && d.stepId).map((d) => d.stepId),
  );
  const tiers = costsByTier(state.usage);
  const compensations = compensationCounts(state.compensations);
  const doubt = inDoubtCounts(state.decisions);
  return {
    ...(compensations ? { compensations } : {}),
    ...(tiers.length > 0 ? { costByTier: Object.fromEntries(tiers.map((t) => [t.tier, t.cost])) } : {}),
    replans: replans.length,
    localReplans: local,
    globalReplans: global,
    localGlobalRatio: global === 0 ? null : local / global,
    firstReplanSuccess,
    trustedCarryRate: total === 0 ? null : carried / total,
    retryExhaustionRate: retried.size === 0 ? null : [...exhausted].filter((s) => retried.has(s)).length / retried.size,
    decisions: state.decisions.length,
    toolAttempts: Object.values(state.steps).reduce((sum, s) => sum + s.attempts, 0),
    doneByPerson: Object.values(state.steps).filter((s) => s.doneBy === "person").length,
    extensions: state.replans.length - replans.length,
    stalls: Object.values(state.steps).filter((s) => s.stalled === true).length,
    effectsVerified: doubt.verified,
    effectsNotHappened: doubt.notHappened,
    effectsRecalled: doubt.recalled,
    effectsInDoubt: doubt.asked,
    effectsHappened: doubt.happened,
    effectsRetried: doubt.retried,
  };
}

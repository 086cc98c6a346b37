/** The operator's view: where the run is, how far it got, what it cost, and how healthy it is. */
import type { PlanManagerStateType } from "../runtime/state.js";
import type { RetryPolicy } from "../plan/schema/step.js";
import { DEFAULT_RETRY } from "../plan/retry.js";
import { isConcurrencyRecord } from "../policy/attempt/may-start.js";
import { decisionLine } from "./decision-line.js";
import { planMetrics, type PlanMetrics } from "./metrics.js";
import { costsByTier, tierCostLine } from "./model-costs.js";
import { compensationSummary } from "./compensations.js";
import { inDoubtNow, inDoubtSummary } from "./effects.js";
import { watchSummary } from "./watches.js";
import { statusLabel, type ViewOutcome } from "./quality-view.js";

type OperatorState = Pick<PlanManagerStateType, "plan" | "steps" | "status" | "decisions" | "replans" | "budget"> &
  Partial<Pick<PlanManagerStateType, "usage" | "pendingHuman" | "compensations" | "watches">> & {
    outcome?: ViewOutcome | undefined;
  };

const FINISHED: ReadonlySet<string> = new Set(["completed", "partial", "failed", "aborted"]);

/** Options of `operatorView`: the time "elapsed" is measured to. */
export interface OperatorViewOptions {
  /** Epoch ms used for "elapsed". Default: now. */
  now?: number;
  /**
   * The policy's default retry, to show attempt n/max. Default: the run's, as its state records it (`budget.maxAttempts`),
   * else the library's.
   */
  defaultRetry?: RetryPolicy;
  /** `policy.stallFactor`, to mark a running step past its estimate. Default 2. */
  stallFactor?: number;
}

/**
 * The operator view of a run: current step, attempt n/max, elapsed, budget left, last failure, plan version,
 * replans and metrics.
 */
export function operatorView(state: OperatorState, options: OperatorViewOptions = {}): string[] {
  const now = options.now ?? Date.now();
  const plan = state.plan;
  // A finished run has no current step, only the one it failed on, if any.
  const current =
    plan?.steps.find((s) => state.steps[s.id]?.status === "running") ??
    plan?.steps.find((s) => state.steps[s.id]?.status === "failed") ??
    (FINISHED.has(state.status)
      ? undefined
      : [...(plan?.steps ?? [])].reverse().find((s) => (state.steps[s.id]?.attempts ?? 0) > 0));
  const run = current ? state.steps[current.id] : undefined;
  const max = current
    ? current.human
      ? 1
      : (current.retry?.maxAttempts ??
        options.defaultRetry?.maxAttempts ??
        state.budget.maxAttempts ??
        DEFAULT_RETRY.maxAttempts)
    : 0;
  const started = Object.values(state.steps)
    .map((s) => (s.startedAt ? Date.parse(s.startedAt) : Number.NaN))
    .filter((t) => !Number.isNaN(t));
  const elapsed = started.length > 0 ? (now - Math.min(...started)) / 1000 : 0;
  const lastFailure = state.decisions.findLast((d) => !isConcurrencyRecord(d));
  const others = (plan?.steps ?? []).filter((s) => s !== current && state.steps[s.id]?.status === "running");
  const together =
    others.length > 0 && run?.status === "running"
      ? ` (+${others.length} running: ${others.map((s) => s.id).join(", ")})`
      : "";
  const m = planMetrics(state);
  const pct = (x: number | null) => (x === null ? "n/a" : `${Math.round(x * 100)}%`);
  const budget =
    state.budget.maxCost !== undefined
      ? `$${(state.budget.maxCost - state.budget.spent).toFixed(2)} remaining of $${state.budget.maxCost.toFixed(2)}`
      : `$${state.budget.spent.toFixed(2)} spent (no limit)`;
  return [
    `step: ${current?.id ?? "-"}${together}`,
    `status: ${statusLabel(state.status, state.outcome)}${current ? ` (attempt ${run?.attempts ?? 0}/${max})` : ""}`,
    `elapsed: ${elapsed.toFixed(1)}s`,
    `budget: ${budget}; replans $${state.budget.replanSpent.toFixed(2)}`,
    `last_failure: ${lastFailure ? `${lastFailure.stepId ?? "-"} ${decisionLine(lastFailure)}` : "null"}`,
    `plan_version: ${plan?.version ?? 0}, ${replansLine(m)}${extensionsLine(m, plan?.complete)}`,
    `metrics: decisions ${m.decisions} · tool attempts ${m.toolAttempts} · first-replan success ` +
      `${m.firstReplanSuccess === null ? "n/a" : m.firstReplanSuccess ? "yes" : "no"} · trusted carry ` +
      `${pct(m.trustedCarryRate)} · retry exhaustion ` +
      `${pct(m.retryExhaustionRate)}${m.doneByPerson ? ` · done by a person ${m.doneByPerson}` : ""}`,
    ...stallsLine(state, now, options.stallFactor ?? 2),
    ...compensationSummary(m.compensations),
    ...inDoubtSummary({
      verified: m.effectsVerified,
      notHappened: m.effectsNotHappened,
      recalled: m.effectsRecalled,
      asked: m.effectsInDoubt,
      happened: m.effectsHappened,
      retried: m.effectsRetried,
    }),
    ...(state.status === "awaiting_human" ? inDoubtNow(state.pendingHuman) : []),
    ...watchSummary(state.watches),
    ...modelsLine(state),
  ];
}

/**
 * Steps running past `stallFactor` × their estimate now, and attempts that ran past it (docs/architecture.md "Long
 * goals").
 */
function stallsLine(state: OperatorState, now: number, factor: number): string[] {
  const marks: string[] = [];
  for (const step of state.plan?.steps ?? []) {
    const run = state.steps[step.id];
    if (!run || step.estimateMs === undefined) continue;
    const ran = run.startedAt ? (run.endedAt ? Date.parse(run.endedAt) : now) - Date.parse(run.startedAt) : 0;
    const still = run.status === "running" && ran >= step.estimateMs * factor;
    if (still) marks.push(`${step.id} running ${(ran / step.estimateMs).toFixed(1)}× its estimate (STALLED)`);
    else if (run.stalled) marks.push(`${step.id} ran ${(ran / step.estimateMs).toFixed(1)}× its estimate`);
  }
  return marks.length > 0 ? [`stalls: ${marks.join("; ")}`] : [];
}

/** Agent steps' model calls, cost per tier. */
function modelsLine(state: OperatorState): string[] {
  const rows = costsByTier(state.usage);
  return rows.length > 0 ? [`models: ${tierCostLine(rows)}`] : [];
}

function replansLine(m: PlanMetrics): string {
  if (m.replans === 0) return "no replans triggered";
  return `${m.replans} replan${m.replans > 1 ? "s" : ""} (${m.localReplans} local, ${m.globalReplans} global)`;
}

/** A rolling horizon: how often the plan was extended, and whether more is to come. */
function extensionsLine(m: PlanMetrics, complete: boolean | undefined): string {
  if (m.extensions === 0 && complete !== false) return "";
  const more = complete === false ? "; more steps to be planned" : "";
  return `, ${m.extensions} extension${m.extensions === 1 ? "" : "s"}${more}`;
}

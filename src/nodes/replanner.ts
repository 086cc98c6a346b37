/**
 * The replanner node: computes the scope, relabels facts, asks the Planner for replacement
 * steps for that scope only, validates and merges them, bumps the plan version, and writes a
 * replan record. Guardrails that only the replanner can see (backtrack depth and count,
 * no-progress, failed replans) escalate from here, with their rule ids in `decisions`.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../runtime/options.js";
import type { PlanManagerStateType, PlanManagerUpdate, ReplanGuards, UsageEntry } from "../runtime/state.js";
import { enrichDraft } from "../plan/enrich.js";
import { factValues } from "../plan/facts.js";
import { hasRun, historyEntry } from "../plan/history.js";
import { isFinished } from "../plan/ready.js";
import type { Decision, Plan, PlanDraft, ReplanRecord, Step, StepRun } from "../plan/schema.js";
import { formatIssues, validatePlan } from "../plan/validate.js";
import { describeApproach, fingerprint, globalScope, localScope } from "../policy/scope.js";
import {
  backtrackDepthGuard,
  backtracksGuard,
  failedReplan,
  noProgressGuard,
  type GuardHit,
} from "../policy/replan-guards.js";
import { mergeSteps, sameStep, withRevalidation } from "../policy/replan-merge.js";
import { falsify, type Falsification } from "../runtime/falsify.js";
import { isPlanManagerError } from "../errors.js";
import { emit } from "../runtime/events.js";
import { PLAN_REVIEW_OPTIONS, escalationPayload } from "../runtime/interrupts.js";

/** What one replan works with, read once from state. */
interface Replan {
  rt: Runtime;
  state: PlanManagerStateType;
  config: LangGraphRunnableConfig;
  plan: Plan;
  trigger: Decision;
  scope: "local" | "global";
  assumption: string | undefined;
  guards: ReplanGuards;
  falsification: Falsification;
  affectedIds: string[];
  affected: Step[];
  usage: UsageEntry[];
  at: () => string;
}

export function makeReplannerNode(rt: Runtime) {
  return async function replanner(
    state: PlanManagerStateType,
    config: LangGraphRunnableConfig,
  ): Promise<PlanManagerUpdate> {
    const r = prepare(rt, state, config);
    if (!r) return {};
    const completed = r.affected.filter((s) => isFinished(state.steps[s.id])).map((s) => s.id);
    const deep = r.scope === "local" ? backtrackDepthGuard(completed, rt.policy) : undefined;
    if (deep) return escalate(r, deep);

    const answer = await askPlanner(r);
    const budget = chargeReplan(state, r.usage);
    if ("failed" in answer) return escalate(r, answer.failed, { budget });
    const validation = validateDraft(r, answer.draft);
    if (!validation.ok) return escalate(r, failedReplan("invalid_draft", formatIssues(validation.issues)), { budget });
    const proposed = enrichDraft(validation.draft, rt.metadataOf);
    const print = fingerprint(proposed.steps, r.assumption);
    const byPerson = r.trigger.by === "person" || r.trigger.rule.startsWith("human.");
    const stuck = noProgressGuard(
      print,
      fingerprint(r.affected, r.assumption),
      r.guards.fingerprints,
      r.assumption,
      byPerson,
    );
    if (stuck) return escalate(r, stuck, { budget });
    r.guards.fingerprints = [...r.guards.fingerprints, print];

    const kept = r.plan.steps.filter((s) => !r.affectedIds.includes(s.id)).map((s) => s.id);
    const { broken, labels } = r.falsification;
    const steps = withRevalidation(
      proposed.steps,
      r.plan.steps,
      r.affectedIds,
      labels.suspect,
      state.facts,
      broken,
      kept,
    );
    // Backtracking: a completed step that comes back is re-run; bounded per step.
    const rerun = steps.filter((s) => isFinished(state.steps[s.id]) && r.affectedIds.includes(s.id)).map((s) => s.id);
    const over = backtracksGuard(rerun, r.guards.backtracks, rt.policy);
    if (over) return escalate(r, over, { budget });
    r.guards.backtracks = { ...r.guards.backtracks };
    for (const id of rerun) r.guards.backtracks[id] = (r.guards.backtracks[id] ?? 0) + 1;
    return apply(r, { ...proposed, steps }, rerun, budget);
  };
}

function prepare(rt: Runtime, state: PlanManagerStateType, config: LangGraphRunnableConfig): Replan | undefined {
  const current = state.plan;
  const trigger = state.decisions[state.decisions.length - 1];
  if (!current || !trigger) return undefined;
  const scope = trigger.action === "replan_local" && trigger.brokenAssumption ? "local" : "global";
  const guards: ReplanGuards = { ...state.guards, count: state.guards.count + 1 };
  // A falsified assumption is falsified for good: only an assumption the evidence names.
  const falsification = falsify(state, trigger);
  guards.falsified = falsification.falsified;
  const deviation = state.deviation;
  const failedStep = deviation?.stepId && state.steps[deviation.stepId]?.status === "failed" ? [deviation.stepId] : [];
  const affectedIds =
    scope === "local" ? localScope(current, trigger.brokenAssumption!, failedStep) : globalScope(current, state.steps);
  const affected = current.steps.filter((s) => affectedIds.includes(s.id));
  // Approaches already tried are handed to the planner as `excluded`.
  const attempted = affected.filter((s) => (state.steps[s.id]?.attempts ?? 0) > 0).map(describeApproach);
  guards.tried = [...new Set([...guards.tried, ...attempted])];
  const at = () => new Date(rt.clock.now()).toISOString();
  const assumption = trigger.brokenAssumption;
  return {
    rt,
    state,
    config,
    plan: current,
    trigger,
    scope,
    assumption,
    guards,
    falsification,
    affectedIds,
    affected,
    usage: [],
    at,
  };
}

/** Facts with the labels this replan gives them. */
const labelled = (r: Replan) => ({ ...r.state.facts, ...r.falsification.labels.facts });

function validateDraft(r: Replan, draft: unknown) {
  const kept = r.plan.steps.filter((s) => !r.affectedIds.includes(s.id));
  return validatePlan(draft, {
    tools: r.rt.toolNames,
    policy: r.rt.policy,
    falsified: r.guards.falsified,
    externalSteps: kept.map((s) => s.id),
    externalAssumptions: r.plan.assumptions.map((a) => a.id),
    toolArguments: r.rt.toolArguments,
    // Invalidated facts never reach a step; suspect ones may be re-validated by re-running their producer.
    availableFacts: [
      ...Object.entries(labelled(r))
        .filter(([, f]) => f.label !== "invalidated")
        .map(([k]) => k),
      ...kept.flatMap((s) => s.produces ?? []),
    ],
  });
}

async function askPlanner(r: Replan): Promise<{ draft: unknown } | { failed: GuardHit }> {
  const { state, rt } = r;
  const facts = { ...state.facts, ...r.falsification.labels.facts };
  const { maxCost, maxReplanCost } = rt.policy.budget;
  try {
    const draft = await rt.planner.replan!({
      goal: state.goal,
      scope: r.scope,
      trigger: `${r.trigger.reason} [${r.trigger.rule}]`,
      ...(r.assumption !== undefined ? { brokenAssumption: r.assumption } : {}),
      plan: r.plan,
      affectedSteps: r.affected,
      facts: { trusted: factValues(facts), suspect: factValues(facts, "suspect") },
      excluded: r.guards.tried,
      scopeChanges: state.scopeChanges,
      constraints: r.guards.constraints,
      budget: {
        ...(maxCost !== undefined ? { remaining: Math.max(0, maxCost - state.budget.spent) } : {}),
        ...(maxReplanCost !== undefined
          ? { replanRemaining: Math.max(0, maxReplanCost - state.budget.replanSpent) }
          : {}),
      },
      tools: rt.toolInfo,
      validate: (d) => {
        const v = validateDraft(r, d);
        return v.ok ? [] : v.issues;
      },
      reportUsage: (u) => r.usage.push({ ...u, purpose: "replan", at: r.at() }),
    });
    return { draft };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // A draft the planner could not make valid is an invalid draft; anything else, a planner error.
    const kind = isPlanManagerError(error) && error.code === "invalid_plan" ? "invalid_draft" : "planner_error";
    return { failed: { ...failedReplan(kind, message), reason: `the planner failed to replan: ${message}` } };
  }
}

/** A guard stopped the replan: the evidence stands (falsified, relabelled), a person decides. */
function escalate(r: Replan, hit: GuardHit, extra: PlanManagerUpdate = {}): PlanManagerUpdate {
  const decision: Decision = {
    seq: r.state.decisions.length + 1,
    ...(r.trigger.stepId !== undefined ? { stepId: r.trigger.stepId } : {}),
    attempt: r.trigger.attempt,
    failureClass: r.trigger.failureClass,
    action: "escalate",
    rule: hit.rule,
    reason: hit.reason,
    planVersion: r.plan.version,
    at: r.at(),
    ...(r.assumption !== undefined ? { brokenAssumption: r.assumption } : {}),
  };
  emit(r.config, { type: "decision", decision });
  const pendingHuman = escalationPayload({ ...r.state, decisions: [...r.state.decisions, decision] }, decision);
  const { usage, guards } = r;
  return {
    usage,
    ...extra,
    decisions: decision,
    guards,
    facts: r.falsification.labels.facts,
    status: "awaiting_human",
    pendingHuman,
    deviation: null,
  };
}

/** The new plan version: merged steps, reset records (with this version's kept in history), the record. */
function apply(
  r: Replan,
  replacement: PlanDraft,
  rerun: readonly string[],
  budget: PlanManagerUpdate["budget"],
): PlanManagerUpdate {
  const { state, plan: previous, affectedIds, guards } = r;
  const version = previous.version + 1;
  const merged = mergeSteps(previous.steps, affectedIds, replacement.steps);
  const known = new Set(previous.assumptions.map((a) => a.id));
  const next: Plan = {
    version,
    steps: merged,
    assumptions: [...previous.assumptions, ...(replacement.assumptions ?? []).filter((a) => !known.has(a.id))],
  };
  if (replacement.rationale !== undefined) next.rationale = replacement.rationale;
  const nextIds = new Set(merged.map((s) => s.id));
  const stepRuns: Record<string, StepRun> = {};
  for (const id of affectedIds)
    if (!nextIds.has(id)) stepRuns[id] = { ...(state.steps[id] ?? { attempts: 0 }), status: "invalidated" };
  // Idempotency keys name the operation (plan/operation.ts), so a reset record carries nothing over.
  for (const s of replacement.steps) stepRuns[s.id] = { status: "pending", attempts: 0 };
  // The attempts of this version stay readable after the reset (`runsAtVersion`, the debug view, the report):
  // the records this replan resets or removes, and which steps had not started (so later runs don't show here).
  const history = historyEntry(previous, next);
  const ended = Object.keys(stepRuns).filter((id) => hasRun(state.steps[id]));
  if (ended.length > 0) history.runs = Object.fromEntries(ended.map((id) => [id, state.steps[id]!]));
  const notStarted = previous.steps.filter((s) => !hasRun(state.steps[s.id])).map((s) => s.id);
  if (notStarted.length > 0) history.notStarted = notStarted;
  if (r.assumption !== undefined) guards.lastReplanAt = { ...guards.lastReplanAt, [r.assumption]: guards.successes };
  const record = replanRecord(r, next, replacement.steps, rerun);
  emit(r.config, { type: "replan", record });
  const update: PlanManagerUpdate = {
    plan: next,
    planHistory: history,
    steps: stepRuns,
    facts: r.falsification.labels.facts,
    replans: record,
  };
  Object.assign(update, { guards, usage: r.usage, budget, deviation: null, status: "running" });
  if (r.scope === "global" && state.scopeChanges.length > 0) update.scopeChanges = [];
  if (r.rt.reviewReplans) {
    update.status = "awaiting_review";
    const steps = next.steps.map((s) => ({ id: s.id, goal: s.goal, tool: s.tool ?? null }));
    update.pendingHuman = {
      kind: "plan_review",
      reason: `approve plan version ${version} (${record.scope} replan: ${record.trigger})`,
      planVersion: version,
      options: [...PLAN_REVIEW_OPTIONS],
      context: { goal: state.goal, replan: record, steps },
    };
  }
  return update;
}

function replanRecord(r: Replan, next: Plan, replacement: readonly Step[], rerun: readonly string[]): ReplanRecord {
  const { plan: previous, affectedIds, trigger, assumption } = r;
  const nextIds = new Set(next.steps.map((s) => s.id));
  const replacedIds = new Set(replacement.map((s) => s.id));
  const before = new Map(previous.steps.map((s) => [s.id, s]));
  const { labels } = r.falsification;
  const record: ReplanRecord = {
    trigger: `${trigger.rule}: ${trigger.reason}`,
    ...(assumption !== undefined ? { brokenAssumption: assumption } : {}),
    scope: r.scope,
    fromVersion: previous.version,
    toVersion: next.version,
    invalidatedSteps: affectedIds.filter((id) => !nextIds.has(id)),
    // Kept: untouched, or handed back by the planner exactly as it was (it still re-runs if it was in scope).
    preservedSteps: next.steps.filter((s) => !replacedIds.has(s.id) || sameStep(before.get(s.id), s)).map((s) => s.id),
    newSteps: replacement.filter((s) => !before.has(s.id)).map((s) => s.id),
    facts: { trusted: labels.trusted, suspect: labels.suspect, invalidated: labels.invalidated },
    at: r.at(),
  };
  if (rerun.length > 0) record.revalidatedSteps = [...rerun];
  const changedSteps = replacement.filter((s) => before.has(s.id) && !sameStep(before.get(s.id), s)).map((s) => s.id);
  if (changedSteps.length > 0) record.changedSteps = changedSteps;
  const others = (previous.steps.find((s) => s.id === trigger.stepId)?.assumptions ?? []).filter(
    (a) => a !== assumption,
  );
  if (trigger.failureClass === "success_signal_unmet" && others.length > 0) record.suspectAssumptions = others;
  return record;
}

function chargeReplan(state: PlanManagerStateType, usage: UsageEntry[]) {
  const cost = usage.reduce((sum, u) => sum + u.cost, 0);
  return { ...state.budget, replanSpent: state.budget.replanSpent + cost };
}

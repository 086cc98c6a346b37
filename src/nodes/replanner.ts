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
import { canonical } from "../plan/diff.js";
import { historyEntry } from "../plan/history.js";
import { isFinished } from "../plan/ready.js";
import type { Decision, FailureClass, Plan, ReplanRecord, Step, StepRun } from "../plan/schema.js";
import { formatIssues, validatePlan } from "../plan/validate.js";
import { describeApproach, fingerprint, globalScope, localScope } from "../policy/scope.js";
import { falsify } from "../runtime/falsify.js";
import { isPlanManagerError } from "../errors.js";
import { emit } from "../runtime/events.js";
import { PLAN_REVIEW_OPTIONS, escalationPayload } from "../runtime/interrupts.js";

export function makeReplannerNode(rt: Runtime) {
  return async function replanner(state: PlanManagerStateType, config: LangGraphRunnableConfig): Promise<PlanManagerUpdate> {
    const plan = state.plan;
    const trigger = state.decisions[state.decisions.length - 1];
    if (!plan || !trigger) return {};
    const at = () => new Date(rt.clock.now()).toISOString();
    const scope: "local" | "global" = trigger.action === "replan_local" && trigger.brokenAssumption ? "local" : "global";
    const assumption = trigger.brokenAssumption;
    const deviation = state.deviation;
    const fromHuman = trigger.rule.startsWith("human.");
    const guards: ReplanGuards = { ...state.guards, count: state.guards.count + 1 };

    // A falsified assumption is falsified for good: only an assumption the evidence names.
    const { broken, falsified, labels } = falsify(state, trigger);
    guards.falsified = falsified;

    const failedStep = deviation?.stepId && state.steps[deviation.stepId]?.status === "failed" ? [deviation.stepId] : [];
    const affectedIds = scope === "local" ? localScope(plan, assumption!, failedStep) : globalScope(plan, state.steps);
    const affected = plan.steps.filter((s) => affectedIds.includes(s.id));
    const completedInScope = affected.filter((s) => isFinished(state.steps[s.id]));

    const tried = [...guards.tried];
    for (const s of affected) {
      const run = state.steps[s.id];
      if (run && run.attempts > 0) {
        const approach = describeApproach(s);
        if (!tried.includes(approach)) tried.push(approach);
      }
    }
    guards.tried = tried;

    const escalate = (rule: string, reason: string, failureClass: FailureClass = trigger.failureClass, extra: PlanManagerUpdate = {}): PlanManagerUpdate => {
      const decision: Decision = {
        seq: state.decisions.length + 1,
        ...(trigger.stepId !== undefined ? { stepId: trigger.stepId } : {}),
        attempt: trigger.attempt,
        failureClass,
        action: "escalate",
        rule,
        reason,
        planVersion: plan.version,
        at: at(),
        ...(assumption !== undefined ? { brokenAssumption: assumption } : {}),
      };
      emit(config, { type: "decision", decision });
      const withDecision = { ...state, decisions: [...state.decisions, decision] };
      return { ...extra, decisions: decision, guards, facts: labels.facts, status: "awaiting_human", pendingHuman: escalationPayload(withDecision, decision), deviation: null };
    };

    if (scope === "local" && completedInScope.length > rt.policy.maxBacktrackDepth) {
      return escalate("guard.max-backtrack-depth", `the replan would re-validate ${completedInScope.length} completed steps (${completedInScope.map((s) => s.id).join(", ")}); policy.maxBacktrackDepth = ${rt.policy.maxBacktrackDepth}`);
    }

    const usage: UsageEntry[] = [];
    const validateMerged = (draft: unknown) => {
      const kept = plan.steps.filter((s) => !affectedIds.includes(s.id));
      const result = validatePlan(draft, {
        tools: rt.toolNames,
        policy: rt.policy,
        falsified: guards.falsified,
        externalSteps: kept.map((s) => s.id),
        externalAssumptions: plan.assumptions.map((a) => a.id),
        toolArguments: rt.toolArguments,
        availableFacts: [...Object.keys(state.facts), ...kept.flatMap((s) => s.produces ?? [])],
      });
      return result;
    };
    const trustedValues = factValues({ ...state.facts, ...labels.facts });
    const suspectValues = factValues({ ...state.facts, ...labels.facts }, "suspect");
    const maxCost = rt.policy.budget.maxCost;
    const maxReplanCost = rt.policy.budget.maxReplanCost;

    let draft;
    try {
      draft = await rt.planner.replan!({
        goal: state.goal,
        scope,
        trigger: `${trigger.reason} [${trigger.rule}]`,
        ...(assumption !== undefined ? { brokenAssumption: assumption } : {}),
        plan,
        affectedSteps: affected,
        facts: { trusted: trustedValues, suspect: suspectValues },
        excluded: tried,
        scopeChanges: state.scopeChanges,
        constraints: guards.constraints,
        budget: {
          ...(maxCost !== undefined ? { remaining: Math.max(0, maxCost - state.budget.spent) } : {}),
          ...(maxReplanCost !== undefined ? { replanRemaining: Math.max(0, maxReplanCost - state.budget.replanSpent) } : {}),
        },
        tools: rt.toolInfo,
        validate: (d) => {
          const r = validateMerged(d);
          return r.ok ? [] : r.issues;
        },
        reportUsage: (u) => usage.push({ ...u, purpose: "replan", at: at() }),
      });
    } catch (error) {
      const budget = chargeReplan(state, usage);
      const invalid = isPlanManagerError(error) && error.code === "invalid_plan";
      return escalate(invalid ? "replan.invalid-draft" : "replan.planner-error", `the planner failed to replan: ${error instanceof Error ? error.message : String(error)}`, trigger.failureClass, { usage, budget });
    }
    const budget = chargeReplan(state, usage);
    const validation = validateMerged(draft);
    if (!validation.ok) {
      return escalate("replan.invalid-draft", `the replacement steps were rejected:\n${formatIssues(validation.issues)}`, trigger.failureClass, { usage, budget });
    }
    const proposed = enrichDraft(validation.draft, rt.metadataOf);
    const print = fingerprint(proposed.steps, assumption);
    if (!fromHuman && (guards.fingerprints.includes(print) || print === fingerprint(affected, assumption))) {
      return escalate("guard.no-progress", `the planner proposed the same steps again for ${assumption ? `assumption "${assumption}"` : "this trigger"}; that is not progress`, trigger.failureClass, { usage, budget });
    }
    guards.fingerprints = [...guards.fingerprints, print];
    const replacement = { ...proposed, steps: withRevalidation(proposed.steps, plan.steps, affectedIds, labels.suspect, state.facts, broken, plan.steps.filter((s) => !affectedIds.includes(s.id)).map((s) => s.id)) };

    // Backtracking: a completed step that comes back is re-run; bounded per step.
    const previousRuns = state.steps;
    const rerun = replacement.steps.filter((s) => isFinished(previousRuns[s.id]) && affectedIds.includes(s.id));
    const over = rerun.find((s) => (guards.backtracks[s.id] ?? 0) >= rt.policy.maxBacktracksPerStep);
    if (over) {
      return escalate("guard.max-backtracks", `step "${over.id}" was already re-run ${guards.backtracks[over.id]} times by backtracking (policy.maxBacktracksPerStep = ${rt.policy.maxBacktracksPerStep})`, trigger.failureClass, { usage, budget });
    }
    guards.backtracks = { ...guards.backtracks };
    for (const s of rerun) guards.backtracks[s.id] = (guards.backtracks[s.id] ?? 0) + 1;

    const version = plan.version + 1;
    const merged = mergeSteps(plan.steps, affectedIds, replacement.steps);
    const knownAssumptions = new Set(plan.assumptions.map((a) => a.id));
    const next: Plan = {
      version,
      steps: merged,
      assumptions: [...plan.assumptions, ...(replacement.assumptions ?? []).filter((a) => !knownAssumptions.has(a.id))],
    };
    if (replacement.rationale !== undefined) next.rationale = replacement.rationale;
    const nextIds = new Set(merged.map((s) => s.id));
    const replacedIds = new Set(replacement.steps.map((s) => s.id));

    const stepRuns: Record<string, StepRun> = {};
    for (const id of affectedIds) {
      if (!nextIds.has(id)) stepRuns[id] = { ...(previousRuns[id] ?? { attempts: 0 }), status: "invalidated" };
    }
    // Idempotency keys name the operation (plan/operation.ts), so a reset record carries nothing over.
    for (const s of replacement.steps) stepRuns[s.id] = { status: "pending", attempts: 0 };
    // The attempts of this version stay readable after the reset (`runsAtVersion`, the debug view, the report).
    const history = historyEntry(plan, next);
    const ended = Object.keys(stepRuns).filter((id) => (previousRuns[id]?.attempts ?? 0) > 0 || previousRuns[id]?.status === "skipped");
    if (ended.length > 0) history.runs = Object.fromEntries(ended.map((id) => [id, previousRuns[id]!]));
    if (assumption !== undefined) guards.lastReplanAt = { ...guards.lastReplanAt, [assumption]: guards.successes };

    const record: ReplanRecord = {
      trigger: `${trigger.rule}: ${trigger.reason}`,
      ...(assumption !== undefined ? { brokenAssumption: assumption } : {}),
      scope,
      fromVersion: plan.version,
      toVersion: version,
      invalidatedSteps: affectedIds.filter((id) => !nextIds.has(id)),
      preservedSteps: merged.filter((s) => !replacedIds.has(s.id)).map((s) => s.id),
      newSteps: replacement.steps.filter((s) => !plan.steps.some((p) => p.id === s.id)).map((s) => s.id),
      facts: { trusted: labels.trusted, suspect: labels.suspect, invalidated: labels.invalidated },
      at: at(),
    };
    if (rerun.length > 0) record.revalidatedSteps = rerun.map((s) => s.id);
    const changedSteps = replacement.steps.filter((s) => changed(plan.steps.find((p) => p.id === s.id), s)).map((s) => s.id);
    if (changedSteps.length > 0) record.changedSteps = changedSteps;
    const others = (plan.steps.find((s) => s.id === trigger.stepId)?.assumptions ?? []).filter((a) => a !== assumption);
    if (trigger.failureClass === "success_signal_unmet" && others.length > 0) record.suspectAssumptions = others;
    emit(config, { type: "replan", record });

    const update: PlanManagerUpdate = {
      plan: next,
      planHistory: history,
      steps: stepRuns,
      facts: labels.facts,
      replans: record,
      guards,
      usage,
      budget,
      deviation: null,
      status: "running",
    };
    if (scope === "global" && state.scopeChanges.length > 0) update.scopeChanges = [];
    if (rt.reviewReplans) {
      update.status = "awaiting_review";
      update.pendingHuman = {
        kind: "plan_review",
        reason: `approve plan version ${version} (${record.scope} replan: ${record.trigger})`,
        planVersion: version,
        options: [...PLAN_REVIEW_OPTIONS],
        context: { goal: state.goal, replan: record, steps: next.steps.map((s) => ({ id: s.id, goal: s.goal, tool: s.tool ?? null })) },
      };
    }
    return update;
  };
}

/**
 * Re-validation of suspect facts: when a replacement step needs a suspect fact and the step
 * that produced it was in scope but not proposed again, that producer is re-run first (without
 * the falsified assumption). Its fresh output is trusted again; if it fails, the fact stays
 * out of reach of every step. Bounded like any backtrack.
 */
function withRevalidation(
  replacement: readonly Step[],
  current: readonly Step[],
  affectedIds: readonly string[],
  suspect: readonly string[],
  facts: PlanManagerStateType["facts"],
  broken: readonly string[],
  kept: readonly string[],
): Step[] {
  const proposed = new Set(replacement.map((s) => s.id));
  // A fact the replacement produces again needs no re-validation.
  const reproduced = new Set(replacement.flatMap((s) => s.produces ?? []));
  const added: Step[] = [];
  const out = replacement.map((step) => {
    const extraDeps: string[] = [];
    for (const key of step.inputs ?? []) {
      if (!suspect.includes(key) || reproduced.has(key)) continue;
      const producer = current.find((s) => s.id === facts[key]?.producedBy);
      if (!producer || !affectedIds.includes(producer.id)) continue;
      const depsOk = (producer.dependsOn ?? []).every((d) => kept.includes(d) || proposed.has(d) || added.some((a) => a.id === d));
      if (!depsOk) continue;
      if (!proposed.has(producer.id) && !added.some((a) => a.id === producer.id)) {
        added.push({ ...producer, assumptions: (producer.assumptions ?? []).filter((a) => !broken.includes(a)) });
      }
      if (!(step.dependsOn ?? []).includes(producer.id)) extraDeps.push(producer.id);
    }
    return extraDeps.length > 0 ? { ...step, dependsOn: [...(step.dependsOn ?? []), ...extraDeps] } : step;
  });
  return [...added, ...out];
}

function chargeReplan(state: PlanManagerStateType, usage: UsageEntry[]) {
  const cost = usage.reduce((sum, u) => sum + u.cost, 0);
  return { ...state.budget, replanSpent: state.budget.replanSpent + cost };
}

/** Replacement steps take the place of the first affected step; everything else keeps its order. */
function mergeSteps(steps: readonly Step[], affected: readonly string[], replacement: readonly Step[]): Step[] {
  const out: Step[] = [];
  let inserted = false;
  for (const step of steps) {
    if (affected.includes(step.id)) {
      if (!inserted) {
        out.push(...replacement);
        inserted = true;
      }
      continue;
    }
    out.push(step);
  }
  if (!inserted) out.push(...replacement);
  return out;
}

/** A step kept by id whose definition changed (tool, arguments, inputs, dependencies, …). */
function changed(before: Step | undefined, after: Step): boolean {
  return before !== undefined && canonical(before) !== canonical(after);
}

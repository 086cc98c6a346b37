/**
 * The checks every replan draft goes through before it becomes a plan version, whoever wrote it
 * (the planner or replan memory): validation, enrichment, the no-progress guard, re-validation
 * of suspect facts, and the backtracking bound. Nothing is written here: the replanner commits
 * the guards' counters only for the draft it applies, so a rejected draft from memory leaves no
 * trace before the planner is asked.
 */
import { enrichDraft } from "../../plan/enrich.js";
import { isFinished } from "../../plan/ready.js";
import type { PlanDraft, Step } from "../../plan/schema.js";
import { formatIssues, type PlanIssue } from "../../plan/validate.js";
import {
  backtracksGuard,
  failedReplan,
  noProgressGuard,
  sendBackDraft,
  type GuardHit,
} from "../../policy/replan-guards.js";
import { droppedFacts, keptSteps } from "../../policy/replan-keep.js";
import { withRevalidation } from "../../policy/replan-merge.js";
import { fingerprint } from "../../policy/scope.js";
import { labelled, validateReplanDraft, type Replan } from "./context.js";
import { rejectRecalled, recallReplan, type Recall } from "./recall.js";
import { askPlanner, type PlannerAnswer } from "./request.js";

export interface ShapedDraft {
  /** The draft, validated and enriched (its own steps, without re-validation steps). */
  proposed: ReturnType<typeof enrichDraft>;
  /** The replacement as it enters the plan: producers of suspect facts re-run first. */
  steps: Step[];
  /** Completed steps of the scope that run again (backtracking). */
  rerun: string[];
  print: string;
  /** Steps of the scope the draft left out that stay (policy/replan-keep.ts): not part of its answer. */
  kept: string[];
}

/** A draft that did not make it: the guard that stopped it, and the typed issues when it was invalid. */
export interface StoppedDraft {
  hit: GuardHit;
  issues?: PlanIssue[];
}

/**
 * The replacement for this replan: replan memory's draft first (reuse), else the planner's; an
 * invalid draft goes back to the planner with its issues while `policy.replanDraftRetries` allows.
 */
export async function draftReplacement(r: Replan): Promise<{ drafted: StoppedDraft | ShapedDraft; recall: Recall }> {
  let recall = await recallReplan(r);
  let outcome = recall.draft ? shapeDraft(r, recall.draft) : undefined;
  if (outcome && "hit" in outcome) {
    // A remembered draft that a guard stops is the entry's failure, not this run's: the planner answers.
    recall = await rejectRecalled(r, recall, outcome.hit);
    outcome = undefined;
  }
  outcome ??= answered(r, await askPlanner(r, recall.hints));
  for (let sent = 0; "hit" in outcome && sendBackDraft(outcome.issues, sent, r.rt.policy); sent++)
    outcome = answered(r, await askPlanner(r, recall.hints, outcome.issues));
  return { drafted: outcome, recall };
}

function answered(r: Replan, answer: PlannerAnswer): StoppedDraft | ShapedDraft {
  if ("draft" in answer) return shapeDraft(r, answer.draft);
  return answer.issues ? { hit: answer.failed, issues: answer.issues } : { hit: answer.failed };
}

/** The draft with the work of the scope it leaves out kept, validated; or its issues. */
function keepingWork(r: Replan, draft: unknown): { draft: PlanDraft; kept: string[] } | StoppedDraft {
  const invalid = (issues: PlanIssue[]) => ({ hit: failedReplan("invalid_draft", formatIssues(issues)), issues });
  const first = validateReplanDraft(r, draft);
  if (!first.ok) return invalid(first.issues);
  // A scope change or a person may drop work on purpose; a repair may not.
  const byPerson = r.trigger.by === "person" || r.trigger.rule.startsWith("human.");
  if (byPerson || r.trigger.failureClass === "scope_changed") return { draft: first.draft, kept: [] };
  const scope = {
    affected: r.affected,
    broken: r.falsification.broken,
    replace: r.trigger.stepId !== undefined ? [r.trigger.stepId] : [],
  };
  const kept = r.scope === "local" ? keptSteps({ ...scope, replacement: first.draft.steps, runs: r.state.steps }) : [];
  const whole =
    kept.length > 0 ? validateReplanDraft(r, { ...first.draft, steps: [...first.draft.steps, ...kept] }) : first;
  if (!whole.ok) return invalid(whole.issues);
  const others = r.plan.steps.filter((s) => !r.affectedIds.includes(s.id));
  const trusted = new Set(
    Object.entries(labelled(r))
      .filter(([, f]) => f.label === "trusted")
      .map(([k]) => k),
  );
  const dropped = droppedFacts(scope, [...others, ...whole.draft.steps], trusted, r.plan.version);
  return dropped.length > 0 ? invalid(dropped) : { draft: whole.draft, kept: kept.map((s) => s.id) };
}

export function shapeDraft(r: Replan, draft: unknown): StoppedDraft | ShapedDraft {
  const { state, rt } = r;
  const validation = keepingWork(r, draft);
  if ("hit" in validation) return validation;
  const proposed = enrichDraft(validation.draft, rt.metadataOf);
  const print = fingerprint(proposed.steps, r.assumption);
  const byPerson = r.trigger.by === "person" || r.trigger.rule.startsWith("human.");
  const before = fingerprint(r.affected, r.assumption);
  const stuck = noProgressGuard(print, before, r.guards.fingerprints, r.assumption, byPerson);
  if (stuck) return { hit: stuck };
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
  if (over) return { hit: over };
  return { proposed, steps, rerun, print, kept: validation.kept };
}

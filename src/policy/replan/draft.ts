/**
 * The checks every replan draft goes through before it becomes a plan version, whoever wrote it
 * (the planner or replan memory): validation, enrichment, the work the draft may not drop, the
 * no-progress guard, re-validation of suspect facts, and the backtracking bound. Pure: the
 * replan's frame and the run's rules in, the shaped draft or the guard that stopped it out
 * (docs/architecture.md "The graph", replanner).
 */
import { enrichDraft, type ToolMetadata } from "../../plan/enrich.js";
import { isFinished } from "../../plan/ready.js";
import type { Plan, PlanDraft } from "../../plan/schema/plan.js";
import type { Fact, StepRun } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import { formatIssues, validatePlan, type PlanIssue } from "../../plan/validate.js";
import type { Decision } from "../ladder/decision.js";
import type { ResolvedPolicy } from "../options.js";
import { backtracksGuard, failedReplan, noProgressGuard, type GuardHit, type ReplanGuards } from "../ladder/guards.js";
import { droppedFacts, keptSteps } from "./keep.js";
import { withRevalidation } from "./merge.js";
import { fingerprint } from "./scope.js";
import type { Falsification } from "../trust/trust.js";

/** What the run lets a draft use, from its options: registry, policy, tool metadata. */
export interface DraftRules {
  tools: ReadonlySet<string>;
  agents: ReadonlySet<string>;
  policy: ResolvedPolicy;
  toolArguments: ReadonlyMap<string, readonly string[] | undefined>;
  sideEffectTools: ReadonlySet<string>;
  /** Whether the planner can extend a plan: a draft with `complete: false` needs it. */
  canExtend: boolean;
  metadataOf: (tool: string) => ToolMetadata | undefined;
  /** An executor's side effects (an agent's from the tools it lists); default, the tool's metadata. */
  sideEffectsOf?: ((executor: string) => readonly string[]) | undefined;
}

/** The replan a draft answers, read once from state. */
export interface DraftFrame {
  plan: Plan;
  /** Step records of the run. */
  steps: Readonly<Record<string, StepRun>>;
  /** Facts in state, before this replan relabels them (`falsification.labels`). */
  facts: Readonly<Record<string, Fact>>;
  trigger: Decision;
  scope: "local" | "global";
  assumption: string | undefined;
  affectedIds: readonly string[];
  guards: ReplanGuards;
  falsification: Falsification;
}

/** One replan's working set, read once from state: what the pure replan decision reads. */
export interface ReplanFrame extends DraftFrame {
  /** Decisions in state (for `seq`). */
  decisions: readonly Decision[];
  scopeChanges: readonly string[];
  /** When the replan is decided (a clock reading: nothing pure reads a clock). */
  at: string;
  /** The run's goal (the quality gate reads it: a fact the goal names is used). */
  goal?: string;
}

/** A draft that passed every check. */
export interface ShapedDraft {
  /** The draft, validated and enriched (its own steps, without re-validation steps). */
  proposed: PlanDraft;
  /** The replacement as it enters the plan: producers of suspect facts re-run first. */
  steps: Step[];
  /** Completed steps of the scope that run again (backtracking). */
  rerun: string[];
  print: string;
  /** Steps of the scope the draft left out that stay (policy/replan/keep.ts): not part of its answer. */
  kept: string[];
}

/** A draft that did not make it: the guard that stopped it, and the typed issues when it was invalid. */
export interface StoppedDraft {
  hit: GuardHit;
  issues?: PlanIssue[];
}

/**
 * A person's answer (a constraint, a scope change they asked for) or a trigger they caused: it
 * may repeat steps, drop work on purpose, and is never answered from replan memory.
 */
export function byPerson(trigger: Pick<Decision, "by" | "rule">): boolean {
  return trigger.by === "person" || trigger.rule.startsWith("human.");
}

/** The steps of the scope, in plan order. */
export const affectedSteps = (f: Pick<DraftFrame, "plan" | "affectedIds">): Step[] =>
  f.plan.steps.filter((s) => f.affectedIds.includes(s.id));

/** Facts with the labels this replan gives them. */
export const labelledFacts = (f: Pick<DraftFrame, "facts" | "falsification">): Record<string, Fact> => ({
  ...f.facts,
  ...f.falsification.labels.facts,
});

/** The validator with this replan's context: kept steps and their facts count as available. */
export function validateReplanDraft(
  rules: DraftRules,
  f: Pick<DraftFrame, "plan" | "affectedIds" | "guards" | "facts" | "falsification">,
  draft: unknown,
) {
  const kept = f.plan.steps.filter((s) => !f.affectedIds.includes(s.id));
  return validatePlan(draft, {
    tools: rules.tools,
    agents: rules.agents,
    policy: rules.policy,
    falsified: f.guards.falsified,
    externalSteps: kept.map((s) => s.id),
    externalAssumptions: f.plan.assumptions.map((a) => a.id),
    toolArguments: rules.toolArguments,
    sideEffectTools: rules.sideEffectTools,
    canExtend: rules.canExtend,
    // Invalidated facts never reach a step; suspect ones may be re-validated by re-running their producer.
    availableFacts: [
      ...Object.entries(labelledFacts(f))
        .filter(([, fact]) => fact.label !== "invalidated")
        .map(([k]) => k),
      ...kept.flatMap((s) => s.produces ?? []),
    ],
  });
}

/** The draft with the work of the scope it leaves out kept, validated; or its issues. */
function keepingWork(
  rules: DraftRules,
  f: DraftFrame,
  draft: unknown,
): { draft: PlanDraft; kept: string[] } | StoppedDraft {
  const invalid = (issues: PlanIssue[]) => ({ hit: failedReplan("invalid_draft", formatIssues(issues)), issues });
  const first = validateReplanDraft(rules, f, draft);
  if (!first.ok) return invalid(first.issues);
  // A scope change or a person may drop work on purpose; a repair may not.
  if (byPerson(f.trigger) || f.trigger.failureClass === "scope_changed") return { draft: first.draft, kept: [] };
  const scope = {
    affected: affectedSteps(f),
    broken: f.falsification.broken,
    replace: f.trigger.stepId !== undefined ? [f.trigger.stepId] : [],
  };
  const kept = f.scope === "local" ? keptSteps({ ...scope, replacement: first.draft.steps, runs: f.steps }) : [];
  const whole =
    kept.length > 0 ? validateReplanDraft(rules, f, { ...first.draft, steps: [...first.draft.steps, ...kept] }) : first;
  if (!whole.ok) return invalid(whole.issues);
  const others = f.plan.steps.filter((s) => !f.affectedIds.includes(s.id));
  const trusted = new Set(
    Object.entries(labelledFacts(f))
      .filter(([, fact]) => fact.label === "trusted")
      .map(([k]) => k),
  );
  const dropped = droppedFacts(scope, [...others, ...whole.draft.steps], trusted, f.plan.version);
  return dropped.length > 0 ? invalid(dropped) : { draft: whole.draft, kept: kept.map((s) => s.id) };
}

/** A draft through every check: shaped for the plan, or the guard that stopped it. */
export function shapeDraft(rules: DraftRules, f: DraftFrame, draft: unknown): StoppedDraft | ShapedDraft {
  const validation = keepingWork(rules, f, draft);
  if ("hit" in validation) return validation;
  const proposed = enrichDraft(validation.draft, rules.metadataOf);
  const print = fingerprint(proposed.steps, f.assumption);
  const before = fingerprint(affectedSteps(f), f.assumption);
  const stuck = noProgressGuard(print, before, f.guards.fingerprints, f.assumption, byPerson(f.trigger));
  if (stuck) return { hit: stuck };
  const kept = f.plan.steps.filter((s) => !f.affectedIds.includes(s.id)).map((s) => s.id);
  const { broken, labels } = f.falsification;
  const steps = withRevalidation(proposed.steps, f.plan.steps, f.affectedIds, labels.suspect, f.facts, broken, kept);
  // Backtracking: a completed step that comes back is re-run; bounded per step.
  const rerun = steps.filter((s) => isFinished(f.steps[s.id]) && f.affectedIds.includes(s.id)).map((s) => s.id);
  const over = backtracksGuard(rerun, f.guards.backtracks, rules.policy);
  if (over) return { hit: over };
  return { proposed, steps, rerun, print, kept: validation.kept };
}

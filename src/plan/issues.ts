/** What the plan validator reports: issues as data, one `code` per kind, with a path. */
import type { PlanDraft } from "./schema/plan.js";
import type { RetryPolicy } from "./schema/step.js";

/** What is wrong with a plan draft, one code per kind of problem. */
export type PlanIssueCode =
  | "schema"
  | "duplicate_id"
  | "duplicate_assumption"
  | "dangling_dependency"
  | "self_dependency"
  | "cycle"
  | "missing_tool"
  | "unknown_tool"
  | "unknown_fallback_tool"
  /** A step's `compensate` names a tool the registry does not have. */
  | "unknown_compensate_tool"
  | "human_step_with_tool"
  | "invalid_expression"
  /** A CEL expression that could cost more than an evaluation may (comprehensions nested too deep). */
  | "expression_too_costly"
  | "invalid_retry"
  | "unknown_assumption"
  | "falsified_assumption"
  | "too_large"
  /** A field the schema does not know (a typo such as `tolo`), rather than silently dropped. */
  | "unknown_field"
  /** An input the step's tool has no argument for (it would be rejected or silently dropped). */
  | "unknown_input"
  /** An input fact that neither the context nor any step produces. */
  | "unproduced_input"
  /** A draft with `complete: false` from a planner that cannot extend the plan (no `Planner.extend`). */
  | "horizon_without_extend"
  /** A replan draft that leaves a fact of the old version unproduced (work silently dropped). */
  | "dropped_fact"
  /** A step names an agent that `createPlanManager({ agents })` does not have. */
  | "unknown_agent"
  /** A step names more than one of `tool`, `agent`, `human`, `external`. */
  | "several_executors"
  /** Two side-effecting steps make the same call without `operation` labels telling them apart. */
  | "duplicate_operation"
  /** A step's `verify` names a tool the registry does not have, or one with side effects (a probe must only read). */
  | "invalid_verify_tool"
  /** A step's `freshFor` names a fact that is not one of its inputs, or a reserved name. */
  | "invalid_freshness"
  /** An assumption's `watch` names a tool the registry does not have, or one with side effects (a watcher only reads). */
  | "invalid_watch_tool"
  /** A finding of the plan quality gate that would hold the version (docs/decisions/0040-plan-quality-gate.md). */
  | "quality";

/** A problem of a plan draft: its code, where it is, and a message a model can act on. */
export interface PlanIssue {
  code: PlanIssueCode;
  path: (string | number)[];
  stepId?: string;
  message: string;
}

/** What `validatePlan` answers: the checked draft, or its issues. */
export type PlanValidation = { ok: true; draft: PlanDraft } | { ok: false; issues: PlanIssue[] };

/**
 * Names given by membership (a `Set`, or a lookup over a long plan's own indexes); listed only
 * for an error's suggestion.
 */
export interface KeyLookup extends Iterable<string> {
  has(key: string): boolean;
}

export interface ValidationContext {
  /** Names of the tools in the registry. */
  tools: ReadonlySet<string>;
  /** Names of the agents a step may name (`createPlanManager({ agents })`). Default: none. */
  agents?: ReadonlySet<string>;
  policy: { defaultRetry: RetryPolicy };
  /** Assumptions already falsified: no step may rest on them again. */
  falsified?: readonly string[];
  /** Steps outside the draft that draft steps may depend on (a replan's preserved steps). */
  externalSteps?: readonly string[] | KeyLookup;
  /** Assumptions outside the draft that steps may rest on. */
  externalAssumptions?: readonly string[];
  /**
   * Per tool, the argument names it accepts; a tool missing here, or mapped to undefined,
   * accepts any argument. Without it, inputs are not checked against tools.
   */
  toolArguments?: ReadonlyMap<string, readonly string[] | undefined>;
  /**
   * Facts available before the draft runs (the context; for a replan, the facts in state and
   * those the kept steps produce). Without it, inputs are not checked against producers.
   */
  availableFacts?: readonly string[] | KeyLookup;
  /** Ids of steps earlier plan versions removed: their records remain, so the ids may not come back. */
  retiredSteps?: readonly string[] | KeyLookup;
  /** Whether the planner can extend a plan (`Planner.extend`); a draft with `complete: false` needs it. */
  canExtend?: boolean;
  /** Tools whose metadata declares side effects; with them, calls no label tells apart are found. Default: none. */
  sideEffectTools?: ReadonlySet<string>;
}

/** Issues reported per draft at most: a hostile draft cannot flood a message or a prompt. */
export const MAX_ISSUES = 50;

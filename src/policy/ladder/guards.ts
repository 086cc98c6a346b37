/**
 * Guards that only the replanner can check, because they need the replacement steps or the
 * replan's scope: backtrack depth and count, no progress, and what a failed draft escalates as.
 * Pure: each returns the rule that fires and why, or undefined.
 */
import type { ResolvedPolicy } from "../options.js";
import type { RuleId } from "./rules.js";

/** Guardrail bookkeeping for replans and backtracking. */
export interface ReplanGuards {
  /** Replans attempted (failed ones included). */
  count: number;
  /** Assumptions proven false; never checked again, never rested on again. */
  falsified: string[];
  /** Per assumption: the success counter at its last replan (for `replanCooldownSteps`). */
  lastReplanAt: Record<string, number>;
  /** Per step: how often backtracking re-ran it. */
  backtracks: Record<string, number>;
  /** No-progress fingerprints of the replans made so far. */
  fingerprints: string[];
  /** Steps that succeeded in this run (drives the cooldown). */
  successes: number;
  /** Approaches already tried and failed, handed to the planner as `excluded`. */
  tried: string[];
  /** Constraints given by people (plan review or escalation "replan" answers). */
  constraints: string[];
}

export interface GuardHit {
  rule: RuleId;
  reason: string;
}

/**
 * The assumptions still cooling down (`guard.replan-cooldown`): replanned last when the run had
 * `lastReplanAt[a]` step successes, and fewer than `policy.replanCooldownSteps` successes since.
 */
export function coolingDown(
  lastReplanAt: Readonly<Record<string, number>>,
  successes: number,
  policy: Pick<ResolvedPolicy, "replanCooldownSteps">,
): string[] {
  return Object.entries(lastReplanAt)
    .filter(([, at]) => successes - at < policy.replanCooldownSteps)
    .map(([a]) => a);
}

/** A local replan may re-validate at most `maxBacktrackDepth` completed steps. */
export function backtrackDepthGuard(
  completedInScope: readonly string[],
  policy: Pick<ResolvedPolicy, "maxBacktrackDepth">,
): GuardHit | undefined {
  if (completedInScope.length <= policy.maxBacktrackDepth) return undefined;
  return {
    rule: "guard.max-backtrack-depth",
    reason:
      `the replan would re-validate ${completedInScope.length} completed steps (${completedInScope.join(", ")}); ` +
      `policy.maxBacktrackDepth = ${policy.maxBacktrackDepth}`,
  };
}

/**
 * The same replacement for the same broken assumption is not progress. A person's replan
 * (with a constraint) is exempt: repeating steps is their call.
 */
export function noProgressGuard(
  proposed: string,
  replaced: string,
  seen: readonly string[],
  assumption: string | undefined,
  byPerson: boolean,
): GuardHit | undefined {
  if (byPerson || (proposed !== replaced && !seen.includes(proposed))) return undefined;
  const what = assumption ? `assumption "${assumption}"` : "this trigger";
  return {
    rule: "guard.no-progress",
    reason: `the planner proposed the same steps again for ${what}; that is not progress`,
  };
}

/** A completed step may be re-run by backtracking at most `maxBacktracksPerStep` times. */
export function backtracksGuard(
  rerun: readonly string[],
  backtracks: Readonly<Record<string, number>>,
  policy: Pick<ResolvedPolicy, "maxBacktracksPerStep">,
): GuardHit | undefined {
  const over = rerun.find((id) => (backtracks[id] ?? 0) >= policy.maxBacktracksPerStep);
  if (over === undefined) return undefined;
  return {
    rule: "guard.max-backtracks",
    reason:
      `step "${over}" was already re-run ${backtracks[over] ?? 0} times by backtracking ` +
      `(policy.maxBacktracksPerStep = ${policy.maxBacktracksPerStep})`,
  };
}

/**
 * An invalid draft goes back to the planner with its issues while `policy.replanDraftRetries`
 * allows; a draft without typed issues (a planner error) or one past the bound escalates.
 */
export function sendBackDraft(
  issues: readonly unknown[] | undefined,
  sentBack: number,
  policy: Pick<ResolvedPolicy, "replanDraftRetries">,
): boolean {
  return issues !== undefined && issues.length > 0 && sentBack < policy.replanDraftRetries;
}

/** A replan that failed still counts against `maxReplans`; it escalates under one of two rules. */
/** `replan.unavailable`: the planner has no function for what is asked of it (`replan`, or `extend` at a horizon). */
export function plannerUnavailable(what: "replan" | "extend"): GuardHit {
  const reason =
    what === "replan"
      ? "the planner cannot replan (it has no replan function)"
      : "the plan is not complete, but the planner has no extend function";
  return { rule: "replan.unavailable", reason };
}

export function failedReplan(kind: "invalid_draft" | "planner_error", detail: string): GuardHit {
  return kind === "invalid_draft"
    ? { rule: "replan.invalid-draft", reason: `the replacement steps were rejected:\n${detail}` }
    : { rule: "replan.planner-error", reason: `the planner failed to replan: ${detail}` };
}

/** A human step answered after its deadline escalates instead of completing (rule `human.deadline-passed`). */
export function deadlinePassed(
  deadline: number | undefined,
  now: number,
  stepId: string,
  timeoutMs: number | undefined,
): GuardHit | undefined {
  if (deadline === undefined || now <= deadline) return undefined;
  return {
    rule: "human.deadline-passed",
    reason: `the answer to human step "${stepId}" came after its ${timeoutMs} ms deadline`,
  };
}

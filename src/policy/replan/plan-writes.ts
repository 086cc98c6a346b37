/**
 * The guards on a plan the agent writes itself inside createAgent (`write_plan`, langgraph-replan/agent):
 * each returns the rule that fires and why, or undefined, so the middleware applies a decision and
 * never chooses a rule (docs/decisions/0027-middleware-governs-every-effect-and-cost.md). Pure.
 */
import type { CapabilityFinding } from "../capability/types.js";
import type { Deviation } from "../ladder/deviation.js";
import type { ResolvedPolicy } from "../options.js";
import { noProgressGuard, type GuardHit } from "../ladder/guards.js";

/** `policy.maxReplans` bounds the revisions of a plan as it bounds the graph's replans. */
export function revisionCountGuard(count: number, policy: Pick<ResolvedPolicy, "maxReplans">): GuardHit | undefined {
  // Written as the graph writes it (`count >= maxReplans` fires), so a count that is not a number never does.
  if (!(count >= policy.maxReplans)) return undefined;
  return { rule: "guard.max-replans", reason: `${count} revisions already (policy.maxReplans = ${policy.maxReplans})` };
}

export interface RevisionProgress {
  /** The revision answers a failure or a broken assumption (the middleware's trigger). */
  triggered: boolean;
  /** Steps the revision adds or changes. */
  added: number;
  proposed: string;
  replaced: string;
  seen: readonly string[];
  assumption: string | undefined;
}

/**
 * A revision answering a failure that changes no step is not progress, nor is one that repeats a
 * replacement already made for the same trigger (the graph's no-progress fingerprint).
 */
export function revisionProgressGuard(r: RevisionProgress): GuardHit | undefined {
  if (r.triggered && r.added === 0)
    return { rule: "guard.no-progress", reason: "the revision changes no step of the failed plan" };
  return noProgressGuard(r.proposed, r.replaced, r.seen, r.assumption, false);
}

/** A first plan whose side-effecting steps carry text the model read from untrusted output waits for a person. */
export function untrustedFirstPlanGuard(findings: readonly Pick<CapabilityFinding, "detail">[]): GuardHit | undefined {
  if (findings.length === 0) return undefined;
  return { rule: "guard.untrusted-arguments", reason: findings.map((f) => f.detail).join("; ") };
}

/**
 * A plan version whose steps not yet done cannot fit `budget.maxCost` is not recorded: the agent is
 * asked for a cheaper one, as the graph asks its planner (docs/decisions/0016-replans-keep-work.md).
 */
export function cheaperPlanVerdict(deviation: Pick<Deviation, "message">) {
  return {
    rule: "budget.replan-cheaper",
    reason: `${deviation.message}; asking for a cheaper plan`,
    failureClass: "budget_exhausted",
    evidence: "budget.max-cost",
  } as const;
}

/** Guards whose reasons quote the model's own call, not anything a tool said: not untrusted text. */
const QUOTES_THE_MODEL: ReadonlySet<string> = new Set(["guard.unplanned-side-effect", "guard.untrusted-arguments"]);

export function quotesTheModel(decision: { rule: string }): boolean {
  return QUOTES_THE_MODEL.has(decision.rule);
}

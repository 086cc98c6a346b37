/**
 * The last gate before a replan commits (docs/decisions/0039-compensation.md): a version
 * that abandons committed side effects nothing can undo is not committed unseen. The proposal waits,
 * held, for a person to keep the effects (the version commits and they stand) or abort. Pure.
 */
import type { CompensationRecord } from "../../plan/schema/run.js";
import type { Decision } from "../ladder/decision.js";
import type { ProposedVersion, ReplanOutcome, VersionWrites } from "./replan.js";
import {
  abandonedBy,
  compensationRecords,
  withoutCompensation,
  type EffectsSnapshot,
} from "../compensation/abandoned.js";
import { missingDecision } from "../compensation/verdict.js";
import type { Plan } from "../../plan/schema/plan.js";

/** A committing outcome turned into a question when the version would abandon effects without `compensate`. */
export function compensationGate(
  outcome: ReplanOutcome,
  s: { plan: Plan; decisions: readonly Decision[]; notes: readonly Decision[]; trigger: Decision; at: string },
  effects: EffectsSnapshot | undefined,
): ReplanOutcome {
  if (outcome.kind !== "commit" || effects === undefined) return outcome;
  const missing = missingOf(s.plan, outcome.proposal, effects);
  if (missing.length === 0) return outcome;
  const place = { after: s.decisions.length + s.notes.length, planVersion: s.plan.version, at: s.at };
  const decision = missingDecision(missing, { ...place, trigger: s.trigger });
  return { kind: "keep-effects", decision, proposal: outcome.proposal, guards: outcome.guards, missing };
}

/** The abandoned effects of a proposal that have no compensation. */
export function missingOf(plan: Plan, proposal: ProposedVersion, effects: EffectsSnapshot) {
  return withoutCompensation(abandonedBy(plan, proposal.plan, proposal.replacement, effects));
}

/**
 * The compensations a committed version adds: pending for abandoned effects with `compensate`,
 * waived for those a person let stand. Undefined when it abandons nothing.
 */
export function versionCompensations(
  plan: Plan,
  proposal: ProposedVersion,
  effects: EffectsSnapshot | undefined,
  at: string,
): Pick<VersionWrites, "compensations"> {
  if (effects === undefined) return {};
  const abandoned = abandonedBy(plan, proposal.plan, proposal.replacement, effects);
  if (abandoned.length === 0) return {};
  const added: CompensationRecord[] = compensationRecords(abandoned, effects.facts, at);
  return { compensations: [...effects.compensations, ...added] };
}

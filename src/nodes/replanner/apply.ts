/**
 * Applies a decided replan (policy/replan/replan-step.ts) to state: an escalation with its payload, a
 * proposal held in a plan review, or the committed version (reviewed first under
 * `reviewReplans`). A replan the capability guard held is not a version yet: only a person's
 * approval commits it, so a rejected proposal never widens what later replans count as used.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../../runtime/options.js";
import type { PendingHuman, PlanManagerStateType, PlanManagerUpdate, UsageEntry } from "../../runtime/state.js";
import type { CompensationRecord, Fact } from "../../plan/schema/run.js";
import { commitVersion, type ProposedVersion } from "../../policy/replan/replan.js";
import type { Decision } from "../../policy/ladder/decision.js";
import type { ReplanDecision } from "../../policy/replan/replan-step.js";
import { emit } from "../../runtime/events.js";
import { escalationPayload } from "../../runtime/interrupts.js";
import { holdProposal, versionReview } from "../shared/plan-review.js";
import { keepEffectsQuestion } from "../shared/compensate-next.js";
import type { QualityFinding } from "../../plan/schema/quality.js";
import { qualityWrite, withFindings } from "../shared/quality-hold.js";

/** What the replan spent, and the facts it relabelled (the evidence stands whatever the outcome). */
export interface ReplanSpent {
  usage: UsageEntry[];
  /** Set once the planner (or memory) was asked. */
  budget?: PlanManagerUpdate["budget"];
  facts: Record<string, Fact>;
}

/** The decision as state writes. */
export function applyOutcome(
  rt: Runtime,
  state: PlanManagerStateType,
  config: LangGraphRunnableConfig,
  { outcome, notes, findings = [], qualityHold, compensations }: ReplanDecision,
  { usage, budget, facts }: ReplanSpent,
): PlanManagerUpdate {
  if (outcome.kind === "escalate") {
    const { decision } = outcome;
    emit(config, { type: "decision", decision });
    const pendingHuman = escalationPayload({ ...state, decisions: [...state.decisions, decision] }, decision);
    return {
      usage,
      ...(budget !== undefined ? { budget } : {}),
      decisions: [...notes, decision],
      guards: outcome.guards,
      facts,
      status: "awaiting_human" as const,
      pendingHuman,
      deviation: null,
    } satisfies PlanManagerUpdate;
  }
  const update: PlanManagerUpdate = {
    facts,
    guards: outcome.guards,
    usage,
    budget,
    deviation: null,
    ...qualityWrite(state, findings),
  };
  // Replan memory's decisions (reused, hinted, passed over) come first, whatever happens next.
  if (notes.length > 0) update.decisions = [...notes];
  const { proposal } = outcome;
  if (outcome.kind === "keep-effects") {
    // Held like a capability hold: only the person's approval commits exactly this proposal.
    const { decision } = outcome;
    emit(config, { type: "decision", decision });
    const pendingHuman = keepEffectsQuestion(state, decision, outcome.missing);
    return {
      ...update,
      decisions: [...notes, decision],
      status: "awaiting_human" as const,
      pendingHuman,
      heldReplan: proposal,
    };
  }
  if (outcome.kind === "hold") {
    const held = holdProposal(rt, state, config, { decision: outcome.decision, notes }, proposal, outcome.hit);
    return { ...update, ...held, pendingHuman: withFindings(held.pendingHuman as PendingHuman, findings) };
  }
  return committed(rt, state, config, { update, notes, proposal, findings, held: qualityHold, compensations });
}

/** The committed version, held for a person when `reviewReplans` asks or the quality gate's findings hold it. */
function committed(
  rt: Runtime,
  state: PlanManagerStateType,
  config: LangGraphRunnableConfig,
  c: {
    update: PlanManagerUpdate;
    notes: readonly Decision[];
    proposal: ProposedVersion;
    findings: readonly QualityFinding[];
    /** The quality gate's hold, decided with the outcome (policy/replan/version-quality.ts). */
    held: Decision | undefined;
    /** The compensations it writes for the effects it abandons, decided with it. */
    compensations: CompensationRecord[] | undefined;
  },
): PlanManagerUpdate {
  const { update, notes, proposal, findings, held, compensations } = c;
  emit(config, { type: "replan", record: proposal.record });
  Object.assign(update, commitVersion(state, proposal), compensations ? { compensations } : {}, { status: "running" });
  const { plan: next, record } = proposal;
  // The quality gate holds the version before its first step (docs/decisions/0040-plan-quality-gate.md).
  if (held) emit(config, { type: "decision", decision: held });
  if (!rt.reviewReplans && !held) return update;
  const reason = `approve plan version ${next.version} (${record.scope} replan: ${record.trigger})`;
  return {
    ...update,
    ...(held ? { decisions: [...notes, held] } : {}),
    status: "awaiting_review" as const,
    pendingHuman: withFindings(
      versionReview(rt, state.goal, next, record, reason),
      findings,
      held ? `${held.reason}; ${reason}` : undefined,
    ),
  };
}

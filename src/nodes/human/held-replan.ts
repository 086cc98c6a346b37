/**
 * Answers to a replan the capability guard held (docs/architecture.md "Untrusted facts"). Approve commits exactly the
 * proposal the person saw. Reject discards it — it never becomes a plan version, so its tools do
 * not count as used — and the run does not carry on with the plan that failed: the original
 * trigger escalates, where the person can retry, skip, provide, replan with a constraint or abort.
 */
import type { ResumeValue } from "../../plan/schema/interrupts.js";
import type { Decision } from "../../policy/ladder/decision.js";
import { personDecision, type Answering, type Next } from "./answer-context.js";
import { emit } from "../../runtime/events.js";
import { ESCALATION_OPTIONS, escalationPayload, offered } from "../../runtime/interrupts.js";
import { commitVersion, type ProposedVersion } from "../../policy/replan/replan.js";
import { staleHold } from "../../policy/capability/guard.js";
import { answerRule } from "../../policy/ladder/person.js";
import type { Abandoned } from "../../policy/compensation/abandoned.js";
import { missingOf, versionCompensations } from "../../policy/replan/compensation-gate.js";
import { missingDecision } from "../../policy/compensation/verdict.js";
import { effectsOf, keepEffectsQuestion } from "../shared/compensate-next.js";

/** The proposal a plan review holds (state's `heldReplan`), if it still applies to the current version. */
export function heldProposal(a: Answering): ProposedVersion | undefined {
  const held = a.pending.kind === "plan_review" ? a.state.heldReplan : null;
  return held && held.record.fromVersion === a.state.plan?.version ? held : undefined;
}

/**
 * Commits the held proposal. One that no longer applies (the plan moved on while it waited, or it
 * is gone) is not applied: the guard still stands, and the run escalates instead.
 */
export function approveHeld(a: Answering): Next {
  const proposal = heldProposal(a);
  if (!proposal) {
    const stale = staleHold(a.state.plan?.version ?? 0);
    return escalate(
      a,
      personDecision(a, stale.rule, stale.reason, { failureClass: failureClassOf(a), byPerson: false }),
    );
  }
  const effects = effectsOf(a.state, a.config);
  const missing = effects ? missingOf(a.state.plan!, proposal, effects) : [];
  if (missing.length > 0) return askToKeepEffects(a, proposal, missing);
  const { record } = proposal;
  const action = record.scope === "local" ? "replan_local" : "replan_global";
  const tools = a.pending.kind === "plan_review" ? (a.pending.context.tools ?? "") : "";
  const reason = `a person approved plan version ${record.toVersion} (${tools})`;
  const decision = personDecision(a, answerRule("approve-replan"), reason, { action, failureClass: failureClassOf(a) });
  emit(a.config, { type: "replan", record });
  const writes = {
    ...commitVersion(a.state, proposal),
    ...versionCompensations(a.state.plan!, proposal, effects, a.at),
  };
  return { goto: "executor", update: { ...writes, status: "running", decisions: decision } };
}

/** An approved proposal that abandons effects nothing undoes: held again, and the person asked about them. */
function askToKeepEffects(a: Answering, proposal: ProposedVersion, missing: Abandoned[]): Next {
  const place = { after: a.state.decisions.length, planVersion: a.state.plan?.version ?? 0, at: a.at };
  const decision = missingDecision(missing, place);
  emit(a.config, { type: "decision", decision });
  const pendingHuman = keepEffectsQuestion(a.state, decision, missing);
  return {
    goto: "human",
    update: { status: "awaiting_human", decisions: decision, pendingHuman, heldReplan: proposal },
  };
}

export function rejectHeld(a: Answering, reply: Extract<ResumeValue, { action: "reject" }>): Next {
  const proposal = heldProposal(a);
  const what = proposal ? `plan version ${proposal.record.toVersion}` : "the proposed replan";
  const why = reply.reason ? `: ${reply.reason}` : "";
  const trigger = proposal ? `; the original problem stands: ${proposal.record.trigger}` : "";
  const reason = `a person rejected ${what}${why}${trigger}`;
  return escalate(a, personDecision(a, answerRule("reject-replan"), reason, { failureClass: failureClassOf(a) }));
}

/** The original trigger escalates, with the options of an escalation. */
function escalate(a: Answering, decision: Decision): Next {
  const state = { ...a.state, decisions: [...a.state.decisions, decision] };
  const pendingHuman = escalationPayload(state, decision, offered(ESCALATION_OPTIONS, a.rt.canReplan));
  return { goto: "human", update: { status: "awaiting_human", decisions: decision, pendingHuman } };
}

/** The failure class of the trigger the held replan answered (kept in the review's context). */
function failureClassOf(a: Answering) {
  return (a.pending.kind === "plan_review" ? a.pending.context.failureClass : undefined) ?? "none";
}

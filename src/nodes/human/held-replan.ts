/**
 * Answers to a replan the capability guard held (docs/architecture.md "Untrusted facts"). Approve commits exactly the
 * proposal the person saw. Reject discards it — it never becomes a plan version, so its tools do
 * not count as used — and the run does not carry on with the plan that failed: the original
 * trigger escalates, where the person can retry, skip, provide, replan with a constraint or abort.
 */
import type { ResumeValue } from "../../plan/schema/interrupts.js";
import type { Decision } from "../../policy/ladder/decision.js";
import { decide, type Answering, type Next } from "./answer-context.js";
import { emit } from "../../runtime/events.js";
import { ESCALATION_OPTIONS, escalationPayload, offered } from "../../runtime/interrupts.js";
import { commitVersion, type ProposedVersion } from "../../policy/replan/replan.js";
import { staleHold } from "../../policy/capability/guard.js";
import { answerRule } from "../../policy/ladder/person.js";

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
    return escalate(a, decide(a, stale.rule, stale.reason, { failureClass: failureClassOf(a), byPerson: false }));
  }
  const { record } = proposal;
  const action = record.scope === "local" ? "replan_local" : "replan_global";
  const tools = a.pending.kind === "plan_review" ? (a.pending.context.tools ?? "") : "";
  const reason = `a person approved plan version ${record.toVersion} (${tools})`;
  const decision = decide(a, answerRule("approve-replan"), reason, { action, failureClass: failureClassOf(a) });
  emit(a.config, { type: "replan", record });
  return { goto: "executor", update: { ...commitVersion(a.state, proposal), status: "running", decisions: decision } };
}

export function rejectHeld(a: Answering, reply: Extract<ResumeValue, { action: "reject" }>): Next {
  const proposal = heldProposal(a);
  const what = proposal ? `plan version ${proposal.record.toVersion}` : "the proposed replan";
  const why = reply.reason ? `: ${reply.reason}` : "";
  const trigger = proposal ? `; the original problem stands: ${proposal.record.trigger}` : "";
  const reason = `a person rejected ${what}${why}${trigger}`;
  return escalate(a, decide(a, answerRule("reject-replan"), reason, { failureClass: failureClassOf(a) }));
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

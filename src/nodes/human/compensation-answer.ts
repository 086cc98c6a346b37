/**
 * Answers to a compensation question (docs/decisions/0039-compensation.md). At a replan
 * that would abandon effects nothing undoes: approve commits the held version and leaves them standing
 * (waived), abort ends the run. At a compensation that failed: retry runs it again (a fresh round of
 * its retry policy; for one whose outcome is unknown, one more call under its key), happened (an undo
 * whose outcome is unknown) records it done without calling it, skip leaves the effect standing, abort
 * (mid-run) ends the run. A run that was ending carries on to its end either way.
 */
import type { ResumeValue } from "../../plan/schema/interrupts.js";
import type { CompensationRecord } from "../../plan/schema/run.js";
import { commitVersion } from "../../policy/replan/replan.js";
import { versionCompensations } from "../../policy/replan/compensation-gate.js";
import { answerRule } from "../../policy/ladder/person.js";
import { emit } from "../../runtime/events.js";
import { effectsOf } from "../shared/compensate-next.js";
import { personDecision, running, type Answering, type Next } from "./answer-context.js";
import { withoutApproval } from "../../policy/attempt/approval.js";
import { undoRetried } from "../../policy/compensation/undo-round.js";

/** What the pending question says about compensation, when it is one. */
function compensationOf(a: Answering) {
  return a.pending.kind === "escalation" ? a.pending.context.compensation : undefined;
}

/** The answer, when it is one to a compensation question; undefined to let the usual handlers answer. */
export function compensationAnswer(a: Answering, reply: ResumeValue): Next | undefined {
  const asked = compensationOf(a);
  if (!asked || reply.action === "abort") return undefined;
  if (asked.missing && reply.action === "approve") return keepEffects(a);
  if (!asked.failed) return undefined;
  const { compensationKey } = asked.failed;
  const records = a.state.compensations ?? [];
  const settle = (change: Partial<CompensationRecord>) =>
    records.map((c) => {
      if (c.compensationKey !== compensationKey) return c;
      const { inDoubt: _inDoubt, ...rest } = withoutApproval(c);
      return { ...rest, ...change, at: a.at };
    });
  const next = (update: Next["update"]): Next =>
    asked.endStatus ? { goto: "executor", update: { status: asked.endStatus, ...update } } : running(update);
  const record = records.find((c) => c.compensationKey === compensationKey);
  if (reply.action === "retry") {
    // The new round's calls are journaled above the last one (runtime/undo.ts); an undo whose outcome
    // is unknown: the answer approves one more call under its key, the one after the call in doubt.
    const approval = undoRetried({ ...record, compensationKey, inDoubt: asked.failed.inDoubt });
    const compensations = settle({ status: "pending", attempts: 0, approval });
    const rule = answerRule(asked.failed.inDoubt ? "effect-retry" : "retry");
    const decisions = personDecision(a, rule, `a person asked to run the compensation ${compensationKey} again`);
    return next({ compensations, decisions });
  }
  if (reply.action === "happened" && asked.failed.inDoubt) return undoHappened(a, asked.failed, reply.output, next);
  if (reply.action === "skip") {
    const compensations = settle({ status: "waived" });
    const reason = `a person left the effect standing: compensation ${compensationKey} will not run again`;
    return next({ compensations, decisions: personDecision(a, answerRule("skip"), reason) });
  }
  return undefined;
}

/**
 * A person saw the undo in doubt take effect: it is done, and not called again. Its output is the
 * undo's result in the effect journal (`Next.effect`), so every branch of the thread finds it done and
 * the operation, made again, moves to a fresh key (docs/decisions/0039-compensation.md).
 */
function undoHappened(
  a: Answering,
  failed: { compensationKey: string; tool?: string },
  output: unknown,
  next: (update: Next["update"]) => Next,
): Next {
  const { compensationKey } = failed;
  const compensations = (a.state.compensations ?? []).map((c) => {
    if (c.compensationKey !== compensationKey) return c;
    const { inDoubt: _inDoubt, error: _error, ...rest } = withoutApproval(c);
    return { ...rest, status: "done" as const, at: a.at };
  });
  const reason = `a person said ${failed.tool ?? "the compensation"} under key ${compensationKey} took effect: the compensation is done and not called again`;
  const decisions = personDecision(a, answerRule("effect-happened"), reason);
  return { ...next({ compensations, decisions }), effect: { key: compensationKey, output } };
}

/** Commits the held version: the effects nothing undoes stand (waived); the others' compensations wait to run. */
function keepEffects(a: Answering): Next | undefined {
  const held = a.state.heldReplan;
  if (!held || held.record.fromVersion !== a.state.plan?.version) return undefined;
  const { record } = held;
  const action = record.scope === "local" ? "replan_local" : "replan_global";
  const reason = `a person kept the committed side effects plan version ${record.toVersion} abandons, undone`;
  const decision = personDecision(a, answerRule("approve-replan"), reason, { action });
  emit(a.config, { type: "replan", record });
  const writes = {
    ...commitVersion(a.state, held),
    ...versionCompensations(a.state.plan, held, effectsOf(a.state, a.config), a.at),
  };
  return { goto: "executor", update: { ...writes, status: "running", decisions: decision } };
}

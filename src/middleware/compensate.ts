/**
 * Compensation inside createAgent (docs/decisions/0043-effects-in-the-middleware.md): a
 * `write_plan` revision that drops a step whose effect committed abandons it. Which effects, what
 * their undo calls, the records and the decisions are the graph's (policy/compensation/,
 * docs/decisions/0039-compensation.md); here the undos run, latest commit first, each under
 * `<effect key>:compensate` through the effect journal (runtime/journaled-call.ts) and retried per
 * its step's retry policy, before the revision is recorded.
 */
import { backoffDelay, effectiveRetry } from "../plan/retry.js";
import type { Plan } from "../plan/schema/plan.js";
import type { CompensationRecord, ErrorInfo } from "../plan/schema/run.js";
import { cutByTheTool } from "../policy/ladder/in-doubt.js";
import { abandonedBy, type Abandoned } from "../policy/compensation/abandoned.js";
import { compensationDecision } from "../policy/compensation/verdict.js";
import type { Decision } from "../policy/ladder/decision.js";
import { journaledCall, type CallOutcome } from "../runtime/journaled-call.js";
import type { Revision } from "./revision.js";
import type { CallEnv } from "./settle.js";

/**
 * The committed effects a revision abandons, latest commit first: owned by a step the draft dropped,
 * unless a step it adds or changes makes the same operation again (then it is kept and reused).
 */
export function abandonedByRevision(env: CallEnv, old: Plan, rev: Revision): Abandoned[] {
  const { state } = env;
  if (rev.dropped.length === 0) return [];
  const dropped = new Set(rev.dropped);
  const next = { ...rev.plan, steps: rev.plan.steps.filter((s) => !dropped.has(s.id)) };
  const effects = {
    threadId: env.threadId,
    committed: state.sideEffects,
    compensations: state.compensations ?? [],
    facts: state.facts,
  };
  const abandoned = abandonedBy(
    old,
    next,
    rev.added.map((s) => s.id),
    effects,
  );
  // A new step without arguments takes them from the model's call: it may make the same operation
  // again (then its call reuses the effect), so an effect of its tool is kept, not undone.
  const open = new Set(
    rev.added.filter((s) => s.args === undefined).flatMap((s) => [s.tool, s.fallback?.tool].filter((t) => t)),
  );
  const tools = (s: Abandoned["step"]) => [s.tool, s.fallback?.tool].filter((t) => t !== undefined);
  return abandoned.filter((a) => !tools(a.step).some((t) => open.has(t)));
}

/** Runs the pending undos in order; each ends `done` or `failed`, with its `compensate.*` decision. */
export async function runCompensations(
  env: CallEnv,
  records: readonly CompensationRecord[],
  planVersion: number,
): Promise<{ records: CompensationRecord[]; decisions: Decision[] }> {
  const ended: CompensationRecord[] = [];
  const decisions: Decision[] = [];
  for (const record of records) {
    if (record.status !== "pending") {
      ended.push(record);
      continue;
    }
    const done = await runOne(env, record);
    ended.push(done);
    const decision = compensationDecision(done, { after: -1, planVersion, at: done.at });
    decisions.push(decision);
    env.emit({ type: "decision", decision });
    env.sent.add(decision);
  }
  return { records: ended, decisions };
}

/** One undo, until it is done or its retry policy runs out; a call in doubt is not tried again. */
async function runOne(env: CallEnv, record: CompensationRecord): Promise<CompensationRecord> {
  const policy = effectiveRetry(record.retry ? { retry: record.retry } : undefined, env.options.policy);
  const { error: _error, inDoubt: _inDoubt, approvedKey: _approved, ...rest } = record;
  const tool = record.tool!;
  const args = { ...record.args };
  const timeoutMs = env.options.policy.defaultTimeoutMs;
  let attempts = record.attempts ?? 0;
  let error: ErrorInfo = { name: "CompensationFailed", message: "not called" };
  for (let tried = 0; tried < policy.maxAttempts; tried++) {
    if (tried > 0) await env.options.sleep(backoffDelay(policy, tried, error.retryAfterMs));
    attempts++;
    const call = async (key: string): Promise<CallOutcome> => {
      const r = await env.invoke(tool, args, key, timeoutMs);
      return r.ok
        ? { ok: true, output: r.output }
        : { ok: false, error: r.error, cut: r.timeout === true || cutByTheTool(r.error) };
    };
    const made = env.journal
      ? await journaledCall({
          journal: env.journal,
          threadId: env.threadId,
          key: record.compensationKey,
          // The step's own declarations are about its tool, not its undo: only effects.honoursKeys counts.
          step: { id: record.stepId },
          tool,
          args,
          attempt: attempts,
          trusted: {},
          honoursKeys: env.options.honoursKeys,
          approvedKey: undefined,
          now: env.at,
          call,
          probe: async () => undefined,
        })
      : { kind: "answered" as const, key: record.compensationKey, outcome: await call(record.compensationKey) };
    if (made.kind === "in_doubt") {
      const doubt = { name: "EffectInDoubt", message: made.reason };
      return { ...rest, status: "failed", attempts, error: doubt, inDoubt: true, at: env.at() };
    }
    if (made.outcome.ok) return { ...rest, status: "done", attempts, at: env.at() };
    error = made.outcome.error;
  }
  return { ...rest, status: "failed", attempts, error, at: env.at() };
}

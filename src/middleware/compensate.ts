/**
 * Compensation inside createAgent (docs/decisions/0043-effects-in-the-middleware.md,
 * docs/decisions/0047-one-undo-runner.md): a `write_plan` revision that drops a step whose effect
 * committed abandons it, and a run that ends aborted abandons the effects of its plan. Which effects,
 * what their undo calls, the records, the decisions and the questions are the graph's
 * (policy/compensation/, docs/decisions/0039-compensation.md); the undos run, latest commit first,
 * through the one undo runner (runtime/undo.ts) before the next model call. This file is its port:
 * the agent's own tools called directly, and a person asked with the graph's `compensate.failed`.
 */
import { PlanManagerError } from "../errors.js";
import type { Plan } from "../plan/schema/plan.js";
import type { CompensationRecord } from "../plan/schema/run.js";
import { cutByTheTool } from "../policy/ladder/in-doubt.js";
import {
  abandonedAtEnd,
  abandonedBy,
  compensatesOn,
  compensationRecords,
  type Abandoned,
} from "../policy/compensation/abandoned.js";
import { undoOptions, undoRetried, type UndoAction } from "../policy/compensation/undo-round.js";
import type { Decision } from "../policy/ladder/decision.js";
import { errorInfo } from "../policy/ladder/deviation.js";
import { answerRule } from "../policy/ladder/person.js";
import { callTool, StepTimeout, type Invocable } from "../runtime/call-tool.js";
import type { RunJournal } from "../runtime/effect-journal.js";
import { undoNext, type UndoPort } from "../runtime/undo.js";
import { decisionAt } from "./decisions.js";
import type { AgentTool, ResolvedAgentOptions } from "./agent-options.js";
import { ask, reviewRequest } from "./person-review.js";
import type { Revision } from "./revision.js";
import type { CallEnv } from "./settle.js";
import type { AgentPlanValues } from "./agent-state.js";
import { withoutApproval } from "../policy/attempt/approval.js";

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

/** What the undos of a thread need from the middleware. */
export interface UndoContext {
  options: ResolvedAgentOptions;
  /** The agent's tools the middleware can call itself: given in `tools`, offered to the model, or met in a call. */
  tool: (name: string) => AgentTool | undefined;
  journal: RunJournal | undefined;
  threadId: string;
  at: () => string;
}

/** The middleware's port of the undo runner: the tool is called directly, under the undo's key. */
function undoPort(ctx: UndoContext, planVersion: number): UndoPort {
  const { options } = ctx;
  return {
    journal: ctx.journal,
    threadId: ctx.threadId,
    honoursKeys: options.honoursKeys,
    policy: options.policy,
    has: (name) => invocable(ctx.tool(name)) !== undefined,
    call: async (c) => {
      const configurable = { stepId: c.stepId, planVersion, attempt: c.attempt, idempotencyKey: c.key };
      const call = { tool: invocable(ctx.tool(c.tool))!, args: c.args, timeoutMs: c.timeoutMs, configurable };
      try {
        return { ok: true, output: await callTool(call, { configurable: { thread_id: ctx.threadId } }) };
      } catch (thrown) {
        const error = errorInfo(thrown);
        return { ok: false, error, cut: thrown instanceof StepTimeout || cutByTheTool(error), thrown };
      }
    },
    clock: options.clock,
    now: ctx.at,
  };
}

/** A tool the middleware can call itself (a provider's server-side tool cannot be). */
function invocable(tool: AgentTool | undefined): Invocable | undefined {
  return tool !== undefined && "invoke" in tool && typeof tool.invoke === "function" ? (tool as Invocable) : undefined;
}

/** What the undos before a model call wrote, and whether a person ended the run while asked about one. */
export interface UndosSettled {
  compensations?: CompensationRecord[];
  decisions: Decision[];
  notes: string[];
  /** Outputs a person said undos in doubt returned: written to the journal under their keys. */
  happened: { key: string; output: unknown }[];
  abort: boolean;
}

/**
 * Runs the pending undos, latest commit first; `ending`: the run ends aborted, and its plan's
 * committed effects are undone too (`policy.compensateOn`). An undo that fails, or whose outcome is
 * unknown, asks a person at once (the graph's question and answers): the undos before it are not
 * called again when the hook runs again with the answer, since the runner replays them from the
 * journal (runtime/undo.ts). Abort ends the run: the undos still waiting run before it ends.
 */
export async function settleUndos(state: AgentPlanValues, ctx: UndoContext, ending: boolean): Promise<UndosSettled> {
  const planVersion = state.plan?.version ?? 0;
  const port = undoPort(ctx, planVersion);
  let records = [...(state.compensations ?? [])];
  const out: UndosSettled = { decisions: [], notes: [], happened: [], abort: false };
  if (ending) records = [...records, ...endRecords(state, records, ctx)];
  let changed = records.length !== (state.compensations ?? []).length;
  for (;;) {
    const ran = await undoNext(port, records, { planVersion, after: -1 });
    if (ran === undefined || ran === "stopped") break;
    changed = true;
    records[ran.index] = ran.record;
    out.decisions.push(...ran.decisions);
    if (ran.record.status === "done") continue;
    const answer = askUndo(state, ran.record, ran.decisions.at(-1)!, ending || out.abort);
    const answered = answerUndo(ran.record, answer, { planVersion, at: ctx.at() });
    records[ran.index] = answered.record;
    out.decisions.push(answered.decision);
    out.notes.push(`${answered.decision.reason}.`);
    if (answer.action === "happened") out.happened.push({ key: ran.record.compensationKey, output: answer.output });
    if (answer.action === "abort" && !out.abort) {
      out.abort = true;
      records = [...records, ...endRecords({ ...state, compensations: records }, records, ctx)];
    }
  }
  if (changed) out.compensations = records;
  return out;
}

/** The undos a run ending aborted adds: one per committed effect of its plan whose step has `compensate`. */
function endRecords(state: AgentPlanValues, records: CompensationRecord[], ctx: UndoContext): CompensationRecord[] {
  if (!state.plan || !compensatesOn("aborted", ctx.options.policy.compensateOn)) return [];
  const effects = { threadId: ctx.threadId, committed: state.sideEffects, compensations: records, facts: state.facts };
  const undoable = abandonedAtEnd(state.plan, effects).filter((a) => a.step.compensate !== undefined);
  return compensationRecords(undoable, state.facts, ctx.at());
}

type UndoAnswer = { action: "retry" | "skip" | "abort" } | { action: "happened"; output: unknown };

/** The graph's `compensate.failed` question, in the middleware's vocabulary; only the offered answers are read. */
function askUndo(state: AgentPlanValues, record: CompensationRecord, decision: Decision, ending: boolean): UndoAnswer {
  const options = undoOptions(record, ending);
  const { stepId, idempotencyKey, compensationKey, tool, error, inDoubt } = record;
  const failed = { stepId, idempotencyKey, compensationKey, ...(tool ? { tool } : {}), ...(error ? { error } : {}) };
  const listed = options.map((o) => (o === "happened" ? '{ action: "happened", output }' : `{ action: "${o}" }`));
  const description = `${decision.reason} [${decision.rule}]. Answer ${listed.join(", ")}.`;
  const request = reviewRequest(
    "escalation",
    { name: tool ?? "compensation", args: { ...record.args }, description },
    { rule: decision.rule, planVersion: state.plan?.version ?? 0, stepId },
  );
  const compensation = {
    failed: { ...failed, ...(inDoubt ? { inDoubt } : {}) },
    ...(ending ? { endStatus: "aborted" } : {}),
  };
  // The graph's context of the question rides along, so one reader serves both faces' questions.
  const question = { ...request, reviewConfigs: [], options, compensation };
  return ask(question, (value) => readUndoAnswer(value, options));
}

function readUndoAnswer(value: unknown, options: readonly UndoAction[]): UndoAnswer {
  const v = typeof value === "object" && value !== null ? (value as Record<string, unknown>) : {};
  const action = v.action as UndoAction;
  if (options.includes(action)) {
    if (action === "happened" && Object.hasOwn(v, "output")) return { action, output: v.output };
    if (action === "retry" || action === "skip" || action === "abort") return { action };
  }
  const expected = options.map((o) => (o === "happened" ? '{ action: "happened", output }' : `{ action: "${o}" }`));
  throw new PlanManagerError("invalid_resume", `planMiddleware: unreadable answer; expected ${expected.join(", ")}`, {
    path: "resume",
  });
}

/**
 * A person's answer, as the graph takes it (nodes/human/compensation-answer.ts): retry runs a fresh
 * round (one more call under the key, for an undo in doubt), happened records it done without a
 * call, skip leaves the effect standing, abort ends the run with the undo left failed.
 */
function answerUndo(
  record: CompensationRecord,
  answer: UndoAnswer,
  place: { planVersion: number; at: string },
): { record: CompensationRecord; decision: Decision } {
  const { inDoubt: _inDoubt, error: _error, ...rest } = withoutApproval(record);
  const key = record.compensationKey;
  const where = { stepId: record.stepId, attempt: record.attempts ?? 0, ...place };
  const person = (rule: Parameters<typeof answerRule>[0], reason: string) =>
    decisionAt({ rule: answerRule(rule), reason, by: "person" }, where);
  if (answer.action === "retry") {
    // The new round is journaled above the last call (runtime/undo.ts); in doubt, the answer approves one call.
    const again = { ...rest, status: "pending" as const, attempts: 0, approval: undoRetried(record), at: place.at };
    const rule = record.inDoubt ? "effect-retry" : "retry";
    return { record: again, decision: person(rule, `a person asked to run the compensation ${key} again`) };
  }
  if (answer.action === "happened") {
    const reason = `a person said ${record.tool ?? "the compensation"} under key ${key} took effect: the compensation is done and not called again`;
    return { record: { ...rest, status: "done", at: place.at }, decision: person("effect-happened", reason) };
  }
  if (answer.action === "skip") {
    const reason = `a person left the effect standing: compensation ${key} will not run again`;
    return { record: { ...rest, status: "waived", at: place.at }, decision: person("skip", reason) };
  }
  const reason = `a person ended the run at the compensation ${key}`;
  return { record, decision: person("abort", reason) };
}

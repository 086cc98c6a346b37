/**
 * Before every model call: a person answers the escalations the last tool calls left (an
 * interrupt here has nothing to undo on resume: no tool ran in this node), and the run's status
 * follows the plan. The plan view itself is never written to the conversation: it is added to
 * each model request (`withPlanView`), after every `beforeModel` hook has run, so the model reads
 * the current plan last whatever summarization did to the history, in either middleware order.
 * What a person answered is kept as a note until the next model call, which shows it with the view.
 */
import { HumanMessage, RemoveMessage, type BaseMessage } from "@langchain/core/messages";
import { factValues } from "../plan/facts.js";
import { isFinished, selectReady } from "../plan/ready.js";
import { type RunStatus } from "../plan/schema/outcome.js";
import { LIMITS } from "../plan/schema/primitives.js";
import { type StepRun } from "../plan/schema/run.js";
import type { Decision } from "../policy/ladder/decision.js";
import { answerRule } from "../policy/ladder/person.js";
import { stamped } from "./before-step.js";
import { decisionAt } from "./decisions.js";
import { PLAN_NOTE_ID, PLAN_VIEW_ID } from "./plan-view.js";
import { ask, reviewRequest } from "./person-review.js";
import { callKey } from "./route.js";
import { answerInDoubt, type AnsweredDoubt } from "./in-doubt-answer.js";
import type { RunJournal } from "../runtime/effect-journal.js";
import { settleUndos, type UndoContext, type UndosSettled } from "./compensate.js";
import { refusalKey, type AgentPlanUpdate, type AgentPlanValues, type Escalation } from "./agent-state.js";

type ModelState = AgentPlanValues & { messages: BaseMessage[] };

/** Where the hook writes what a person said about a call in doubt: the agent's effect journal. */
export interface ModelHookContext {
  at: () => string;
  journal: RunJournal | undefined;
  threadId: string;
  /** How the hook runs the undos waiting (middleware/compensate.ts); none: they wait. */
  undos?: UndoContext | undefined;
}

export async function beforeModel(
  state: ModelState,
  ctx: ModelHookContext,
): Promise<AgentPlanUpdate & { messages?: BaseMessage[]; jumpTo?: "end" }> {
  const { at } = ctx;
  const answered = answerEscalations(state, at);
  // After the interrupt, never before it: an effect a person said happened is the key's result now.
  const undos = await runUndos(state, answered, ctx);
  for (const h of [...answered.happened, ...undos.happened])
    await ctx.journal?.result(ctx.threadId, h.key, { ok: true, output: h.output }).catch(() => undefined);
  const steps = { ...state.steps };
  for (const [id, run] of Object.entries(answered.update.steps ?? {})) if (run) steps[id] = run;
  const skipped = settleSkips(state, steps);
  const status = statusOf(state.plan === undefined, state.plan?.steps.every((s) => isFinished(steps[s.id])) ?? false);
  // Views an older version wrote into the conversation, and last turn's notes, are removed.
  const stale = state.messages
    .filter((m) => m.id?.startsWith(PLAN_VIEW_ID))
    .map((m) => new RemoveMessage({ id: m.id! }));
  const notes = [...answered.notes, ...undos.notes];
  const fresh =
    notes.length > 0
      ? [new HumanMessage({ id: `${PLAN_NOTE_ID}-${state.messages.length}`, content: notes.join("\n") })]
      : [];
  const update: AgentPlanUpdate & { messages?: BaseMessage[]; jumpTo?: "end" } = { ...answered.update };
  if (undos.compensations) update.compensations = undos.compensations;
  if (undos.decisions.length > 0) update.decisions = [...(update.decisions ?? []), ...undos.decisions];
  if (Object.keys(skipped).length > 0) update.steps = { ...update.steps, ...skipped };
  if (answered.abort || undos.abort) {
    update.status = "aborted";
    update.jumpTo = "end";
  } else if (status !== state.status) update.status = status;
  if (!state.goal) {
    const first = state.messages.find((m) => m.getType() === "human" && !m.id?.startsWith(PLAN_VIEW_ID));
    if (first && typeof first.content === "string") update.goal = cappedGoal(first.content);
  }
  if (stale.length > 0 || fresh.length > 0) update.messages = [...stale, ...fresh];
  return update;
}

/**
 * The undos waiting run before the model's next call, after a person's answers (an answer may end
 * the run, whose effects are then undone too); the hook runs again with each answer they ask for.
 */
async function runUndos(state: ModelState, answered: Answered, ctx: ModelHookContext): Promise<UndosSettled> {
  if (!ctx.undos) return { decisions: [], notes: [], happened: [], abort: false };
  const { sideEffects = [], facts = {} } = answered.update;
  const now = { ...state, sideEffects: [...state.sideEffects, ...sideEffects], facts: { ...state.facts, ...facts } };
  return settleUndos(now, ctx.undos, answered.abort);
}

/**
 * The goal is the first human message, kept within the graph's goal limit: a longer one is cut and
 * ends with a note saying so (the whole message stays in the conversation the model reads).
 */
function cappedGoal(text: string): string {
  if (text.length <= LIMITS.maxGoalLength) return text;
  const note = ` … [cut: ${text.length} characters, over the ${LIMITS.maxGoalLength}-character goal limit]`;
  return text.slice(0, LIMITS.maxGoalLength - note.length) + note;
}

/**
 * Steps the plan skips without a call: `when` is false, or a step they depend on was skipped (an
 * optional step that failed for good). Recorded as the graph records them, so the run can finish.
 */
function settleSkips(state: ModelState, steps: Record<string, StepRun>): Record<string, StepRun> {
  const skipped: Record<string, StepRun> = {};
  if (!state.plan) return skipped;
  for (let next = selectReady(state.plan, steps, factValues(state.facts)); next.kind === "skip";) {
    const run: StepRun = { status: "skipped", attempts: 0, skipReason: next.reason };
    steps[next.step.id] = run;
    skipped[next.step.id] = run;
    next = selectReady(state.plan, steps, factValues(state.facts));
  }
  return skipped;
}

function statusOf(noPlan: boolean, allDone: boolean): RunStatus {
  if (noPlan) return "planning";
  return allDone ? "completed" : "running";
}

/** Each escalation is one question; several are asked one after the other. */
function answerEscalations(state: ModelState, at: () => string): Answered {
  const steps: Record<string, StepRun> = {};
  const decisions: Decision[] = [];
  const notes: string[] = [];
  const escalations: Record<string, null> = {};
  const failedCalls: Record<string, boolean> = {};
  const doubts: AnsweredDoubt[] = [];
  for (const e of Object.values(state.planRun.escalations)) {
    if (!e) continue;
    const run: StepRun = state.steps[e.stepId] ?? { status: "failed", attempts: 0 };
    escalations[e.stepId] = null;
    if (e.inDoubt) {
      const doubt = answerInDoubt(state, { ...e, inDoubt: e.inDoubt }, run, at());
      doubts.push(doubt);
      notes.push(doubt.note);
      failedCalls[e.call] = false;
      if (doubt.abort) break;
      continue;
    }
    const answer = ask(question(state, e));
    const place = { stepId: e.stepId, attempt: run.attempts, planVersion: state.plan?.version ?? 0, at: at() };
    if (answer.type === "reject") {
      const reason = `a person refused step "${e.stepId}"${answer.message ? `: ${answer.message}` : ""}`;
      decisions.push(decisionAt({ rule: answerRule("reject-call"), reason, by: "person" }, place));
      notes.push(`${reason}. Revise the plan with write_plan, or finish and report.`);
      continue;
    }
    const args = answer.type === "edit" ? answer.args : e.args;
    const tool = answer.type === "edit" ? (answer.name ?? e.tool) : e.tool;
    steps[e.stepId] = { ...run, status: "pending", retryBase: run.attempts };
    failedCalls[e.call] = false;
    failedCalls[callKey(e.stepId, tool, args)] = false;
    const reason = `a person allowed step "${e.stepId}" another round: call ${tool} with ${JSON.stringify(args)}`;
    decisions.push(decisionAt({ rule: answerRule("retry"), reason, by: "person" }, place));
    notes.push(`${reason}.`);
  }
  // An answered step's refused calls count again from zero.
  const refusals = Object.fromEntries(
    Object.keys(escalations).map((id) => [refusalKey(state.plan?.version ?? 0, id), 0]),
  );
  const planRun = { escalations, failedCalls, refusals };
  const update: AgentPlanUpdate = notes.length === 0 ? {} : { steps, decisions, planRun };
  for (const { update: d } of doubts) {
    update.steps = { ...update.steps, ...d.steps };
    update.decisions = [...(update.decisions ?? []), ...(d.decisions ?? [])];
    // What a person says a call returned was observed now (a step's freshFor measures from it).
    if (d.facts) update.facts = { ...update.facts, ...stamped(d.facts, at()) };
    if (d.sideEffects?.length) update.sideEffects = [...(update.sideEffects ?? []), ...d.sideEffects];
    const successes = d.planRun?.successes ?? [];
    if (successes.length)
      update.planRun = { ...update.planRun, successes: [...(update.planRun?.successes ?? []), ...successes] };
  }
  const happened = doubts.flatMap((d) => (d.happened ? [d.happened] : []));
  return { update, notes, happened, abort: doubts.some((d) => d.abort) };
}

interface Answered {
  update: AgentPlanUpdate;
  notes: string[];
  happened: { key: string; output: unknown }[];
  abort: boolean;
}

function question(state: ModelState, e: Escalation) {
  const options = "Approve another try, edit the call, or reject.";
  const description = `Step "${e.stepId}" needs a person: ${e.reason} [${e.rule}]. ${options}`;
  return reviewRequest(
    "escalation",
    { name: e.tool, args: e.args, description },
    { rule: e.rule, planVersion: state.plan?.version ?? 0, stepId: e.stepId },
  );
}

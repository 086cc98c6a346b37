/**
 * What a failed step call comes to once the ladder has spoken, beyond retry and fallback: a
 * replan asks the model for a `write_plan` revision (naming the false assumption, the affected
 * steps and the facts still trusted), an escalation waits for a person (raised before the next
 * model call, where asking has no side effects), an optional step is skipped. Facts are
 * relabelled by the same `falsify` as the graph's.
 */
import type { DriveOf } from "./stopped-drive.js";
import { makeFacts } from "../plan/facts.js";
import type { FailureClass } from "../plan/schema/decision.js";
import type { SideEffectRecord, StepRun } from "../plan/schema/run.js";
import type { Step } from "../plan/schema/step.js";
import { repeatVerdict, replanStanding, type CallOutcome } from "../policy/attempt/attempt.js";
import type { ReplanStanding, Verdict } from "../policy/ladder/classify.js";
import type { Decision } from "../policy/ladder/decision.js";
import type { Deviation } from "../policy/ladder/deviation.js";
import type { InDoubtAsk } from "../policy/attempt/next-attempt.js";
import type { GuardHit } from "../policy/ladder/guards.js";
import { globalScope, localScope } from "../policy/replan/scope.js";
import { falsify } from "../policy/trust/trust.js";
import { decisionAt } from "./decisions.js";
import type { Writer } from "./agent-events.js";
import type { ResolvedAgentOptions } from "./agent-options.js";
import type { RunJournal } from "../runtime/effect-journal.js";
import { callKey } from "./route.js";
import type { AgentPlanUpdate, AgentPlanValues, Escalation, Trigger } from "./agent-state.js";

export interface CallEnv {
  options: ResolvedAgentOptions;
  state: AgentPlanValues;
  threadId: string;
  /**
   * Which model tool call this is (a stopped drive is kept for it: middleware/stopped-drive.ts); none
   * when the model gave the call no id.
   */
  drive?: Omit<DriveOf, "stepId"> | undefined;
  /** Now, as an ISO timestamp. */
  at: () => string;
  /** Sends a custom stream event (the graph's shapes); decisions sent during the call go into `sent`. */
  emit: Writer;
  sent: Set<Decision>;
  /** The effect journal of the agent's checkpointer (middleware/agent-journal.ts); none without one. */
  journal: RunJournal | undefined;
  /** Step calls of this thread in flight (side-by-side calls of one model turn). */
  running: () => number;
  /** The run's stop (`config.signal`): it ends a retry's backoff, and the call with it. */
  stop?: AbortSignal | undefined;
  /**
   * Calls a tool once through the rest of the middleware chain, with an idempotency key for
   * side-effecting calls; `signal` aborts it (the one driver's deadline, runtime/run-attempt.ts).
   */
  call: (
    tool: string,
    args: Record<string, unknown>,
    key: string | undefined,
    signal: AbortSignal,
  ) => Promise<CallOutcome>;
  /** `call` under the driver's deadline of `timeoutMs` (an undo's call). */
  invoke: (
    tool: string,
    args: Record<string, unknown>,
    key: string | undefined,
    timeoutMs: number,
  ) => Promise<CallOutcome>;
}

/** What the model is told of a step call: the tool message's content and status, and the plan state the call changes. */
export interface ToolReply {
  content: string;
  status: "success" | "error";
  update: AgentPlanUpdate;
}

export interface Settling {
  step: Step;
  run: StepRun;
  decisions: Decision[];
  verdict: Verdict;
  deviation: Deviation;
  call: { tool: string; args: Record<string, unknown> };
  succeeded?: Succeeded;
  /** The attempt machine's question about a call in doubt: the escalation asks it before the model's next call. */
  asked?: InDoubtAsk;
}

/** A call that succeeded but proved an assumption false: its record, the facts and the effect it produced. */
export interface Succeeded {
  run: StepRun;
  values: Record<string, unknown>;
  sideEffects: SideEffectRecord[];
}

/**
 * The model can always revise its plan; the guards count revisions like the graph counts replans,
 * and an assumption a revision just answered cools down until steps succeed (`replanCooldownSteps`).
 */
export function standing(
  state: Pick<AgentPlanValues, "replans" | "planRun">,
  policy: Pick<ResolvedAgentOptions["policy"], "replanCooldownSteps"> = { replanCooldownSteps: 0 },
): ReplanStanding {
  const count = state.replans.filter((r) => r.scope !== "extend").length;
  const { lastReplanAt = {}, successes = [], falsified } = state.planRun;
  // A revision costs no planner call of the library's: the replan budget is never spent here.
  const run = { available: true, count, spent: 0, lastReplanAt, successes: successes.length, falsified };
  return replanStanding(run, policy);
}

export function settle(env: CallEnv, s: Settling): ToolReply {
  const { step, run, verdict } = s;
  const plan = env.state.plan!;
  const provenance = { producedBy: step.id, planVersion: plan.version, assumptions: step.assumptions ?? [] };
  const facts = s.succeeded ? makeFacts(s.succeeded.values, provenance) : {};
  const failedCalls = s.succeeded ? {} : { [callKey(step.id, s.call.tool, s.call.args)]: true };
  const base = {
    steps: { [step.id]: run },
    decisions: s.decisions,
    facts,
    sideEffects: s.succeeded?.sideEffects ?? [],
  };
  if (verdict.action === "replan_local" || verdict.action === "replan_global") {
    const labels = falsify(plan, { ...env.state.facts, ...facts }, env.state.planRun.falsified, s.deviation, verdict);
    const affected =
      verdict.action === "replan_local"
        ? localScope(plan, verdict.brokenAssumption ?? "", s.succeeded ? [] : [step.id])
        : globalScope(plan, { ...env.state.steps, [step.id]: run });
    const trigger: Trigger = {
      stepId: step.id,
      scope: verdict.action === "replan_local" ? "local" : "global",
      affected,
      reason: verdict.reason,
      ...(verdict.brokenAssumption === undefined ? {} : { assumption: verdict.brokenAssumption }),
    };
    const content = revisionRequest(env.state, trigger, labels.labels);
    const update = { ...base, facts: { ...facts, ...labels.labels.facts } };
    return {
      content,
      status: "error",
      update: { ...update, planRun: { falsified: labels.falsified, trigger, failedCalls } },
    };
  }
  if (verdict.action === "skip") {
    const skipped: StepRun = { ...run, status: "skipped", skipReason: "optional_failed" };
    const content =
      `Step "${step.id}" is optional and failed for good, so it and its dependents are skipped: ` + verdict.reason;
    return { content, status: "error", update: { ...base, steps: { [step.id]: skipped }, planRun: { failedCalls } } };
  }
  const escalation = escalationOf(step.id, s.call, verdict.rule, verdict.reason);
  // A call in doubt is asked about by its key: happened, retry under it, or abort.
  if (s.asked) {
    const { key, journalAttempt } = s.asked;
    escalation.inDoubt = journalAttempt === undefined ? { key } : { key, attempt: journalAttempt };
  }
  return escalated(escalation, { ...base, planRun: { failedCalls } });
}

/** The identical call already failed for good: it is refused without running, and a person is asked. */
export function refuseRepeat(env: CallEnv, step: Step, call: Settling["call"]): ToolReply {
  const run = env.state.steps[step.id];
  return holdCall(env, step, call, repeatVerdict(step.id, call.tool, call.args, run?.error?.message), "deterministic");
}

/** A call a guard stopped before it ran: recorded, and a person is asked before the next model call. */
export function holdCall(
  env: CallEnv,
  step: Step,
  call: Settling["call"],
  hit: GuardHit,
  failureClass: FailureClass = "none",
): ToolReply {
  const run = env.state.steps[step.id];
  const place = { stepId: step.id, attempt: run?.attempts ?? 0, planVersion: env.state.plan!.version, at: env.at() };
  const decision = decisionAt({ rule: hit.rule, reason: hit.reason, failureClass }, place);
  return escalated(escalationOf(step.id, call, hit.rule, hit.reason), { decisions: [decision] });
}

function escalationOf(stepId: string, call: Settling["call"], rule: string, reason: string): Escalation {
  return { stepId, tool: call.tool, args: call.args, call: callKey(stepId, call.tool, call.args), rule, reason };
}

function escalated(escalation: Escalation, update: AgentPlanUpdate): ToolReply {
  const content =
    `Step "${escalation.stepId}" needs a person: ${escalation.reason} [${escalation.rule}]. ` +
    "The run waits for their answer before your next turn.";
  const planRun = { ...update.planRun, escalations: { [escalation.stepId]: escalation } };
  return { content, status: "error", update: { ...update, planRun, status: "awaiting_human" } };
}

function revisionRequest(
  state: Pick<AgentPlanValues, "plan">,
  trigger: Trigger,
  labels: { trusted: string[]; suspect: string[]; invalidated: string[] },
): string {
  const assumption = state.plan!.assumptions.find((a) => a.id === trigger.assumption);
  const lines = [`Step "${trigger.stepId}" did not go as planned: ${trigger.reason}.`];
  if (assumption) lines.push(`Assumption "${assumption.id}" (${assumption.statement}) is false.`);
  lines.push(`Affected steps, to be replaced: ${trigger.affected.join(", ")}.`);
  lines.push(`Facts still trusted: ${labels.trusted.join(", ") || "none"}.`);
  if (labels.suspect.length > 0) lines.push(`Suspect, do not use: ${labels.suspect.join(", ")}.`);
  if (labels.invalidated.length > 0) lines.push(`Invalidated: ${labels.invalidated.join(", ")}.`);
  const rests = assumption ? ` No step may rest on "${assumption.id}" again.` : "";
  lines.push(
    `Revise the plan: call write_plan with the whole plan, replacing the affected steps.${rests} ` +
      "Completed steps are kept and do not run again.",
  );
  return lines.join("\n");
}

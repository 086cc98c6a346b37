/**
 * The human node: the only node that calls `interrupt()`. LangGraph re-runs it from the top on
 * resume and discards its writes while it is interrupted, so the payload comes from state
 * written by the node before (`pendingHuman`) and nothing here has side effects before the
 * answer is in. An answer that is malformed or not among the options is not lost work: the
 * node asks again with `error` set, and the thread stays resumable.
 */
import { Command, interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { evaluate } from "../expr/cel.js";
import type { Runtime } from "../graph/options.js";
import type { PendingHuman, PlanManagerStateType, PlanManagerUpdate } from "../graph/state.js";
import { factValues, makeFacts, producedValues } from "../plan/facts.js";
import {
  FailureClassSchema,
  LIMITS,
  ResumeValueSchema,
  type Decision,
  type FailureClass,
  type InterruptPayload,
  type ResumeValue,
  type Step,
  type StepRun,
} from "../plan/schema.js";
import { jsonDepth, jsonSize } from "../plan/validate.js";
import { z } from "zod";
import { resumeProblem } from "../plan/resume.js";
import { emit } from "./events.js";
import { ESCALATION_OPTIONS, offered } from "./escalation.js";

export const HUMAN_DESTINATIONS = ["executor", "replanner", "finalize", "human"] as const;
type Destination = (typeof HUMAN_DESTINATIONS)[number];

export function makeHumanNode(rt: Runtime) {
  return function human(state: PlanManagerStateType, config: LangGraphRunnableConfig): Command {
    const pending = state.pendingHuman;
    if (!pending) return new Command({ goto: "executor" });
    let payload: InterruptPayload = publicPayload(pending);
    let answer: ResumeValue;
    for (;;) {
      const raw: unknown = interrupt(payload, { responseSchema: RESUME_JSON_SCHEMA });
      const problem = checkAnswer(raw, pending, state);
      if (problem === undefined) {
        answer = raw as ResumeValue;
        break;
      }
      payload = { ...publicPayload(pending), error: problem };
    }
    return apply(answer);

    function apply(reply: ResumeValue): Command {
      const at = new Date(rt.clock.now()).toISOString();
      const stepId = pending!.stepId;
      const step = stepId ? state.plan?.steps.find((s) => s.id === stepId) : undefined;
      const run: StepRun | undefined = stepId ? state.steps[stepId] : undefined;
      const version = state.plan?.version ?? 0;
      // A person's answer is not a classification: it answers the escalation's failure, or none.
      const answered: FailureClass = pending!.kind === "escalation" ? escalatedClass(pending!) : "none";
      const decide = (
        action: Decision["action"],
        rule: string,
        reason: string,
        failureClass = answered,
        byPerson = true,
      ): Decision => {
        const decision: Decision = {
          seq: state.decisions.length + 1,
          ...(stepId ? { stepId } : {}),
          attempt: run?.attempts ?? 0,
          failureClass,
          action,
          rule,
          reason,
          planVersion: version,
          at,
          ...(byPerson ? { by: "person" as const } : {}),
        };
        emit(config, { type: "decision", decision });
        return decision;
      };
      const go = (goto: Destination, update: PlanManagerUpdate) => new Command({ goto, update: { pendingHuman: null, ...update } });

      switch (reply.action) {
        case "approve":
          return go("executor", { status: "running" });
        case "abort":
          return go("finalize", {
            status: "aborted",
            decisions: decide("abort", "human.abort", reply.reason ?? "a person aborted the run"),
            outcome: { summary: "", ...(stepId ? { failedStep: stepId } : {}), failureReason: "aborted_by_human", message: reply.reason ?? "aborted at a human review", recoverable: false },
          });
        case "change_scope":
          return go("executor", {
            status: "running",
            scopeChanges: [reply.request],
            decisions: decide("replan_global", "human.change-scope", `scope change: ${reply.request}`, "scope_changed"),
          });
        case "replan":
          // Options offered are options that can work; this guards a planner swapped after the interrupt.
          if (typeof rt.planner.replan !== "function") {
            return go("human", {
              status: "awaiting_human",
              decisions: decide("escalate", "replan.unavailable", "the planner cannot replan (it has no replan function)"),
              pendingHuman: { ...pending!, options: offered(pending!.options, false) },
            });
          }
          return go("replanner", {
            status: "running",
            guards: { ...state.guards, constraints: [...state.guards.constraints, reply.constraint] },
            decisions: decide("replan_global", "human.replan", `a person asked for a replan: ${reply.constraint}`),
          });
        case "retry":
          if (!stepId || !run) return go("executor", { status: "running" });
          return go("executor", {
            status: "running",
            steps: { [stepId]: { ...run, status: "pending", retryBase: run.attempts, nextDelayMs: 0, ...approval(pending!) } },
            decisions: decide("retry", "human.retry", "a person asked to retry the step"),
          });
        case "skip":
          if (!stepId || !run) return go("executor", { status: "running" });
          return go("executor", {
            status: "running",
            steps: { [stepId]: { ...run, status: "skipped", skipReason: "human", endedAt: at } },
            decisions: decide("skip", "human.skip", "a person chose to skip the step"),
          });
        case "provide": {
          const facts = makeFacts(reply.facts, { producedBy: "human", planVersion: version });
          const names = Object.keys(reply.facts).join(", ") || "nothing";
          const update: PlanManagerUpdate = { status: "running", facts, decisions: decide("provide", "human.provide", `a person provided ${names}`) };
          // Done by a person, not by a tool: any side effect of the step did not happen.
          if (stepId && run) update.steps = { [stepId]: { ...run, status: "succeeded", doneBy: "person", output: reply.facts, endedAt: at } };
          return go("executor", update);
        }
        case "complete": {
          if (!stepId || !run || !step) return go("executor", { status: "running" });
          if (pending!.kind === "human_step" && pending!.deadline !== undefined && rt.clock.now() > pending!.deadline) {
            const late = `the answer to human step "${stepId}" came after its ${step.human?.timeoutMs} ms deadline`;
            // The deadline rule decides here, not the person who answered late.
            const decision = decide("escalate", "human.deadline-passed", late, "budget_exhausted", false);
            const escalation: PendingHuman = {
              kind: "escalation",
              reason: decision.reason,
              stepId,
              planVersion: version,
              options: offered(["complete", ...ESCALATION_OPTIONS], typeof rt.planner.replan === "function"),
              context: { goal: state.goal, step: { id: step.id, goal: step.goal }, lateOutput: reply.output, rule: decision.rule },
            };
            return new Command({ goto: "human", update: { decisions: decision, pendingHuman: escalation, status: "awaiting_human" } });
          }
          const { values } = producedValues(step, reply.output);
          const facts = makeFacts(values, { producedBy: stepId, planVersion: version, assumptions: step.assumptions ?? [], derivedFrom: step.inputs ?? [] });
          emit(config, { type: "step_finished", stepId, goal: step.goal, status: "succeeded", attempt: run.attempts });
          return go("executor", {
            status: "running",
            facts,
            steps: { [stepId]: { ...run, status: "succeeded", attempts: run.attempts + 1, output: reply.output, endedAt: at } },
            guards: { ...state.guards, successes: state.guards.successes + 1 },
          });
        }
      }
    }
  };
}

/**
 * The resume value's JSON Schema, surfaced to clients (Studio, the SDK) on the interrupt's
 * `response_schema` so they can render a form. It is passed as JSON Schema, not as zod, so a
 * malformed answer does not fail the run: the node asks again with `error` set instead.
 */
const RESUME_JSON_SCHEMA = z.toJSONSchema(ResumeValueSchema) as Record<string, unknown>;

function publicPayload(pending: PendingHuman): InterruptPayload {
  const { deadline, ...payload } = pending;
  return deadline === undefined ? payload : { ...payload, context: { ...payload.context, deadline: new Date(deadline).toISOString() } };
}

/** Why an answer cannot be accepted, or undefined when it can. */
function checkAnswer(raw: unknown, pending: PendingHuman, state: PlanManagerStateType): string | undefined {
  const problem = resumeProblem(raw, pending.options);
  if (problem) return problem;
  // resumeProblem has already parsed it against ResumeValueSchema.
  const answer = raw as ResumeValue;
  const step = pending.stepId ? state.plan?.steps.find((s) => s.id === pending.stepId) : undefined;
  if (answer.action === "provide") return provideProblem(answer.facts, step, state);
  if (answer.action === "complete") {
    const tooBig = valueProblem(answer.output, "output");
    if (tooBig) return tooBig;
  }
  if (answer.action === "complete" && pending.kind === "human_step" && pending.stepId) {
    if (step?.produces?.length) {
      const { missing } = producedValues(step, answer.output);
      if (missing.length > 0) return `output is missing ${missing.join(", ")}, which step "${step.id}" must produce`;
    }
    if (step?.successSignal) {
      const result = evaluate(step.successSignal, "successSignal", factValues(state.facts), answer.output);
      if (!result.ok || result.value !== true) return `output does not meet the step's success signal ${JSON.stringify(step.successSignal)}`;
    }
  }
  return undefined;
}

/**
 * A person may supply exactly what the escalated step was to produce — not other steps' facts —
 * within the limits a tool's output has (a fact is a fact, whoever supplies it).
 */
function provideProblem(facts: Record<string, unknown>, step: Step | undefined, state: PlanManagerStateType): string | undefined {
  const keys = Object.keys(facts);
  if (step) {
    const produces = step.produces ?? [];
    const foreign = keys.filter((k) => !produces.includes(k));
    const accepted = produces.length > 0 ? `step "${step.id}" produces ${produces.join(", ")}` : `step "${step.id}" produces no facts`;
    if (foreign.length > 0) return `cannot provide ${foreign.join(", ")}: ${accepted}; provide only those`;
    const missing = produces.filter((k) => !Object.hasOwn(facts, k) || facts[k] === undefined);
    if (missing.length > 0) return `provide ${missing.join(", ")} too: ${accepted}`;
  } else {
    const taken = keys.filter((k) => state.facts[k]?.label === "trusted");
    if (taken.length > 0) return `cannot provide ${taken.join(", ")}: already a trusted fact`;
  }
  for (const key of keys) {
    const problem = valueProblem(facts[key], `facts.${key}`);
    if (problem) return problem;
  }
  return undefined;
}

/** The fact limits (LIMITS.maxJsonBytes, LIMITS.maxJsonDepth) applied to what a person sends. */
function valueProblem(value: unknown, where: string): string | undefined {
  const size = jsonSize(value);
  if (size > LIMITS.maxJsonBytes) return `${where} is ${size} bytes of JSON, over the ${LIMITS.maxJsonBytes}-byte fact limit`;
  if (jsonDepth(value) > LIMITS.maxJsonDepth) return `${where} is nested deeper than ${LIMITS.maxJsonDepth} levels`;
  return undefined;
}

/** The failure class of the escalation a person answers (written by `escalationPayload`). */
function escalatedClass(pending: PendingHuman): FailureClass {
  const parsed = FailureClassSchema.safeParse(pending.context.failureClass);
  return parsed.success ? parsed.data : "unknown";
}

/** A retry of a step whose changed side effect was escalated allows exactly that operation. */
function approval(pending: PendingHuman): Pick<StepRun, "approvedKey"> {
  const effect = pending.context.sideEffect as { proposedKey?: unknown } | undefined;
  return typeof effect?.proposedKey === "string" ? { approvedKey: effect.proposedKey } : {};
}

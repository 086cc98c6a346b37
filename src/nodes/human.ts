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
import { ResumeValueSchema, type Decision, type FailureClass, type InterruptPayload, type ResumeValue, type StepRun } from "../plan/schema.js";
import { z } from "zod";
import { resumeProblem } from "../plan/resume.js";
import { emit } from "./events.js";
import { ESCALATION_OPTIONS } from "./escalation.js";

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
      const lastClass: FailureClass = state.decisions[state.decisions.length - 1]?.failureClass ?? "unknown";
      const decide = (action: Decision["action"], rule: string, reason: string, failureClass: FailureClass = lastClass): Decision => {
        const decision: Decision = { seq: state.decisions.length + 1, ...(stepId ? { stepId } : {}), attempt: run?.attempts ?? 0, failureClass, action, rule, reason, planVersion: version, at };
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
          return go("executor", { status: "running", scopeChanges: [reply.request], decisions: decide("replan_global", "human.change-scope", `scope change: ${reply.request}`, "scope_changed") });
        case "replan":
          return go("replanner", {
            status: "running",
            guards: { ...state.guards, constraints: [...state.guards.constraints, reply.constraint] },
            decisions: decide("replan_global", "human.replan", `a person asked for a replan: ${reply.constraint}`, "scope_changed"),
          });
        case "retry":
          if (!stepId || !run) return go("executor", { status: "running" });
          return go("executor", {
            status: "running",
            steps: { [stepId]: { ...run, status: "pending", retryBase: run.attempts, nextDelayMs: 0 } },
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
          const update: PlanManagerUpdate = { status: "running", facts, decisions: decide("skip", "human.provide", `a person provided ${Object.keys(reply.facts).join(", ") || "nothing"}`) };
          if (stepId && run) update.steps = { [stepId]: { ...run, status: "succeeded", output: reply.facts, endedAt: at } };
          return go("executor", update);
        }
        case "complete": {
          if (!stepId || !run || !step) return go("executor", { status: "running" });
          if (pending!.kind === "human_step" && pending!.deadline !== undefined && rt.clock.now() > pending!.deadline) {
            const decision = decide("escalate", "human.deadline-passed", `the answer to human step "${stepId}" came after its ${step.human?.timeoutMs} ms deadline`, "budget_exhausted");
            const escalation: PendingHuman = {
              kind: "escalation",
              reason: decision.reason,
              stepId,
              planVersion: version,
              options: ["complete", ...ESCALATION_OPTIONS],
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
  if (answer.action === "complete" && pending.kind === "human_step" && pending.stepId) {
    const step = state.plan?.steps.find((s) => s.id === pending.stepId);
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

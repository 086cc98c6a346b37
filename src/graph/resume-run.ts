/**
 * `resumeRun` and `pendingQuestion`: answering a paused plan manager thread from outside. The
 * answer is checked against the pending question — an offered action, the keys the step must
 * produce, JSON within the fact limits — before anything is written: a bad one throws
 * `PlanManagerError` ("invalid_resume") and the thread stays paused at the same question. (A raw
 * `Command({ resume })` is also safe: the human node asks again with `error` set.)
 */
import { Command, type Interrupt, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";
import { factValues } from "../plan/facts.js";
import { answeredStepId } from "../plan/external-offers.js";
import type { InterruptPayload, ResumeValue } from "../plan/schema/interrupts.js";
import type { Plan } from "../plan/schema/plan.js";
import type { Fact } from "../plan/schema/run.js";
import { answerProblem } from "../policy/ladder/answer-checks.js";
import type { PlanManagerOutputType } from "../runtime/state.js";

/** What `invoke` and `resumeRun` return: the run's output keys, and the question when it paused. */
export type PlanManagerResult = PlanManagerOutputType & { __interrupt__?: Interrupt<InterruptPayload>[] };

interface ResumableGraph {
  getState(
    config: LangGraphRunnableConfig,
  ): Promise<{ values: unknown; tasks: readonly { interrupts: readonly { value?: unknown }[] }[] }>;
  invoke(input: never, config: LangGraphRunnableConfig): Promise<unknown>;
}

export interface PausedValues {
  status?: string;
  plan?: Plan;
  facts?: Record<string, Fact>;
}

/** The question a paused thread waits on, or undefined when none is pending. */
export async function pendingQuestion(
  graph: Pick<ResumableGraph, "getState">,
  config: LangGraphRunnableConfig,
): Promise<InterruptPayload | undefined> {
  const snapshot = await graph.getState(config);
  return snapshot.tasks.flatMap((t) => t.interrupts)[0]?.value as InterruptPayload | undefined;
}

/**
 * Why `value` cannot answer `pending` on a thread whose state is `values`, or undefined when it can:
 * an offered action, the keys the step produces, JSON within the fact limits. `resumeRun` and the
 * command line's `resume` ask the same.
 */
export function answerProblemFor(value: unknown, pending: InterruptPayload, values: PausedValues): string | undefined {
  const facts = values.facts ?? {};
  // A submission is about the offered step it names (several external steps may be offered at once).
  const id = answeredStepId(pending, value);
  const step = id ? values.plan?.steps.find((s) => s.id === id) : undefined;
  return answerProblem(value, { pending, step, facts, trusted: factValues(facts) });
}

/**
 * Answers the thread's pending question with `value`, after checking it against that question (an offered
 * action, the keys a step produces, the fact limits); throws `invalid_resume` otherwise, having written
 * nothing. Returns the run's typed result.
 */
export async function resumeRun(
  graph: ResumableGraph,
  config: LangGraphRunnableConfig,
  value: ResumeValue,
): Promise<PlanManagerResult> {
  const snapshot = await graph.getState(config);
  const pending = snapshot.tasks.flatMap((t) => t.interrupts)[0]?.value as InterruptPayload | undefined;
  const values = (snapshot.values ?? {}) as PausedValues;
  const thread = String(config.configurable?.thread_id ?? "");
  if (!pending) {
    const what =
      values.status === "stopped"
        ? "; it was stopped by an operator: carry on with resumeStopped(graph, config)"
        : values.status === "running" || values.status === "planning"
          ? // No answer is taken on its behalf: the run takes up where its last checkpoint left it.
            ": no question waits for an answer, but the run was cut before it finished (its process ended); " +
            "take it up with graph.invoke(null, config)"
          : "; there is nothing to resume";
    throw new PlanManagerError(
      "invalid_resume",
      `thread "${thread}" has no pending interrupt (status: ${values.status ?? "not started"})${what}`,
    );
  }
  const problem = answerProblemFor(value, pending, values);
  if (problem)
    throw new PlanManagerError(
      "invalid_resume",
      `thread "${thread}", ${pending.kind}${pending.stepId ? ` for step "${pending.stepId}"` : ""}: ${problem}`,
      { path: "resume" },
    );
  return (await graph.invoke(new Command({ resume: value }) as never, config)) as PlanManagerResult;
}

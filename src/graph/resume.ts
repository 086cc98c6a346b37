/**
 * `resumeRun`: resumes a paused plan manager thread after checking that an interrupt is pending
 * and that the value answers it. A bad value throws `PlanManagerError` ("invalid_resume") and
 * sends nothing, so the thread stays resumable. (A raw `Command({ resume })` is also safe: the
 * human node asks again with `error` set.)
 */
import { Command, type LangGraphRunnableConfig } from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";
import { resumeProblem } from "../plan/resume.js";
import type { InterruptPayload, ResumeValue } from "../plan/schema.js";

interface ResumableGraph {
  getState(
    config: LangGraphRunnableConfig,
  ): Promise<{ values: unknown; tasks: readonly { interrupts: readonly { value?: unknown }[] }[] }>;
  invoke(input: never, config: LangGraphRunnableConfig): Promise<unknown>;
}

export async function resumeRun(
  graph: ResumableGraph,
  config: LangGraphRunnableConfig,
  value: ResumeValue,
): Promise<unknown> {
  const snapshot = await graph.getState(config);
  const pending = snapshot.tasks.flatMap((t) => t.interrupts)[0]?.value as InterruptPayload | undefined;
  const thread = String(config.configurable?.thread_id ?? "");
  if (!pending) {
    const status = (snapshot.values as { status?: string } | undefined)?.status ?? "not started";
    throw new PlanManagerError(
      "invalid_resume",
      `thread "${thread}" has no pending interrupt (status: ${status}); there is nothing to resume`,
    );
  }
  const problem = resumeProblem(value, pending.options);
  if (problem)
    throw new PlanManagerError(
      "invalid_resume",
      `thread "${thread}", ${pending.kind}${pending.stepId ? ` for step "${pending.stepId}"` : ""}: ${problem}`,
      { path: "resume" },
    );
  return graph.invoke(new Command({ resume: value }) as never, config);
}

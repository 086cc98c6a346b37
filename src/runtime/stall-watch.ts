/**
 * Stall detection (docs/architecture.md "Long goals"): a step still running at `policy.stallFactor` × its
 * `estimateMs` is reported while it runs — a `step_stalled` event the moment the deadline
 * passes, not when (or if) the tool returns.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "./options.js";
import type { Step } from "../plan/schema.js";
import { stallDeadline } from "../policy/horizon.js";
import { emit } from "./events.js";

/** Stops watching; says whether the step stalled. */
export type StopWatching = () => boolean;

export function watchForStall(
  rt: Pick<Runtime, "clock" | "policy">,
  config: LangGraphRunnableConfig | undefined,
  step: Pick<Step, "id" | "goal" | "estimateMs">,
  attempt: number,
  startedAt: number,
): StopWatching {
  const deadline = stallDeadline(startedAt, step.estimateMs, rt.policy);
  if (deadline === undefined) return () => false;
  const done = new AbortController();
  let stalled = false;
  void rt.clock.sleep(Math.max(0, deadline - rt.clock.now()), done.signal).then(() => {
    if (done.signal.aborted) return;
    stalled = true;
    const runningMs = rt.clock.now() - startedAt;
    emit(config, {
      type: "step_stalled",
      stepId: step.id,
      goal: step.goal,
      attempt,
      estimateMs: step.estimateMs!,
      runningMs,
    });
  });
  return () => {
    done.abort();
    return stalled;
  };
}

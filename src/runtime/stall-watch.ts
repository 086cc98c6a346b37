/**
 * Stall detection (docs/architecture.md "Long goals"): a step still running at `policy.stallFactor` × its
 * `estimateMs` is reported while it runs — a `step_stalled` event the moment the deadline
 * passes, not when (or if) the tool returns.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "./options.js";
import type { Step } from "../plan/schema/step.js";
import { stallDeadline } from "../policy/replan/horizon.js";
import { emit } from "./events.js";

/**
 * The longest delay a timer keeps: Node fires a `setTimeout` of more than 2^31 − 1 ms after 1 ms,
 * and `stallFactor` × `estimateMs` may reach 1,000 days.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Sleeps `ms` on `clock` in pieces no timer cuts short. The pieces are counted up front, not
 * re-read from the clock, so a clock whose sleep does not move its time cannot make this spin.
 */
export async function sleepLong(clock: Pick<Runtime["clock"], "sleep">, ms: number, signal: AbortSignal) {
  let left = ms;
  for (; left > MAX_TIMER_MS && !signal.aborted; left -= MAX_TIMER_MS) await clock.sleep(MAX_TIMER_MS, signal);
  if (!signal.aborted) await clock.sleep(left, signal);
}

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
  void sleepLong(rt.clock, Math.max(0, deadline - rt.clock.now()), done.signal).then(() => {
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

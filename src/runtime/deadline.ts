/**
 * Planner and classifier calls with a deadline (docs/guides/configuration.md "Termination bounds"): a model that never
 * answers would otherwise hold the run, and the thread, for ever. Like a tool call's timeout
 * (`call-tool.ts`) it is real time: a late answer is dropped, and the call's signal is aborted so
 * that a planner passing it on (`llmPlanner` does, to the model) stops paying for it.
 */
import { PlanManagerError } from "../errors.js";

/**
 * Runs `call` with a signal that aborts at `ms` or when the run's own signal does; past `ms` it
 * rejects with a `planner_failed` error saying which call ran out (`what`). A call that throws at
 * once rejects the same way as one that fails later.
 */
export async function withDeadline<T>(
  ms: number,
  what: string,
  call: (signal: AbortSignal) => Promise<T>,
  runSignal?: AbortSignal,
): Promise<T> {
  const controller = new AbortController();
  const signal = runSignal ? AbortSignal.any([runSignal, controller.signal]) : controller.signal;
  const pending = Promise.resolve().then(() => call(signal));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const error = new PlanManagerError(
        "planner_failed",
        `${what} did not answer within ${ms} ms (policy.plannerTimeoutMs)`,
        { path: "policy.plannerTimeoutMs" },
      );
      controller.abort(error);
      reject(error);
    }, ms);
  });
  try {
    return await Promise.race([pending, timeout]);
  } finally {
    clearTimeout(timer);
    pending.catch(() => undefined);
  }
}

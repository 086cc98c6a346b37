/**
 * A run its caller stops (its signal aborts, or its stream is left with `break`) goes on to its next
 * step boundary, so that the results of the calls in flight reach a checkpoint
 * (docs/decisions/0028-a-stopped-run-keeps-its-results.md). The caller is not kept waiting for
 * that: from the stop on, the run is read to its end here, in the background, and `onStop` gets that
 * reading to hold the thread until it is done.
 */
const STOPPED = Symbol("stopped");

export async function* untilStopped(
  steps: AsyncGenerator<unknown>,
  signal: AbortSignal | undefined,
  onStop: (rest: Promise<void>) => void,
): AsyncGenerator<unknown> {
  if (signal === undefined) return yield* steps;
  let wake: ((stopped: typeof STOPPED) => void) | undefined;
  const stop = () => {
    onStop(readToEnd(steps));
    wake?.(STOPPED);
  };
  if (signal.aborted) stop();
  else signal.addEventListener("abort", stop, { once: true });
  try {
    while (!signal.aborted) {
      // A `break` waits for the step it is in to end (an async generator finishes one request before
      // the next): the stop wakes this wait at once, and the step's result goes to the background reader.
      const next = await new Promise<IteratorResult<unknown> | typeof STOPPED>((resolve, reject) => {
        wake = resolve;
        steps.next().then(resolve, reject);
      });
      wake = undefined;
      if (next === STOPPED || next.done === true) return;
      yield next.value;
    }
  } finally {
    signal.removeEventListener("abort", stop);
    // A caller that closes the stream without stopping the run closes the run, as LangGraph's own would.
    if (!signal.aborted) await steps.return(undefined);
  }
}

/** Reads a stopped run to its end (its next step boundary); what it ends with has no reader left. */
async function readToEnd(steps: AsyncGenerator<unknown>): Promise<void> {
  try {
    while ((await steps.next()).done !== true);
  } catch {
    // The stop itself, or a node's error: the caller already has its AbortError.
  }
}

/**
 * Who sees a top-level run's state values as each superstep ends, besides its caller: the plan
 * service keeps a running plan's status from them (docs/decisions/0066-live-status-of-running-plans.md).
 * Set through the run's config, so that a run through `invoke` keeps its in-place merges.
 */
const TAP_KEY = "__langgraph_replan_values_tap";

export type ValuesTap = (values: unknown) => void;

/** The config of a run whose values chunks `tap` is told of. */
export function withValuesTap<C extends { configurable?: Record<string, unknown> }>(config: C, tap: ValuesTap): C {
  return { ...config, configurable: { ...config.configurable, [TAP_KEY]: tap } };
}

/** The run's chunks, each told to the tap its config names first (the chunks themselves unchanged). */
export async function* tappedValues(
  chunks: AsyncGenerator<unknown>,
  configurable: Record<string, unknown>,
): AsyncGenerator<unknown> {
  const tap = configurable[TAP_KEY] as ValuesTap | undefined;
  if (tap === undefined) return yield* chunks;
  for await (const chunk of chunks) {
    tap(chunk);
    yield chunk;
  }
}

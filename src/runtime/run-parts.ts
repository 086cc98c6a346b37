/**
 * What a run hands its nodes through `config.configurable`, kept under one key: the calls in flight
 * (runtime/dispatch.ts), the events waiting for a checkpoint (runtime/events.ts), the effect journal
 * (runtime/effect-journal.ts) and the thread's hold (graph/thread-lock.ts). LangGraph and LangChain
 * copy a run's configurable at every runnable call; each key of its own made every copy dearer
 * (docs/decisions/0059-short-path.md). The `__` prefix keeps it out of checkpoint and trace metadata.
 */
const PARTS_KEY = "__langgraph_replan";

export interface RunParts {
  dispatch?: unknown;
  held?: unknown;
  journal?: unknown;
  threadRun?: unknown;
}

/** `config` with `part` of its run set to `value`, the other parts kept. */
export function withRunPart<C extends { configurable?: Record<string, unknown> }>(
  config: C | undefined,
  part: keyof RunParts,
  value: unknown,
): C {
  const parts = config?.configurable?.[PARTS_KEY] as RunParts | undefined;
  return { ...(config as C), configurable: { ...config?.configurable, [PARTS_KEY]: { ...parts, [part]: value } } };
}

/** The `part` of the run `config` belongs to, if set. */
export function runPart(config: { configurable?: Record<string, unknown> } | undefined, part: keyof RunParts): unknown {
  return (config?.configurable?.[PARTS_KEY] as RunParts | undefined)?.[part];
}

/** The config a run of the plan manager is given, from the caller's (graph/compiled-plan-manager.ts). */
import type { RunnableConfig } from "@langchain/core/runnables";
import { hasInheritedDurability, isNestedRun } from "./langgraph-seam.js";

/**
 * `invoke` keeps only the last values chunk: no state the run passes through is seen outside it
 * while it runs. Streams (any other mode) and runs nested in a parent's node (whose stream the
 * parent may read) keep every chunk's state as it was when it was sent.
 */
export function onlyTheResult(options?: Partial<RunnableConfig>): boolean {
  const mode = (options as { streamMode?: unknown } | undefined)?.streamMode;
  if (mode !== undefined && mode !== "values") return false;
  return !isNestedRun((options?.configurable ?? {}) as Record<string, unknown>);
}

/**
 * Every finished attempt is durable before anything that depends on it (docs/architecture.md "Durability"): unless the
 * caller chose a durability (or a parent graph passes its own), checkpoints are written before the
 * next superstep starts. LangGraph's default ("async") writes them while the next one runs, so a
 * process killed then loses a finished attempt and calls its tool again on resume.
 */
export function durable(options?: Partial<RunnableConfig>): Partial<RunnableConfig> {
  const chosen = options as { durability?: unknown; checkpointDuring?: unknown } | undefined;
  const inherited = hasInheritedDurability(options?.configurable ?? {});
  if (chosen?.durability != null || chosen?.checkpointDuring != null || inherited) return options ?? {};
  return { ...options, durability: "sync" } as Partial<RunnableConfig>;
}

/**
 * Run inside a parent (a subgraph node, or `invoke` from a node), LangGraph gives this graph the
 * parent's `recursionLimit` (25 unless set), which counts this graph's own supersteps: one per
 * step attempt, so a 30-step plan would stop. A nested run takes the larger of the two (`own`,
 * the compiled graph's).
 */
export function nestedLimit(
  options: Partial<RunnableConfig> | undefined,
  own: number | undefined,
): Partial<RunnableConfig> | undefined {
  const nested = isNestedRun(options?.configurable ?? {});
  if (!nested || own === undefined || (options?.recursionLimit ?? 0) >= own) return options;
  return { ...options, recursionLimit: own };
}

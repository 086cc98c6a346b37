/**
 * The checkpointer LangGraph lends a run's tasks (its `CONFIG_KEY_CHECKPOINTER`, a `__pregel_*`
 * configurable key it does not export). Part of the LangGraph seam (docs/decisions/0020-langgraph-seam.md):
 * graph/langgraph-seam.ts re-exports it, and test/unit/langgraph-seam.test.ts pins it. It lives one
 * layer down so that `planMiddleware`, whose tool calls run as tasks of a `createAgent` graph, finds
 * the saver its agent checkpoints to (docs/decisions/0043-effects-in-the-middleware.md).
 */

/** Where LangGraph lends a parent's checkpointer to a subgraph, and a graph's own to its tasks. */
export const LENT_CHECKPOINTER = "__pregel_checkpointer";

/** The checkpointer a parent lends this run (or a graph its task), if any. */
export function lentCheckpointer(configurable: Record<string, unknown>): object | undefined {
  const lent = configurable[LENT_CHECKPOINTER];
  return typeof lent === "object" && lent !== null ? lent : undefined;
}

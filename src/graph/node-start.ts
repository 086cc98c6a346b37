/**
 * What every node of a run does before its own work (docs/decisions/0028-a-stopped-run-keeps-its-results.md).
 * LangGraph writes a superstep's checkpoint before it starts the next superstep's nodes, so a node's
 * start is the first moment the writes of the node before it are durable: the events that waited for
 * them (`step_finished`) are sent here. And a run its caller has stopped ends here, at a step
 * boundary — except in the executor while calls are in flight: it waits for them, so that their
 * results are in its checkpoint, and the run ends at the next node.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { dispatcherOf } from "../runtime/dispatch.js";
import { sendHeld } from "../runtime/events.js";

export function startingNode<S, R>(
  node: (state: S, config: LangGraphRunnableConfig) => R | Promise<R>,
  options: { waitsForCalls?: boolean } = {},
): (state: S, config: LangGraphRunnableConfig) => Promise<R> {
  return async (state, config) => {
    sendHeld(config);
    const run = dispatcherOf(config);
    if (run.stopped && !(options.waitsForCalls === true && run.size > 0)) run.stopSignal?.throwIfAborted();
    return node(state, config);
  };
}

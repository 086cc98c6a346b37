/**
 * What a model or tool call is traced under: the run's callbacks (what `invoke` was given —
 * LangSmith's tracer, any handler — below the node that makes the call), and metadata and tags
 * that say what the call is for. Passed to the calls that exist, never as a runnable of its own:
 * @langchain/core starts a run per runnable call (docs/architecture.md "Tracing").
 */
import type { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Callbacks } from "@langchain/core/callbacks/manager";

/**
 * The tracing context a planner or classifier passes on to its model call, so the call appears under the node
 * that made it.
 */
export interface ModelTrace {
  /** The run's callbacks, as the node making the call received them. */
  callbacks?: Callbacks;
  /** `purpose`, and the `stepId`, `attempt` and `planVersion` the call belongs to. */
  metadata?: Record<string, unknown>;
  tags?: string[];
}

/** Tags this library puts on the runs it starts, by who starts them. */
export const TRACE_TAGS = {
  planner: "langgraph-replan:planner",
  classifier: "langgraph-replan:classifier",
  step: "langgraph-replan:step",
  /** LangGraph's tag for runs its `messages` stream leaves out: a planner's or an agent step's tokens never were streamed. */
  noStream: "langsmith:nostream",
} as const;

/** The run's callbacks plus one handler of our own (a usage meter), inherited by every nested run. */
export function withHandler(callbacks: Callbacks | undefined, handler: BaseCallbackHandler): Callbacks {
  if (callbacks === undefined) return [handler];
  if (Array.isArray(callbacks)) return [...callbacks, handler];
  return callbacks.copy([handler], true);
}

/**
 * How a node's model call is traced: below the node (its callbacks), tagged with who asks, and
 * left out of LangGraph's `messages` stream as it always was.
 */
export function modelTrace(
  config: { callbacks?: Callbacks },
  who: "planner" | "classifier" | "step",
  metadata: Record<string, unknown>,
): ModelTrace {
  return {
    ...(config.callbacks ? { callbacks: config.callbacks } : {}),
    metadata,
    tags: [TRACE_TAGS[who], TRACE_TAGS.noStream],
  };
}

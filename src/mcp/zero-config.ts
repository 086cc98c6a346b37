/**
 * The graph `langgraph-replan mcp` serves when there is no `langgraph.json`: `plans`, planned with
 * the MCP client's own model (`SamplingChatModel`), every step one the client does itself unless a
 * tool of `tools` does it (docs/decisions/0060-sampling-through-the-client.md). Failures no rule
 * recognises are classified by the client's model too.
 */
import type { StructuredToolInterface } from "@langchain/core/tools";
import { createPlanManager } from "../graph/create-plan-manager.js";
import { llmClassifier } from "../planners/llm-classifier.js";
import { llmPlanner } from "../planners/llm-planner.js";
import { SamplingChatModel, type SamplingChatModelFields } from "./sampling-chat-model.js";

/** The name the zero-configuration graph is served under. */
export const ZERO_CONFIG_GRAPH = "plans";

/** What the zero-configuration `plans` graph is built with: step tools and how the client's model is asked. */
export interface ZeroConfigOptions {
  /** Step tools beside the client's own work (e.g. the tools of MCP servers). Default: none. */
  tools?: readonly StructuredToolInterface[];
  /** How the client's model is asked. Default: `SamplingChatModel`'s defaults. */
  sampling?: SamplingChatModelFields;
}

/** The uncompiled `plans` graph: compile it with the service's checkpointer. */
export function zeroConfigGraph(options: ZeroConfigOptions = {}) {
  const model = new SamplingChatModel(options.sampling);
  return createPlanManager({
    tools: options.tools ?? [],
    planner: llmPlanner({ model, callerDoesWork: true }),
    classifier: llmClassifier({ model }),
  });
}

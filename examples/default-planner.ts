/**
 * The planner the demo and the Studio graph use: an LLM planner on ChatOpenAI when
 * OPENAI_API_KEY is set (model from PLANNER_MODEL; OPENAI_BASE_URL for an OpenAI-compatible
 * local server such as vLLM, llama.cpp or Ollama), else the static planner given as fallback.
 * Retries are the planner's `calls.maxRetries` (default 3); the model's own are off for its calls.
 */
import { ChatOpenAI } from "@langchain/openai";
import { llmPlanner, staticPlanner, type Planner, type StaticPlannerOptions } from "langgraph-replan";

export const DEFAULT_PLANNER_MODEL = "gpt-5-mini";

export function defaultPlanner(
  fallback: StaticPlannerOptions,
  env: NodeJS.ProcessEnv = process.env,
): { planner: Planner; description: string } {
  const key = env.OPENAI_API_KEY;
  if (!key) {
    return { planner: staticPlanner(fallback), description: "OPENAI_API_KEY is not set: using the static planner" };
  }
  const modelName = env.PLANNER_MODEL || DEFAULT_PLANNER_MODEL;
  const baseURL = env.OPENAI_BASE_URL;
  const model = new ChatOpenAI({ model: modelName, apiKey: key, ...(baseURL ? { configuration: { baseURL } } : {}) });
  const where = baseURL ? ` at ${baseURL}` : " (OpenAI)";
  return { planner: llmPlanner({ model }), description: `LLM planner: ${modelName}${where}` };
}

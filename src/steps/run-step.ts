/**
 * One attempt of an agent step: a chat model answers with structured output holding the step's
 * `produces` keys; an agent graph gets the messages and returns its `structuredResponse` or its
 * final message (JSON read when it is a JSON object).
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import type { AgentGraph } from "./handle.js";

/** Any JSON scalar: what strict structured output can declare for a value of unknown type. */
const SCALAR = { anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }, { type: "null" }] };

/** The answer's JSON schema: the produced keys, all required (OpenAI strict mode). */
export function answerSchema(produces: readonly string[]): Record<string, unknown> {
  const keys = produces.length > 0 ? produces : ["result"];
  return {
    type: "object",
    properties: Object.fromEntries(keys.map((k) => [k, SCALAR])),
    required: [...keys],
    additionalProperties: false,
  };
}

export async function askChatModel(
  model: BaseChatModel,
  messages: BaseMessage[],
  produces: readonly string[],
  config: RunnableConfig,
): Promise<unknown> {
  const structured = model.withStructuredOutput(answerSchema(produces), { name: "step_answer", strict: true });
  return standalone(() => structured.invoke(messages, config));
}

/**
 * Runs `call` outside the executor's ambient run context. Otherwise LangGraph would make an agent
 * graph a subgraph of the executor task that started it, but a step's call may outlive that task
 * (calls in flight across executor visits); an agent is its own run (docs/decisions/0021-agent-steps.md).
 */
export function standalone<T>(call: () => Promise<T>): Promise<T> {
  return AsyncLocalStorageProviderSingleton.getInstance().run(undefined, call);
}

export async function askAgent(graph: AgentGraph, messages: BaseMessage[], config: RunnableConfig): Promise<unknown> {
  const result = (await standalone(() => graph.invoke({ messages }, config))) as {
    structuredResponse?: unknown;
    messages?: { content?: unknown }[];
  } | null;
  if (result?.structuredResponse !== undefined) return result.structuredResponse;
  return readContent(result?.messages?.at(-1)?.content);
}

/** A final message's text; a JSON object in it is read as the answer. */
function readContent(content: unknown): unknown {
  const text = Array.isArray(content)
    ? content.map((part) => (typeof part === "string" ? part : ((part as { text?: unknown }).text ?? ""))).join("")
    : content;
  if (typeof text !== "string") return text;
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    try {
      return JSON.parse(trimmed) as unknown;
    } catch {
      return text;
    }
  }
  return text;
}

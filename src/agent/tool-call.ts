/** Small adapters between a tool's message and the plan: its text, its output as data, its idempotency key. */
import type { MessageContent } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";

/** What the middleware needs of a tool: its name, and `invoke` to pass an idempotency key through. */
export interface Invokable {
  name: string;
  invoke?: (input: unknown, config?: RunnableConfig) => Promise<unknown>;
}

export function textOf(content: MessageContent): string {
  if (typeof content === "string") return content;
  return content.map((part) => (typeof part === "string" ? part : "text" in part ? String(part.text) : "")).join("");
}

/** A tool message's content as the output the success signal and `produces` read: JSON when it is JSON. */
export function outputOf(content: string): unknown {
  try {
    return JSON.parse(content) as unknown;
  } catch {
    return content;
  }
}

/**
 * The same tool, called with the operation's idempotency key in `config.configurable.idempotencyKey`
 * (where the graph puts it). Handed to the next handler as the request's tool, the documented way
 * for a middleware to supply the tool a call runs.
 */
export function withKey<T extends object>(tool: T, key: string): T {
  const invoke = (tool as Invokable).invoke;
  if (typeof invoke !== "function") return tool;
  const keyed = Object.create(tool) as T & Required<Pick<Invokable, "invoke">>;
  keyed.invoke = (input: unknown, config?: RunnableConfig) =>
    invoke.call(tool, input, { ...config, configurable: { ...config?.configurable, idempotencyKey: key } });
  return keyed;
}

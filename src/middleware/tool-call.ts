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
  // `this` is passed on, so a wrapper around this one (`probed`) still sees the tool's own calls.
  keyed.invoke = function (this: unknown, input: unknown, config?: RunnableConfig) {
    const configurable = { ...config?.configurable, idempotencyKey: key };
    return invoke.call(this ?? tool, input, { ...config, configurable });
  };
  return keyed;
}

/**
 * What the tool's own calls did during one attempt: how many ran, what the last one threw, and
 * what it returned before LangChain turned it into message text (an `undefined` or a circular
 * object would read as `""` or `"[object Object]"` there, and the graph rejects both).
 */
export interface CallProbe {
  calls: number;
  thrown?: { error: unknown };
  returned?: { value: unknown };
}

interface ToolInternals {
  /** A LangChain tool's body, called by its `invoke` with the parsed arguments. */
  _call?: (...args: unknown[]) => unknown;
  responseFormat?: string;
}

/**
 * The same tool, counting its calls and keeping what the last one threw. A middleware between
 * this one and the tool (toolRetryMiddleware) may call it several times and turn its error into
 * a message; the probe keeps the real error class and the number of calls for the ladder.
 */
export function probed<T extends object>(tool: T, probe: CallProbe, signal?: AbortSignal): T {
  const invoke = (tool as Invokable).invoke;
  if (typeof invoke !== "function") return tool;
  const watched = Object.create(tool) as T & Required<Pick<Invokable, "invoke">> & ToolInternals;
  const body = (tool as ToolInternals)._call;
  // A content-and-artifact tool returns a pair, not its output: its message text is what it returned.
  if (typeof body === "function" && (tool as ToolInternals).responseFormat !== "content_and_artifact")
    watched._call = async function (this: unknown, ...args: unknown[]) {
      const value: unknown = await body.apply(this, args);
      probe.returned = { value };
      return value;
    };
  watched.invoke = async (input: unknown, config?: RunnableConfig) => {
    probe.calls += 1;
    delete probe.returned;
    // The attempt's signal (its timeout) reaches the tool beside the run's own.
    const given = config?.signal;
    const both = signal && given ? AbortSignal.any([signal, given]) : (signal ?? given);
    try {
      const out = await invoke.call(watched, input, both ? { ...config, signal: both } : config);
      delete probe.thrown;
      return out;
    } catch (error) {
      probe.thrown = { error };
      throw error;
    }
  };
  return watched;
}

/** toolRetryMiddleware's message when it gives up (langchain 1.5, `onFailure: "continue"`). */
const GAVE_UP = /^Tool '[^']*' failed after (\d+) attempts? with ([A-Za-z_$][\w$]*)$/;

/** The calls and error class a toolRetryMiddleware give-up message names, when it is one. */
export function gaveUp(content: string): { calls: number; name: string } | undefined {
  const m = GAVE_UP.exec(content);
  if (!m) return undefined;
  const calls = Number(m[1]);
  return Number.isSafeInteger(calls) && calls > 0 ? { calls, name: m[2]! } : undefined;
}

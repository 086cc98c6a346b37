/**
 * One model call with what every planner and classifier call needs: retries through LangChain's
 * own `Runnable.withRetry`, token usage from the model's `usage_metadata`, latency, cost from a
 * price table, and an error id for every failed attempt. Which errors are worth a retry is
 * decided here, by status and code (`modelFailure`); how long to wait is LangChain's.
 */
import { randomUUID } from "node:crypto";
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatGeneration, LLMResult } from "@langchain/core/outputs";
import type { Runnable, RunnableConfig } from "@langchain/core/runnables";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { z } from "zod";
import { withHandler, type ModelTrace } from "../contracts/trace.js";
import type { UsageEntry } from "../contracts/usage.js";
import { PlanManagerError } from "../errors.js";
import { errorInfo } from "../policy/ladder/deviation.js";
import { classifyEvidence } from "../policy/ladder/evidence-rules.js";
import { withModelSpan } from "../otel/model-span.js";

/** USD per million tokens, by model name. */
export type PriceTable = Record<string, { input: number; output: number }>;

const PriceSchema = z.number().finite().min(0);
const PriceTableSchema = z.record(z.string(), z.strictObject({ input: PriceSchema, output: PriceSchema }));

/**
 * `prices` checked where it enters (`createPlanManager`, `llmPlanner`, `llmClassifier`): every
 * price a finite number ≥ 0, so that no cost, and no budget summed from costs, can become NaN.
 */
export function resolvePrices(owner: string, prices: unknown): PriceTable | undefined {
  if (prices === undefined) return undefined;
  const parsed = PriceTableSchema.safeParse(prices);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const path = ["prices", ...issue.path.map(String)].join(".");
  const why = `${issue.message} (prices are USD per million tokens: { [model]: { input, output } }, finite and >= 0)`;
  throw new PlanManagerError("invalid_options", `${owner}: ${path}: ${why}`, { path });
}

/** The `calls` option of `llmPlanner` and `llmClassifier`. */
export interface ModelCallSettings {
  /**
   * Retries after the first attempt, for model errors that may clear: HTTP 429 rate limits,
   * 408, 425, 5xx, network errors and timeouts. Auth (401, 403), quota (429
   * `insufficient_quota`) and other 4xx errors are never retried. The wait is LangChain's
   * (`Runnable.withRetry`: exponential from 1 s, doubling, with jitter). The model's own
   * `maxRetries` is set to 0 for these calls, so nothing retries twice.
   * Default 3; 0 turns retrying off; at most 10.
   */
  maxRetries?: number;
  /** Clock for `latencyMs` in usage entries. Default `Date.now`. */
  now?: () => number;
}

const CallSettingsSchema = z.strictObject({
  maxRetries: z.number().int().min(0).max(10).optional(),
  now: z.custom<() => number>((v) => typeof v === "function", "must be a function returning epoch ms").optional(),
});

/** `calls` checked where it enters: an unknown or out-of-range field fails, named. */
export function resolveCallSettings(owner: string, calls: unknown): Required<ModelCallSettings> {
  const parsed = CallSettingsSchema.safeParse(calls ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const keys = issue.code === "unrecognized_keys" ? issue.keys : issue.path.map(String);
    const path = ["calls", ...keys.slice(0, 1)].join(".");
    const how =
      issue.code === "unrecognized_keys" ? "is not an option; `calls` takes maxRetries and now" : issue.message;
    throw new PlanManagerError("invalid_options", `${owner}: ${path} ${how}`, { path });
  }
  const settings = calls as ModelCallSettings | undefined;
  return { maxRetries: settings?.maxRetries ?? 3, now: settings?.now ?? Date.now };
}

/** A usage entry as a planner reports it; the node adds `purpose` and `at`. */
export type UsageReport = Omit<UsageEntry, "at" | "purpose">;

/** What retrying a failed model call can do about it. */
export type ModelFailure = "authentication" | "quota" | "transient" | "permanent" | "unparseable";

/** Status and code decide; the message only where they say nothing (a quota or connection error). */
export function modelFailure(error: unknown): ModelFailure {
  const info = errorInfo(error);
  // LangChain's output parsers throw OutputParserException (lc_error_code OUTPUT_PARSING_FAILURE);
  // a parser that calls JSON.parse directly throws a SyntaxError. Either way the model answered,
  // in a shape that does not parse: the caller may ask again, the same call would only repeat it.
  const lcCode = (error as { lc_error_code?: unknown } | null)?.lc_error_code;
  if (lcCode === "OUTPUT_PARSING_FAILURE" || info.name === "SyntaxError") return "unparseable";
  if (info.code === "insufficient_quota" || /quota/i.test(info.message)) return "quota";
  if (info.status === 401 || info.status === 403) return "authentication";
  // LangChain names a call its caller aborted AbortError (a client timeout is TimeoutError): the
  // run is stopping, and a retry would only delay it.
  if (info.name === "AbortError") return "permanent";
  const evidence = classifyEvidence({ kind: "error", attempt: 1, message: info.message, error: info });
  if (evidence.failureClass === "transient") return "transient";
  // OpenAI's APIConnectionError ("Connection error.") and client-side timeouts carry no status.
  if (info.status === undefined && /timeout|timed out|connection/i.test(`${info.name} ${info.message}`)) {
    return "transient";
  }
  return "permanent";
}

export function costOf(prices: PriceTable | undefined, model: string | undefined, input: number, output: number) {
  // Only the table's own entries: a model reporting the name "constructor" has no price, not Object's.
  const price = model && prices && Object.hasOwn(prices, model) ? prices[model] : undefined;
  return price ? (input * price.input + output * price.output) / 1_000_000 : 0;
}

/**
 * The model with structured output that we parse ourselves: the zod schema goes out as a JSON
 * schema (strict), and the answer comes back unvalidated. Given the zod schema, LangChain and the
 * OpenAI SDK would validate the answer and throw on one a provider returned in its natural shape
 * (nullable fields left out, an object for a JSON string); the caller's lenient parse accepts it.
 */
export function structuredOutput(model: BaseChatModel, schema: z.ZodType, name: string) {
  // A plain copy: toJsonSchema's result carries a Standard Schema marker that would make LangChain
  // convert it again (to draft-07); the copy goes out exactly as written.
  const jsonSchema = JSON.parse(JSON.stringify(toJsonSchema(schema))) as Record<string, unknown>;
  return model.withStructuredOutput(jsonSchema, { name, strict: true }) as unknown as Runnable<BaseMessage[], unknown>;
}

type MessageWithUsage = BaseMessage & { usage_metadata?: { input_tokens: number; output_tokens: number } };
/** What older chat models report in `llmOutput` instead of `usage_metadata`. */
type TokenUsage = { promptTokens?: number; completionTokens?: number };

/** Tokens, model name and reply text of one model run's result, as LangChain's callbacks report it. */
export function resultUsage(output: LLMResult): { input: number; output: number; model?: string; reply?: string } {
  let input = 0;
  let out = 0;
  let model: string | undefined;
  let reply: string | undefined;
  for (const generation of output.generations.flat()) {
    const message = (generation as ChatGeneration).message as MessageWithUsage | undefined;
    input += message?.usage_metadata?.input_tokens ?? 0;
    out += message?.usage_metadata?.output_tokens ?? 0;
    const meta = (message?.response_metadata ?? {}) as { model_name?: unknown; model?: unknown };
    const name = meta.model_name ?? meta.model;
    if (typeof name === "string") model = name;
    if (typeof generation.text === "string") reply = generation.text;
  }
  const tokenUsage = output.llmOutput?.tokenUsage as TokenUsage | undefined;
  if (input === 0 && out === 0 && tokenUsage) {
    input = tokenUsage.promptTokens ?? 0;
    out = tokenUsage.completionTokens ?? 0;
  }
  return { input, output: out, ...(model ? { model } : {}), ...(reply !== undefined ? { reply } : {}) };
}

/** Tokens and model name of the current attempt; LangChain starts one chat-model run per attempt. */
class AttemptMeter extends BaseCallbackHandler {
  name = "langgraph-replan-usage";
  startedAt: number;
  inputTokens = 0;
  outputTokens = 0;
  model?: string;
  /** The text of the last reply, for a caller that shows the model what did not parse. */
  reply?: string;

  constructor(private readonly now: () => number) {
    super();
    this.startedAt = now();
  }

  override handleChatModelStart(): void {
    this.begin();
  }

  override handleLLMStart(): void {
    this.begin();
  }

  override handleLLMEnd(output: LLMResult): void {
    const usage = resultUsage(output);
    if (usage.model !== undefined) this.model = usage.model;
    if (usage.reply !== undefined) this.reply = usage.reply;
    this.inputTokens += usage.input;
    this.outputTokens += usage.output;
  }

  private begin(): void {
    this.startedAt = this.now();
    this.inputTokens = 0;
    this.outputTokens = 0;
  }
}

export interface ModelCall {
  /** Model name for usage entries when the answer does not name one. */
  modelName?: string;
  settings: Required<ModelCallSettings>;
  prices?: PriceTable;
  /** Every attempt, failed or not, is reported here. */
  report: (usage: UsageReport) => void;
  /** The caller's deadline (`policy.plannerTimeoutMs`) or the run's stop: aborts the model call and its retries. */
  signal?: AbortSignal;
  /** The run's callbacks, metadata and tags: a tracer given to `invoke` sees the call and its retries. */
  trace?: ModelTrace;
}

/** A model call's answer, or why there is none (errors are data: the caller decides to throw). */
export type ModelCallResult<T> =
  | { ok: true; value: T }
  | { ok: false; message: string; errorId: string; failure: ModelFailure; error: unknown; reply?: string };

/** Invokes `runnable`, retrying what may clear; every attempt is reported through `call.report`. */
export function callModel<T>(
  runnable: Runnable<BaseMessage[], T>,
  messages: BaseMessage[],
  call: ModelCall,
): Promise<ModelCallResult<T>> {
  return withModelSpan(call, (traced) => invokeRetrying(runnable, messages, traced));
}

async function invokeRetrying<T>(
  runnable: Runnable<BaseMessage[], T>,
  messages: BaseMessage[],
  call: ModelCall,
): Promise<ModelCallResult<T>> {
  const { settings } = call;
  const meter = new AttemptMeter(settings.now);
  let attempts = 0;
  let last: { error: unknown; errorId: string } | undefined;
  const reportAttempt = (errorId?: string) => {
    attempts += 1;
    const model = meter.model ?? call.modelName;
    call.report({
      ...(model ? { model } : {}),
      inputTokens: meter.inputTokens,
      outputTokens: meter.outputTokens,
      latencyMs: settings.now() - meter.startedAt,
      cost: costOf(call.prices, model, meter.inputTokens, meter.outputTokens),
      ...(errorId ? { errorId } : {}),
    });
  };
  const failed = (error: unknown) => {
    last = { error, errorId: `err_${randomUUID().slice(0, 8)}` };
    reportAttempt(last.errorId);
  };
  const retrying = runnable.withRetry({
    stopAfterAttempt: settings.maxRetries + 1,
    onFailedAttempt: (error: unknown) => {
      failed(error);
      // Throwing ends LangChain's retries: auth, quota and bad requests would only fail again.
      if (modelFailure(error) !== "transient") throw error;
    },
  });
  // `maxRetries: 0` is a chat-model call option: the model's own retries stay out of the way.
  const { trace } = call;
  const config = {
    callbacks: withHandler(trace?.callbacks, meter),
    ...(trace?.metadata ? { metadata: trace.metadata } : {}),
    ...(trace?.tags ? { tags: trace.tags } : {}),
    maxRetries: 0,
    ...(call.signal ? { signal: call.signal } : {}),
  } as RunnableConfig;
  try {
    const value = await retrying.invoke(messages, config);
    reportAttempt();
    return { ok: true, value };
  } catch (error) {
    if (last?.error !== error) failed(error);
    const { message, failure } = describeFailure(error, attempts);
    const reply = meter.reply;
    const errorId = last!.errorId;
    return { ok: false, message: `${message} [${errorId}]`, errorId, failure, error, ...(reply ? { reply } : {}) };
  }
}

function describeFailure(error: unknown, attempts: number): { message: string; failure: ModelFailure } {
  const info = errorInfo(error);
  // LangChain appends a troubleshooting URL after a blank line: the first line says what happened.
  const what = info.message.split("\n")[0]!.trim();
  const status = info.status !== undefined ? ` (${info.status})` : "";
  const failure = modelFailure(error);
  switch (failure) {
    case "authentication":
      return { failure, message: `model call authentication failed${status}: ${what}` };
    case "quota":
      return { failure, message: `model call quota exhausted${status}: ${what}` };
    case "unparseable":
      return { failure, message: `the reply is not valid JSON: ${what}` };
    case "transient": {
      const tries = `${attempts} attempt${attempts === 1 ? "" : "s"}`;
      return { failure, message: `model call failed after ${tries}${status}: ${what}` };
    }
    default:
      return { failure, message: `model call failed${status}: ${what}` };
  }
}

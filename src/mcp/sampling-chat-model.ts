/**
 * `SamplingChatModel`: a LangChain chat model whose calls go to the MCP client of the run, through
 * `sampling/createMessage` — the server plans with the client's own model and needs no API key
 * (docs/decisions/0060-sampling-through-the-client.md). Structured output is asked for as JSON
 * text (the schema in the system prompt) and parsed here (sampling-json.ts); the planner then
 * validates it as it validates any model's answer, asking again when it does not parse or fit.
 */
import type { CallbackManagerForLLMRun } from "@langchain/core/callbacks/manager";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import {
  BaseChatModel,
  type BaseChatModelCallOptions,
  type BaseChatModelParams,
} from "@langchain/core/language_models/chat_models";
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { RunnableLambda, type Runnable } from "@langchain/core/runnables";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import type { CreateMessageResult, ModelPreferences, SamplingMessage } from "@modelcontextprotocol/sdk/types.js";
import { PlanManagerError } from "../errors.js";
import { goneAway, samplingClient } from "./sampling-client.js";
import { parseJsonText } from "./sampling-json.js";

/** How `SamplingChatModel` asks the client's model: token limit, timeout, temperature, model preferences. */
export interface SamplingChatModelFields extends BaseChatModelParams {
  /** The most tokens the client's model may answer with (`maxTokens` of the request). Default 8192. */
  maxTokens?: number;
  /** The client's model choice, as hints and priorities (MCP `modelPreferences`). Default: none, the client chooses. */
  modelPreferences?: ModelPreferences;
  /** Sampling temperature, passed on. Default: none, the client's. */
  temperature?: number;
  /**
   * How long one request waits for the client's answer, in ms: a client may show the request to its
   * user before sampling. Default 300000 (5 minutes).
   */
  timeoutMs?: number;
}

/** Per-call options of `SamplingChatModel`. */
export interface SamplingCallOptions extends BaseChatModelCallOptions {
  /** Answer as JSON text fitting this schema (set by `withStructuredOutput`). */
  responseFormat?: { name: string; schema: Record<string, unknown> };
}

const DEFAULT_MAX_TOKENS = 8192;
const DEFAULT_TIMEOUT_MS = 300_000;

/**
 * A LangChain chat model whose calls go to the MCP client that started, answered or resumed the run,
 * through `sampling/createMessage`: `llmPlanner({ model: new SamplingChatModel() })` plans with the
 * client's own model. A client without sampling gets `sampling_unsupported`; the plan stays resumable.
 */
export class SamplingChatModel extends BaseChatModel<SamplingCallOptions> {
  readonly maxTokens: number;
  readonly modelPreferences: ModelPreferences | undefined;
  readonly temperature: number | undefined;
  readonly timeoutMs: number;

  constructor(fields: SamplingChatModelFields = {}) {
    super(fields);
    this.maxTokens = positiveInteger(fields.maxTokens, DEFAULT_MAX_TOKENS, "maxTokens");
    this.timeoutMs = positiveInteger(fields.timeoutMs, DEFAULT_TIMEOUT_MS, "timeoutMs");
    this.modelPreferences = fields.modelPreferences;
    this.temperature = fields.temperature;
  }

  _llmType(): string {
    return "mcp-sampling";
  }

  async _generate(
    messages: BaseMessage[],
    options: this["ParsedCallOptions"],
    _runManager?: CallbackManagerForLLMRun,
  ): Promise<ChatResult> {
    const client = samplingClient();
    const { systemPrompt, sampled } = toSampling(messages, options.responseFormat);
    const result = await client
      .createMessage(
        {
          messages: sampled,
          ...(systemPrompt ? { systemPrompt } : {}),
          maxTokens: this.maxTokens,
          includeContext: "none",
          ...(this.modelPreferences ? { modelPreferences: this.modelPreferences } : {}),
          ...(this.temperature !== undefined ? { temperature: this.temperature } : {}),
        },
        { timeout: this.timeoutMs, ...(options.signal ? { signal: options.signal } : {}) },
      )
      // A connection closed under the request is not a model error to retry: the run waits for a client.
      .catch((error: unknown) => {
        throw client.connected ? error : goneAway(client);
      });
    const text = textOf(result);
    const message = new AIMessage({
      content: text,
      response_metadata: { model: result.model, ...(result.stopReason ? { stop_reason: result.stopReason } : {}) },
    });
    return { generations: [{ text, message }] };
  }

  /**
   * The answer as a JSON object fitting `schema` (a zod schema or a JSON schema): asked for as JSON
   * text, parsed here (a fenced block allowed), validated by the caller. `includeRaw` is not offered.
   */
  override withStructuredOutput<RunOutput extends Record<string, unknown> = Record<string, unknown>>(
    schema: object,
    config?: { name?: string; includeRaw?: boolean },
  ): Runnable<BaseLanguageModelInput, RunOutput> {
    if (config?.includeRaw)
      throw new PlanManagerError(
        "invalid_options",
        "SamplingChatModel.withStructuredOutput: includeRaw is not offered",
        {
          path: "includeRaw",
        },
      );
    const jsonSchema = isZodLike(schema) ? (toJsonSchema(schema) as Record<string, unknown>) : schema;
    const responseFormat = { name: config?.name ?? "answer", schema: jsonSchema as Record<string, unknown> };
    const parse = RunnableLambda.from(
      (message: BaseMessage) => parseJsonText(contentText(message.content)) as RunOutput,
    );
    return this.withConfig({ responseFormat }).pipe(parse);
  }
}

function positiveInteger(value: number | undefined, fallback: number, path: string): number {
  if (value === undefined) return fallback;
  if (Number.isInteger(value) && value > 0) return value;
  throw new PlanManagerError("invalid_options", `SamplingChatModel: ${path} must be a whole number > 0, got ${value}`, {
    path,
  });
}

const isZodLike = (schema: object): boolean => "_zod" in schema || "_def" in schema;

/** The conversation as MCP sampling takes it: system text apart, the rest as user and assistant turns. */
function toSampling(
  messages: BaseMessage[],
  format: SamplingCallOptions["responseFormat"],
): { systemPrompt: string; sampled: SamplingMessage[] } {
  const system: string[] = [];
  const sampled: SamplingMessage[] = [];
  for (const message of messages) {
    const text = contentText(message.content);
    const type = message.getType();
    if (type === "system") system.push(text);
    else sampled.push({ role: type === "ai" ? "assistant" : "user", content: { type: "text", text } });
  }
  if (format) system.push(formatRule(format));
  return { systemPrompt: system.join("\n\n"), sampled };
}

/** What the planner's provider would enforce with a schema, said in words: the answer is JSON text. */
function formatRule(format: NonNullable<SamplingCallOptions["responseFormat"]>): string {
  return [
    `Answer with one JSON object only (the "${format.name}"), with no text around it. It must fit this JSON schema:`,
    JSON.stringify(format.schema),
  ].join("\n");
}

function contentText(content: BaseMessage["content"]): string {
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" && typeof part.text === "string" ? part.text : "")).join("");
}

/** The text of the client's answer; an answer with none (an image, audio) cannot be a plan. */
function textOf(result: CreateMessageResult): string {
  const parts = Array.isArray(result.content) ? result.content : [result.content];
  const texts = parts.filter((part) => part.type === "text").map((part) => (part as { text: string }).text);
  if (texts.length > 0) return texts.join("");
  const kinds = parts.map((part) => part.type).join(", ");
  throw new PlanManagerError("planner_failed", `the client's model answered with no text (${kinds})`);
}

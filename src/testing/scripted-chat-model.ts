/**
 * A scripted chat model for tests, offline: entry n of the script answers call n (the last entry
 * answers every later call). It is a whole chat model, so it can drive what real ones drive:
 * `llmPlanner`, `llmClassifier` and steps done by models (structured output), and `createAgent`
 * with `planMiddleware` (tool calling, streaming). No test framework here: this package's own
 * suite, benchmarks and demos use it too.
 */
import { AIMessage, AIMessageChunk, type BaseMessage, type ToolCall } from "@langchain/core/messages";
import type { BaseLanguageModelInput } from "@langchain/core/language_models/base";
import type { BindToolsInput } from "@langchain/core/language_models/chat_models";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";
import type { Runnable } from "@langchain/core/runnables";
import { FakeListChatModel, type FakeListChatModelCallOptions } from "@langchain/core/utils/testing";
import { PlanManagerError } from "../errors.js";

/**
 * One answer of the script:
 * - a string: the reply's text;
 * - an `AIMessage`: the reply as written, e.g. `new AIMessage({ content: "", tool_calls: [{ name, args }] })`
 *   to call tools (a tool call without an `id` gets `call-N-I`, for call N and its I-th tool call);
 * - an `Error`: thrown, as a provider's error would be;
 * - any other object: its JSON as the reply's text (what structured output parses).
 */
export type ScriptAnswer = string | AIMessage | Error | object;

/** An answer, or a function of the messages the call received that returns one (to answer by what the prompt says). */
export type ScriptEntry = ScriptAnswer | ((messages: BaseMessage[]) => ScriptAnswer);

/** Options of `ScriptedChatModel`: the model name and the token usage it reports. */
export interface ScriptedChatModelOptions {
  /** The model name reported in `response_metadata.model_name` (what a price table is keyed by). Default `"fake-planner-1"`. */
  model?: string;
  /** Tokens reported on every reply as `usage_metadata`, unless the scripted `AIMessage` has its own. Default 1000 in, 200 out. */
  usage?: { input: number; output: number };
}

/** What a model and the copies `bindTools` returns share: the script's position is the number of calls received. */
interface Shared {
  script: readonly ScriptEntry[];
  received: BaseMessage[][];
}

/**
 * A chat model answering from a script, for offline tests: entry n answers call n, the last answers every
 * later call. Entries are text, messages (with tool calls), errors to throw, objects for structured output,
 * or functions of the messages received (docs/guides/create-agent.md).
 */
export class ScriptedChatModel extends FakeListChatModel {
  readonly model: string;
  private readonly usage: { input: number; output: number };
  private shared: Shared;

  constructor(script: ScriptEntry[], options: ScriptedChatModelOptions = {}) {
    // FakeListChatModel's own response list is never read: every answer comes from the script.
    super({ responses: [""] });
    this.shared = { script, received: [] };
    this.model = options.model ?? "fake-planner-1";
    this.usage = options.usage ?? { input: 1000, output: 200 };
  }

  /** The messages each call received, in call order, across this model and the models `bindTools` returned. */
  get received(): BaseMessage[][] {
    return this.shared.received;
  }

  /**
   * The same script at the same position, answering with tool calls where the script says so
   * (createAgent binds its tools on every model call; a copy with its own position would answer
   * the first entry again). The tools are not checked against the script's calls.
   */
  override bindTools(
    _tools: BindToolsInput[],
    kwargs?: Partial<FakeListChatModelCallOptions>,
  ): Runnable<BaseLanguageModelInput, AIMessageChunk, FakeListChatModelCallOptions> {
    const bound = new ScriptedChatModel([...this.shared.script], { model: this.model, usage: this.usage });
    bound.shared = this.shared;
    return bound.withConfig(kwargs ?? {}) as unknown as Runnable<
      BaseLanguageModelInput,
      AIMessageChunk,
      FakeListChatModelCallOptions
    >;
  }

  /** Builds each answer afresh (no shared response list), so calls running at once get their own answers. */
  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = this.answer(messages);
    return { generations: [{ text: message.text, message }] };
  }

  /**
   * The same answer as `_generate`, streamed as a provider streams it: the text word by word, then
   * one chunk with the tool calls (arguments as JSON text), the token usage and the model's name.
   * LangGraph streams every model call of a graph run with `streamMode: "messages"`.
   */
  override async *_streamResponseChunks(
    messages: BaseMessage[],
    _options?: unknown,
    runManager?: { handleLLMNewToken(token: string): unknown },
  ): AsyncGenerator<ChatGenerationChunk> {
    const whole = this.answer(messages);
    const words = whole.text.match(/\s*\S+\s*/g) ?? (whole.text ? [whole.text] : []);
    for (const word of words) {
      yield new ChatGenerationChunk({ text: word, message: new AIMessageChunk({ content: word, id: whole.id }) });
      await runManager?.handleLLMNewToken(word);
    }
    const last = new AIMessageChunk({
      content: "",
      id: whole.id,
      tool_call_chunks: whole.tool_calls?.map((c, index) => ({
        name: c.name,
        args: JSON.stringify(c.args),
        id: c.id,
        index,
        type: "tool_call_chunk" as const,
      })),
      usage_metadata: whole.usage_metadata,
      response_metadata: whole.response_metadata,
    });
    yield new ChatGenerationChunk({ text: "", message: last });
  }

  /** Records the call and returns the script's answer to it as a new message (the script's own is never handed out). */
  private answer(messages: BaseMessage[]): AIMessage {
    const { script, received } = this.shared;
    received.push(messages);
    const call = received.length;
    // An empty script is a model that must not be called (tests of options hand one over).
    if (script.length === 0)
      throw new PlanManagerError(
        "invalid_options",
        "ScriptedChatModel: the script is empty, so it has no answer: give it at least one (the last answers every later call)",
        { path: "script" },
      );
    const scripted = script[Math.min(call - 1, script.length - 1)];
    const entry = typeof scripted === "function" ? scripted(messages) : scripted;
    if (entry instanceof Error) throw entry;
    const usage_metadata = {
      input_tokens: this.usage.input,
      output_tokens: this.usage.output,
      total_tokens: this.usage.input + this.usage.output,
    };
    const response_metadata = { model_name: this.model };
    if (!AIMessage.isInstance(entry)) {
      const content = typeof entry === "string" ? entry : JSON.stringify(entry);
      return new AIMessage({ content, usage_metadata, response_metadata });
    }
    const toolCalls: ToolCall[] = (entry.tool_calls ?? []).map((c, i) => ({
      ...c,
      id: c.id ?? `call-${call}-${i + 1}`,
      type: "tool_call",
    }));
    return new AIMessage({
      content: entry.content,
      ...(entry.id === undefined ? {} : { id: entry.id }),
      ...(entry.name === undefined ? {} : { name: entry.name }),
      additional_kwargs: entry.additional_kwargs,
      tool_calls: toolCalls,
      usage_metadata: entry.usage_metadata ?? usage_metadata,
      response_metadata: { ...response_metadata, ...entry.response_metadata },
    });
  }
}

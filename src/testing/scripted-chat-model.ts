/**
 * A scripted chat model: LangChain's FakeListChatModel, plus what a test of a planner or a step
 * done by a model needs to see — scripted errors, the messages each call received, and token
 * usage reported the way real chat models report it (`usage_metadata`). Entry n answers call n
 * (the last entry answers every later call); an entry may be a function of the messages (to
 * answer by what the prompt says). An object is answered as its JSON, an Error is thrown. No test
 * framework here: this package's own suite, benchmarks and demos use it too.
 */
import { AIMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { FakeListChatModel } from "@langchain/core/utils/testing";

export type ScriptEntry = string | object | Error | ((messages: BaseMessage[]) => string | object | Error);

export class ScriptedChatModel extends FakeListChatModel {
  readonly received: BaseMessage[][] = [];
  private readonly script: ScriptEntry[];
  private readonly usage: { input: number; output: number };
  readonly model: string;

  constructor(script: ScriptEntry[], options: { model?: string; usage?: { input: number; output: number } } = {}) {
    super({ responses: [""] });
    this.script = script;
    this.model = options.model ?? "fake-planner-1";
    this.usage = options.usage ?? { input: 1000, output: 200 };
  }

  /** Builds the answer itself (no shared response list), so calls running at once get their own answers. */
  override async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.received.push(messages);
    const scripted = this.script[Math.min(this.received.length - 1, this.script.length - 1)];
    const entry = typeof scripted === "function" ? scripted(messages) : scripted;
    if (entry instanceof Error) throw entry;
    const text = typeof entry === "string" ? entry : JSON.stringify(entry);
    const message = new AIMessage({
      content: text,
      usage_metadata: {
        input_tokens: this.usage.input,
        output_tokens: this.usage.output,
        total_tokens: this.usage.input + this.usage.output,
      },
      response_metadata: { model_name: this.model },
    });
    return { generations: [{ text, message }] };
  }
}

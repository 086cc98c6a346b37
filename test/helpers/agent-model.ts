/**
 * The one scripted agent model of the suite: LangChain's `fakeModel()` (from @langchain/core's
 * testing utilities), fed one reply per turn. A reply is a list of tool calls, a final text, or a
 * function of the messages the model received (to behave like an agent reacting to results).
 * Tool call ids are numbered per model, so runs are reproducible.
 */
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";

export interface Call {
  name: string;
  args: Record<string, unknown>;
}
export type Reply = Call[] | string;
export type Turn = Reply | ((messages: BaseMessage[]) => Reply);

export function scriptedAgentModel(turns: readonly Turn[]) {
  const model = fakeModel();
  let ids = 0;
  for (const turn of turns)
    model.respond((messages) => {
      const reply = typeof turn === "function" ? turn(messages) : turn;
      if (typeof reply === "string") return new AIMessage(reply);
      const toolCalls = reply.map((c) => ({ ...c, id: `call-${++ids}`, type: "tool_call" as const }));
      return new AIMessage({ content: "", tool_calls: toolCalls });
    });
  return model;
}

/** The tool results the model received last (after its latest tool calls). */
export function lastResults(messages: readonly BaseMessage[]): ToolMessage[] {
  const lastAi = messages.findLastIndex((m) => m.getType() === "ai");
  return messages.slice(lastAi + 1).filter((m): m is ToolMessage => ToolMessage.isInstance(m));
}

/** The text of every message the model received on call `n` (0-based), one string per message. */
export function received(model: ReturnType<typeof fakeModel>, n: number): string[] {
  return model.calls[n]!.messages.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

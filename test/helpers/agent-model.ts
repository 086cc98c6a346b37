/**
 * The suite's scripted agent turns, on `ScriptedChatModel` (langgraph-replan/testing), fed one reply
 * per turn. A reply is a list of tool calls, a final text, or a function of the messages the model
 * received (to behave like an agent reacting to results). Tool call ids are numbered per model, so
 * runs are reproducible; a call past the last turn throws, so a test never loops on its last reply.
 */
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { ScriptedChatModel, type ScriptEntry } from "../../src/testing/index.js";

export interface Call {
  name: string;
  args: Record<string, unknown>;
}
export type Reply = Call[] | string;
export type Turn = Reply | ((messages: BaseMessage[]) => Reply);

export function scriptedAgentModel(turns: readonly Turn[]): ScriptedChatModel {
  let ids = 0;
  const script: ScriptEntry[] = turns.map((turn) => (messages: BaseMessage[]) => {
    const reply = typeof turn === "function" ? turn(messages) : turn;
    if (typeof reply === "string") return new AIMessage(reply);
    return new AIMessage({ content: "", tool_calls: reply.map((c) => ({ ...c, id: `call-${++ids}` })) });
  });
  script.push(new Error(`scripted agent model: no reply left after ${turns.length} turns`));
  return new ScriptedChatModel(script);
}

/** The tool results the model received last (after its latest tool calls). */
export function lastResults(messages: readonly BaseMessage[]): ToolMessage[] {
  const lastAi = messages.findLastIndex((m) => m.getType() === "ai");
  return messages.slice(lastAi + 1).filter((m): m is ToolMessage => ToolMessage.isInstance(m));
}

/** The text of every message the model received on call `n` (0-based), one string per message. */
export function received(model: ScriptedChatModel, n: number): string[] {
  return model.received[n]!.map((m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content)));
}

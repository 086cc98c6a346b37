/**
 * `langgraph-replan/testing`: a scripted chat model for your own tests of planners, classifiers,
 * steps done by models and `createAgent` agents (tool calls, streaming), offline. It needs only
 * `@langchain/core` (a required peer), so importing it pulls in neither `langchain` nor the
 * PostgreSQL packages.
 *
 * @module langgraph-replan/testing
 */
export { ScriptedChatModel } from "./scripted-chat-model.js";
export type { ScriptAnswer, ScriptEntry, ScriptedChatModelOptions } from "./scripted-chat-model.js";

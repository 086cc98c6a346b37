/**
 * `langgraph-replan/testing`: a scripted chat model for your own tests of planners, classifiers
 * and steps done by models, offline. It needs only `@langchain/core` (a required peer), so
 * importing it pulls in neither `langchain` nor the PostgreSQL packages.
 */
export { ScriptedChatModel } from "./scripted-chat-model.js";
export type { ScriptEntry } from "./scripted-chat-model.js";

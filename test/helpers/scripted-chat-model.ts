// The suite's scripted chat model is the one users get from `langgraph-replan/testing`.
export { ScriptedChatModel, type ScriptEntry } from "../../src/testing/index.js";

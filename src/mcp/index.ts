/**
 * `langgraph-replan/mcp`: the plan manager as a planning service for agents, over the Model
 * Context Protocol (`@modelcontextprotocol/sdk`, an optional peer). `langgraph-replan mcp` serves
 * it from the command line; `createPlanService` + `createMcpServer` embed it.
 *
 * @module langgraph-replan/mcp
 */
export { PlanService, MAX_WAIT_S } from "./service.js";
export type { PlanServiceOptions, ServedGraph, CreateInput, Created, ListInput, Listed } from "./service.js";
export type { PlanStatus } from "./status.js";
export type { PlanWakes } from "./wakes.js";
export type { PlanQueue } from "./service-types.js";
export { createMcpServer, type McpServerOptions } from "./server.js";
export { PlanTaskStore, TASK_POLL_MS, type PlanTaskOptions } from "./plan-tasks.js";
export { RunRecovery, takeUpRuns, type RecoveryOptions, type ServerRuns } from "./recovery.js";
export { ElicitSession, ELICIT_TIMEOUT_MS, type ElicitSessionOptions } from "./elicit-session.js";
export { SamplingChatModel, type SamplingChatModelFields, type SamplingCallOptions } from "./sampling-chat-model.js";
export { zeroConfigGraph, ZERO_CONFIG_GRAPH, type ZeroConfigOptions } from "./zero-config.js";

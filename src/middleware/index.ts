/**
 * `langgraph-replan/agent`: the plan manager as a middleware for LangChain's `createAgent`
 * (`langchain` is an optional peer dependency; only this subpath needs it).
 *
 * @module langgraph-replan/agent
 */
export { planMiddleware } from "./middleware.js";
export type { PlanMiddlewareOptions } from "./agent-options.js";
export { AgentPlanState } from "./agent-state.js";
export type { AgentPlanValues, Escalation, Trigger } from "./agent-state.js";
export type { ReviewRequest, Answer } from "./person-review.js";
export { WRITE_PLAN } from "./write-plan.js";

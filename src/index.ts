/**
 * The public API (docs/architecture.md "State and channels"): the factory and its options, the state
 * schemas, planners, tool errors, and the resume and scope-change helpers — what the quickstart and an
 * embedding graph need. The views are `langgraph-replan/views`; the pure core — the classifier, its rule
 * tables, the validator, the schemas, the CEL evaluator — is `langgraph-replan/policy`; workers are
 * `langgraph-replan/worker`.
 *
 * @module langgraph-replan
 */
export { createPlanManager, PlanManagerGraph } from "./graph/create-plan-manager.js";
export { CompiledPlanManager } from "./graph/compiled-plan-manager.js";
export { pendingQuestion, resumeRun } from "./graph/resume-run.js";
export type { PlanManagerResult } from "./graph/resume-run.js";
export { requestScopeChange } from "./graph/scope-change.js";
// An operator's stop needs no PostgreSQL: the root offers it to SQLite users (worker/stop-run.ts reaches no pg).
export { requestStop, resumeStopped } from "./worker/stop-run.js";
export type { PlanManagerOptions, Clock, StepAgent, AgentGraph, ModelTiers } from "./runtime/options.js";
export type { PolicyOptions, ReplanMemoryOptions } from "./policy/options.js";
export type { ReplanTemplate } from "./policy/options.js";
export { PlanManagerState, PlanManagerInput, PlanManagerOutput } from "./runtime/state.js";
export type { PlanManagerStateType, PlanManagerInputType, PlanManagerOutputType } from "./runtime/state.js";
export type { UsageEntry } from "./contracts/usage.js";
export type { PlanEvent } from "./runtime/events.js";

export { staticPlanner } from "./planners/static-planner.js";
export type { StaticPlannerOptions } from "./planners/static-planner.js";
export { llmPlanner } from "./planners/llm-planner.js";
export type { LlmPlannerOptions } from "./planners/llm-planner.js";
export { llmClassifier } from "./planners/llm-classifier.js";
export type { LlmClassifierOptions } from "./planners/llm-classifier.js";
export type { PriceTable, ModelCallSettings } from "./planners/model-call.js";
export type {
  AgentInfo,
  ExtendRequest,
  Planner,
  PlanRequest,
  ReplanRequest,
  ReplanHint,
  ToolInfo,
} from "./contracts/planner.js";
export type { FallbackClassifier, FallbackAnswer } from "./contracts/classifier.js";
export type { ModelTrace } from "./contracts/trace.js";

export {
  TransientError,
  PermanentError,
  AssumptionBrokenError,
  PlanManagerError,
  isPlanManagerError,
} from "./errors.js";
export type { PlanManagerErrorCode } from "./errors.js";

export { StepSchema } from "./plan/schema/step.js";
export type { ReplanRecord, FailureClass, Action } from "./plan/schema/decision.js";
export type {
  ResumeValue,
  InterruptPayload,
  PlanReviewContext,
  EscalationContext,
  HumanStepContext,
  ExternalStepContext,
  ExternalOffer,
  SubmittedError,
} from "./plan/schema/interrupts.js";
export type { Outcome, RunStatus } from "./plan/schema/outcome.js";
export type { Assumption, PlanDraft, Plan } from "./plan/schema/plan.js";
export type { Fact, FactLabel, StepRun, StepStatus, SideEffectRecord, Budget } from "./plan/schema/run.js";
export type { Step, RetryPolicy, ModelTier } from "./plan/schema/step.js";
export type { PlanIssue, PlanIssueCode } from "./plan/validate.js";
export type { RuleId } from "./policy/ladder/rules.js";
export type { Decision } from "./policy/ladder/decision.js";

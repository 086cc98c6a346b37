/**
 * The public API (DESIGN §4): the factory and its options, the state schemas, planners, tool
 * errors, the resume and scope-change helpers, and the views. The pure core — the classifier,
 * its rule tables, the validator, the schemas, the CEL evaluator — is `langgraph-replan/policy`.
 */
export { createPlanManager, CompiledPlanManager, PlanManagerGraph } from "./graph/create-plan-manager.js";
export { resumeRun } from "./graph/resume.js";
export { requestScopeChange } from "./graph/scope-change.js";
export type { PlanManagerOptions, Clock, StepAgent, AgentGraph, ModelTiers } from "./runtime/options.js";
export type { PolicyOptions, ReplanMemoryOptions } from "./policy/options.js";
export type { ReplanTemplate } from "./policy/replan-memory.js";
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

export {
  TransientError,
  PermanentError,
  AssumptionBrokenError,
  PlanManagerError,
  isPlanManagerError,
} from "./errors.js";
export type { PlanManagerErrorCode } from "./errors.js";

export { StepSchema } from "./plan/schema.js";
export type {
  Step,
  Assumption,
  PlanDraft,
  Plan,
  RetryPolicy,
  ReplanRecord,
  Fact,
  FactLabel,
  StepRun,
  StepStatus,
  Outcome,
  FailureClass,
  Action,
  RunStatus,
  ResumeValue,
  InterruptPayload,
  SideEffectRecord,
  Budget,
  ModelTier,
} from "./plan/schema.js";
export type { PlanIssue, PlanIssueCode } from "./plan/validate.js";
export type { RuleId } from "./policy/rules.js";
export type { Decision } from "./policy/decision.js";

export { userView } from "./views/user-view.js";
export { operatorView } from "./views/operator-view.js";
export type { OperatorViewOptions } from "./views/operator-view.js";
export { debugView } from "./views/debug-view.js";
export { decisionLine } from "./views/decision-line.js";
export { planMermaid, planDiffMermaid } from "./views/mermaid.js";
export { planMetrics } from "./views/metrics.js";
export type { PlanMetrics } from "./views/metrics.js";
export { htmlReport } from "./views/report.js";
export type { ReportOptions } from "./views/report.js";
export { planDiff } from "./plan/diff.js";
export type { PlanDiff } from "./plan/diff.js";
export { planAtVersion, runsAtVersion } from "./plan/history.js";
export type { PlanVersionEntry } from "./plan/history.js";

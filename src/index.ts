// The public API, by name. Nothing internal is exported by accident.
export { createPlanManager, CompiledPlanManager, PlanManagerGraph } from "./graph/create-plan-manager.js";
export type { PlanManagerOptions, Clock, FallbackClassifier } from "./runtime/options.js";
export { PlanManagerState, PlanManagerInput, PlanManagerOutput } from "./runtime/state.js";
export type { PlanManagerStateType, PlanManagerUpdate, ReplanGuards, UsageEntry, PendingHuman } from "./runtime/state.js";
export { staticPlanner } from "./planners/static-planner.js";
export type { StaticPlannerOptions } from "./planners/static-planner.js";
export type { Planner, PlanRequest, ReplanRequest, ToolInfo } from "./contracts/planner.js";
export { TransientError, PermanentError, AssumptionBrokenError, PlanManagerError, isPlanManagerError } from "./errors.js";
export type { PlanManagerErrorCode } from "./errors.js";
export {
  StepSchema,
  AssumptionSchema,
  PlanDraftSchema,
  PlanSchema,
  RetryPolicySchema,
  DecisionSchema,
  ReplanRecordSchema,
  FactSchema,
  StepRunSchema,
  OutcomeSchema,
  ResumeValueSchema,
  LIMITS,
} from "./plan/schema.js";
export type {
  Step,
  Assumption,
  PlanDraft,
  Plan,
  RetryPolicy,
  Decision,
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
} from "./plan/schema.js";
export { validatePlan, formatIssues } from "./plan/validate.js";
export type { PlanIssue, PlanIssueCode, PlanValidation } from "./plan/validate.js";
export { planDiff } from "./plan/diff.js";
export type { PlanDiff } from "./plan/diff.js";
export { planAtVersion } from "./plan/history.js";
export type { PlanVersionEntry } from "./plan/history.js";
export { classify } from "./policy/classify.js";
export type { ClassifyInput, ReplanStanding, Verdict } from "./policy/classify.js";
export { EVIDENCE_RULES, classifyEvidence } from "./policy/evidence-rules.js";
export type { Deviation, DeviationKind } from "./policy/deviation.js";
export { backoffDelay } from "./policy/backoff.js";
export { resolvePolicy, DEFAULT_RETRY } from "./policy/options.js";
export type { PolicyOptions, ResolvedPolicy } from "./policy/options.js";
export { evaluate as evaluateExpression, compileExpression } from "./expr/cel.js";
export type { PlanEvent } from "./runtime/events.js";
export { userView } from "./views/user-view.js";
export { operatorView } from "./views/operator-view.js";
export type { OperatorViewOptions } from "./views/operator-view.js";
export { debugView } from "./views/debug-view.js";
export { planMermaid, planDiffMermaid } from "./views/mermaid.js";
export { planMetrics } from "./views/metrics.js";
export type { PlanMetrics } from "./views/metrics.js";
export { llmPlanner } from "./planners/llm-planner.js";
export type { LlmPlannerOptions } from "./planners/llm-planner.js";
export { llmClassifier } from "./planners/llm-classifier.js";
export type { LlmClassifierOptions } from "./planners/llm-classifier.js";
export { LlmPlanDraftSchema, toPlanDraft } from "./planners/llm-schema.js";
export type { PriceTable, ModelCallSettings } from "./planners/model-call.js";
export { PLANNER_SYSTEM_PROMPT } from "./planners/prompts.js";
export { htmlReport } from "./views/report.js";
export type { ReportOptions } from "./views/report.js";
export { resumeRun } from "./graph/resume.js";
export { decisionLine } from "./views/decision-line.js";
export { requestScopeChange } from "./graph/scope-change.js";

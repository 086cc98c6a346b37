/**
 * `langgraph-replan/policy`: the pure core, for users who want to test their plans and rules
 * without a graph — the classifier and its rule tables, the plan validator and schemas, the
 * CEL evaluator, retry backoff and policy resolution.
 */
export { classify } from "./classify.js";
export type { ClassifyInput, ReplanStanding, Verdict } from "./classify.js";
export { RULES, RULE_IDS, STAGES, isRuleId, rulesOf, actionsOf, disagreement } from "./rules.js";
export { decide } from "./decide.js";
export type { DecisionInput } from "./decide.js";
export { DecisionSchema } from "./decision.js";
export type { Decision } from "./decision.js";
export type { Rule, RuleId, RuleIdOf, RuleSpec, Stage } from "./rules.js";
export { EVIDENCE_RULES, classifyEvidence } from "./evidence-rules.js";
export type { EvidenceRule } from "./evidence-rules.js";
export { DeviationSchema } from "./deviation.js";
export type { Deviation, DeviationDraft, DeviationKind, DeviationOf } from "./deviation.js";
export { backoffDelay } from "./backoff.js";
export { resolvePolicy, DEFAULT_RETRY, DEFAULT_MEMORY_NAMESPACE } from "./options.js";
export {
  memoryKey,
  templateKey,
  isRetired,
  MemoryEntrySchema,
  outcomesNamespace,
  outcomeKey,
  tally,
} from "./replan-memory.js";
export type { MemoryEntry, Score } from "./replan-memory.js";
export { capabilityGuard, capabilityBaseline } from "./capability.js";
export type {
  CapabilityFinding,
  CapabilityBaseline,
  CapabilityInput,
  CapabilityHit,
  ReplanTools,
} from "./capability.js";
export { mayStart, lowerLimit, raiseLimit, isRateLimit, nextQueued } from "./dispatch.js";
export type { StartContext, StartVerdict, RunningCall, LimitChange, LimitUpdate } from "./dispatch.js";
export type { PolicyOptions, ResolvedPolicy } from "./options.js";
export { validatePlan, formatIssues } from "../plan/validate.js";
export type { PlanIssue, PlanIssueCode, PlanValidation } from "../plan/validate.js";
export {
  StepSchema,
  AssumptionSchema,
  PlanDraftSchema,
  PlanSchema,
  RetryPolicySchema,
  ReplanRecordSchema,
  FactSchema,
  StepRunSchema,
  OutcomeSchema,
  ResumeValueSchema,
  LIMITS,
} from "../plan/schema.js";
export { evaluate as evaluateExpression, compileExpression } from "../expr/cel.js";

/**
 * `langgraph-replan/policy`: the pure core, for users who want to test their plans and rules
 * without a graph — the classifier and its rule tables, the plan validator and schemas, the
 * CEL evaluator, retry backoff and policy resolution.
 *
 * @module langgraph-replan/policy
 */
export { classify } from "./ladder/classify.js";
export type { ClassifyInput, ReplanStanding, Verdict } from "./ladder/classify.js";
export { RULES, RULE_IDS, STAGES, isRuleId, rulesOf, actionsOf, disagreement } from "./ladder/rules.js";
export { decide } from "./ladder/decide.js";
export type { DecisionInput } from "./ladder/decide.js";
export { DecisionSchema } from "./ladder/decision.js";
export type { Decision } from "./ladder/decision.js";
export type { Rule, RuleId, RuleIdOf, RuleSpec, Stage } from "./ladder/rules.js";
export { EVIDENCE_RULES, classifyEvidence } from "./ladder/evidence-rules.js";
export type { EvidenceRule } from "./ladder/evidence-rules.js";
export { DeviationSchema } from "./ladder/deviation.js";
export type { Deviation, DeviationDraft, DeviationKind, DeviationOf } from "./ladder/deviation.js";
export { backoffDelay, DEFAULT_RETRY } from "../plan/retry.js";
export { resolvePolicy, DEFAULT_MEMORY_NAMESPACE } from "./options.js";
export {
  memoryKey,
  templateKey,
  isRetired,
  MemoryEntrySchema,
  outcomesNamespace,
  outcomeKey,
  tally,
} from "./memory/memory.js";
export type { MemoryEntry, Score } from "./memory/memory.js";
export { capabilityGuard, capabilityBaseline } from "./capability/guard.js";
export type { CapabilityInput, CapabilityHit, CapabilityProposal, CapabilityRules } from "./capability/guard.js";
export type { CapabilityFinding, CapabilityBaseline } from "./capability/types.js";
export {
  mayStart,
  readinessOf,
  START_RULES,
  lowerLimit,
  raiseLimit,
  isRateLimit,
  nextQueued,
} from "./attempt/may-start.js";
export type {
  StartContext,
  StartStanding,
  DispatchStanding,
  StartRule,
  StartRefusal,
  StartVerdict,
  RunningCall,
  LimitChange,
  LimitUpdate,
} from "./attempt/may-start.js";
export type { PolicyOptions, ReplanTools, ResolvedPolicy } from "./options.js";
export { validatePlan, formatIssues } from "../plan/validate.js";
export type { PlanIssue, PlanIssueCode, PlanValidation } from "../plan/validate.js";
export { ReplanRecordSchema } from "../plan/schema/decision.js";
export { ResumeValueSchema } from "../plan/schema/interrupts.js";
export { OutcomeSchema } from "../plan/schema/outcome.js";
export { AssumptionSchema, PlanDraftSchema, PlanSchema } from "../plan/schema/plan.js";
export { LIMITS } from "../plan/schema/primitives.js";
export { FactSchema, StepRunSchema } from "../plan/schema/run.js";
export { StepSchema, RetryPolicySchema } from "../plan/schema/step.js";
export { evaluate as evaluateExpression, compileExpression } from "../expr/cel.js";

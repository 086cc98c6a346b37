/**
 * Plans, steps, decisions and records as zod schemas: the single source of truth for their
 * shape (docs/architecture.md "State and channels"). Plans come from LLMs, so every field is bounded (see `LIMITS`).
 */
import { z } from "zod";
import type { PlanDiff } from "./diff.js";

/** Size limits enforced on every plan draft. Documented in README ("Limits"). */
export const LIMITS = {
  maxSteps: 200,
  maxAssumptions: 50,
  maxIdLength: 64,
  maxTextLength: 2_000,
  maxExpressionLength: 1_000,
  maxListLength: 50,
  /** Serialised JSON size of one step's `args` or one fact value. */
  maxJsonBytes: 64_000,
  /** Nesting depth of one step's `args` or one tool output. */
  maxJsonDepth: 32,
  /** Characters of a stored error message (longer ones are cut, saying so); an error's `evidence` is cut to `maxJsonBytes`. */
  maxErrorMessageLength: 4_000,
  /** Characters of a run's goal: it goes into every planner prompt and the outcome's summary. */
  maxGoalLength: 16_000,
} as const;

/** Names that would collide with Object.prototype when used as keys. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set([
  "__proto__",
  "prototype",
  "constructor",
  ...Object.getOwnPropertyNames(Object.prototype),
]);

const ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]*$/;
const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const IdSchema = z
  .string()
  .min(1)
  .max(LIMITS.maxIdLength)
  .regex(ID_PATTERN, "must start with a letter and contain only letters, digits, '_' and '-'")
  .refine((id) => !RESERVED_KEYS.has(id), "is a reserved name (collides with Object.prototype)");

/** A fact key: usable as `facts.<key>` in CEL. */
export const FactKeySchema = z
  .string()
  .min(1)
  .max(LIMITS.maxIdLength)
  .regex(KEY_PATTERN, "must be an identifier (letters, digits, '_'; not starting with a digit)")
  .refine((key) => !RESERVED_KEYS.has(key), "is a reserved name (collides with Object.prototype)");

const TextSchema = z.string().max(LIMITS.maxTextLength);
export const ExpressionSchema = z.string().min(1).max(LIMITS.maxExpressionLength);
const list = <T extends z.ZodType>(item: T) => z.array(item).max(LIMITS.maxListLength);

export const JsonObjectSchema = z.record(z.string(), z.unknown());

export const BackoffSchema = z.enum(["none", "fixed", "exponential"]);

/** Retry policy. `maxAttempts` counts attempts, not retries; `"none"` retries at once. */
export const RetryPolicySchema = z.object({
  maxAttempts: z.number().int().min(1).max(100),
  backoff: BackoffSchema,
  initialDelayMs: z.number().int().min(0).max(3_600_000),
  maxDelayMs: z.number().int().min(0).max(3_600_000),
});
export type RetryPolicy = z.infer<typeof RetryPolicySchema>;

export const FallbackSchema = z.object({
  tool: z.string().min(1).max(LIMITS.maxIdLength),
  args: JsonObjectSchema.optional(),
  /** What one fallback attempt costs, charged instead of the step's `cost`. Default: the step's `cost`. */
  cost: z.number().min(0).finite().optional(),
});

export const HumanTaskSchema = z.object({
  prompt: TextSchema.min(1),
  timeoutMs: z.number().int().positive().optional(),
});

/*
 * Steps done by models and agents (docs/decisions/0021-agent-steps.md): the agent a step names,
 * the model tier it runs on, and the validation tool that checks its answer.
 */
export const ModelTierSchema = z.enum(["fast", "default", "strong"]);
export type ModelTier = z.infer<typeof ModelTierSchema>;

/** A tool run on an agent step's answer (e.g. the tests): it fails by throwing or by an unmet `successSignal`. */
export const ValidateSchema = z.object({
  tool: z.string().min(1).max(LIMITS.maxIdLength),
  args: JsonObjectSchema.optional(),
  /** CEL over `output` (the validation tool's return) and `facts`. Default: it passes unless it throws. */
  successSignal: ExpressionSchema.optional(),
});

const AgentStepFields = {
  /** The agent (a name in `createPlanManager({ agents })`) that does the step, instead of a tool. */
  agent: z.string().min(1).max(LIMITS.maxIdLength).optional(),
  /** The model tier of an agent step answered by a chat model (`models[tier]`). */
  tier: ModelTierSchema.optional(),
  /** How hard the step is, 1 (trivial) to 5 (hard), as the planner estimated it. */
  complexity: z.number().int().min(1).max(5).optional(),
  validate: ValidateSchema.optional(),
};

export const StepSchema = z.object({
  id: IdSchema,
  goal: TextSchema.min(1),
  tool: z.string().min(1).max(LIMITS.maxIdLength).optional(),
  args: JsonObjectSchema.optional(),
  /** Fact keys passed to the tool as arguments of the same name (trusted facts only). */
  inputs: list(FactKeySchema).optional(),
  /** Output fields recorded as facts. */
  produces: list(FactKeySchema).optional(),
  dependsOn: list(z.string().max(LIMITS.maxIdLength)).optional(),
  /** Ids of the assumptions this step rests on. */
  assumptions: list(z.string().max(LIMITS.maxIdLength)).optional(),
  /** CEL over `facts`; all must hold before the tool runs. */
  preconditions: list(ExpressionSchema).optional(),
  /** CEL over `output` and `facts`: what "done" means. */
  successSignal: ExpressionSchema.optional(),
  /** CEL over `facts`; false → the step is skipped. */
  when: ExpressionSchema.optional(),
  retry: RetryPolicySchema.partial().optional(),
  retryOnUnmet: z.boolean().optional(),
  fallback: FallbackSchema.optional(),
  sideEffects: list(TextSchema).optional(),
  idempotent: z.boolean().optional(),
  /**
   * Names the operation when the same call (tool and arguments) is really meant more than once: it
   * enters the idempotency key, so two steps with different labels are two operations. Default: none.
   */
  operation: z.string().min(1).max(LIMITS.maxIdLength).optional(),
  timeoutMs: z.number().int().positive().max(86_400_000).optional(),
  /** How long the step should take: still running at `policy.stallFactor` × this, it is reported as stalled. */
  estimateMs: z.number().int().positive().max(86_400_000).optional(),
  cost: z.number().min(0).finite().optional(),
  optional: z.boolean().optional(),
  human: HumanTaskSchema.optional(),
  ...AgentStepFields,
});
export type Step = z.infer<typeof StepSchema>;

export const AssumptionSchema = z.object({
  id: IdSchema,
  statement: TextSchema.min(1),
  /** CEL over `facts`; false → the assumption is falsified. */
  check: ExpressionSchema.optional(),
});
export type Assumption = z.infer<typeof AssumptionSchema>;

export const PlanDraftSchema = z.object({
  steps: z.array(StepSchema).min(1).max(LIMITS.maxSteps),
  assumptions: z.array(AssumptionSchema).max(LIMITS.maxAssumptions).optional(),
  rationale: TextSchema.optional(),
  /**
   * `false`: the draft covers only the next steps of a longer goal (a rolling horizon); when they
   * have all finished, the manager asks `Planner.extend` for more. Default true.
   */
  complete: z.boolean().optional(),
});
export type PlanDraft = z.infer<typeof PlanDraftSchema>;

export const PlanSchema = z.object({
  version: z.number().int().min(1),
  steps: z.array(StepSchema),
  assumptions: z.array(AssumptionSchema),
  rationale: TextSchema.optional(),
  /** Stored only as `false`: more steps will follow (`Planner.extend`) once these have finished. */
  complete: z.boolean().optional(),
});
export type Plan = z.infer<typeof PlanSchema>;

export const StepStatusSchema = z.enum(["pending", "running", "succeeded", "failed", "skipped", "invalidated"]);
export type StepStatus = z.infer<typeof StepStatusSchema>;

/** What a failed attempt left behind, normalised so the classifier can read it. */
export const ErrorInfoSchema = z.object({
  name: z.string(),
  message: z.string(),
  status: z.number().optional(),
  code: z.string().optional(),
  retryAfterMs: z.number().optional(),
  assumptionId: z.string().optional(),
  evidence: z.unknown().optional(),
});
export type ErrorInfo = z.infer<typeof ErrorInfoSchema>;

export const SkipReasonSchema = z.enum(["when", "optional_failed", "dependency_skipped", "human", "replaced"]);
export type SkipReason = z.infer<typeof SkipReasonSchema>;

export const StepRunSchema = z.object({
  status: StepStatusSchema,
  attempts: z.number().int().min(0),
  usedFallback: z.boolean().optional(),
  output: z.unknown().optional(),
  error: ErrorInfoSchema.optional(),
  startedAt: z.string().optional(),
  endedAt: z.string().optional(),
  cost: z.number().optional(),
  /** The attempt ran past `policy.stallFactor` × the step's `estimateMs` (reported while it ran). */
  stalled: z.boolean().optional(),
  /** Why a skipped step was skipped. */
  skipReason: SkipReasonSchema.optional(),
  /** Attempts already used when a person asked for a fresh round of retries. */
  retryBase: z.number().int().optional(),
  /** Backoff to wait before the next attempt, set by the classifier's retry decision. */
  nextDelayMs: z.number().optional(),
  /** Plan version in which this step entered the plan (kept for checkpoints written by 0.1; no longer read). */
  sinceVersion: z.number().int().optional(),
  /**
   * Set when no tool did the step's work: a person supplied its facts at an escalation
   * (`provide`). Such a step counts as done, never as a tool success; its side effects did not happen.
   */
  doneBy: z.literal("person").optional(),
  /**
   * Idempotency key of a changed side-effecting operation a person allowed to run although the
   * step had already committed another one (escalation rule `guard.committed-side-effect`).
   */
  approvedKey: z.string().optional(),
  /** The tier an agent step moved up to after a failure (rule `route.escalate-tier`); its next attempts run there. */
  tier: ModelTierSchema.optional(),
});
export type StepRun = z.infer<typeof StepRunSchema>;

export const FactLabelSchema = z.enum(["trusted", "suspect", "invalidated"]);
export type FactLabel = z.infer<typeof FactLabelSchema>;

export const FactSchema = z.object({
  value: z.unknown(),
  label: FactLabelSchema,
  producedBy: z.string(),
  planVersion: z.number().int(),
  assumptions: z.array(z.string()),
  derivedFrom: z.array(z.string()),
});
export type Fact = z.infer<typeof FactSchema>;

export const FailureClassSchema = z.enum([
  "transient",
  "deterministic",
  "precondition_failed",
  "success_signal_unmet",
  "assumption_broken",
  "scope_changed",
  "budget_exhausted",
  "unknown",
  /** No failure: a person's choice at a plan review or a human step (decisions with `by: "person"`). */
  "none",
]);
export type FailureClass = z.infer<typeof FailureClassSchema>;

export const ActionSchema = z.enum([
  "retry",
  "fallback",
  "replan_local",
  "replan_global",
  "skip",
  "escalate",
  "abort",
  /** A person supplied what the step was to produce (`provide`). Never chosen by the rules. */
  "provide",
  /** A person approved the plan at its review. Never chosen by the rules. */
  "approve",
  /** A person did a human step (`complete`). Never chosen by the rules. */
  "complete",
  /** A step's operation had committed already: its output was reused, the tool not called (`effect.reused`). */
  "reuse",
]);
export type Action = z.infer<typeof ActionSchema>;

/**
 * A decision's shape, every field but the rule's type: `rule` is an id of the rule table, which
 * lives in the policy layer above this one. `DecisionSchema` and `Decision` (policy/decision.ts)
 * add it; use those.
 */
export const DecisionShapeSchema = z.object({
  seq: z.number().int(),
  stepId: z.string().optional(),
  attempt: z.number().int(),
  failureClass: FailureClassSchema,
  action: ActionSchema,
  rule: z.string(),
  reason: z.string(),
  planVersion: z.number().int(),
  at: z.string(),
  /** Backoff chosen for a retry. */
  delayMs: z.number().optional(),
  /** The assumption a replan decision names. */
  brokenAssumption: z.string().optional(),
  /** The evidence rule that named the failure class (`transient.http-5xx`, …); see `policy/evidence-rules.ts`. */
  evidence: z.string().optional(),
  /** Who decided: absent for the rules, `"llm"` for the LLM classifier, `"person"` for an answer at an interrupt. */
  by: z.enum(["llm", "person"]).optional(),
});

export const ReplanRecordSchema = z.object({
  trigger: z.string(),
  brokenAssumption: z.string().optional(),
  /** `extend`: a rolling horizon's next steps appended (trigger "horizon"); not a repair. */
  scope: z.enum(["local", "global", "extend"]),
  fromVersion: z.number().int(),
  toVersion: z.number().int(),
  invalidatedSteps: z.array(z.string()),
  preservedSteps: z.array(z.string()),
  newSteps: z.array(z.string()),
  facts: z.object({
    trusted: z.array(z.string()),
    suspect: z.array(z.string()),
    invalidated: z.array(z.string()),
  }),
  /** Steps the replan kept by id but changed (tool, arguments, inputs, dependencies, …): they run again. */
  changedSteps: z.array(z.string()).optional(),
  /** Completed steps the replan re-runs (backtracking) to re-validate their facts. */
  revalidatedSteps: z.array(z.string()).optional(),
  /** Other assumptions that may share the blame (recorded as suspect). */
  suspectAssumptions: z.array(z.string()).optional(),
  at: z.string().optional(),
  /** Replan memory (§7.4): where the replacement came from, when memory is on. */
  source: z.enum(["planner", "memory"]).optional(),
  /** The memory entry this replan was filed under (planner) or taken from (memory). */
  memoryKey: z.string().optional(),
  /** The revision of the entry taken from memory: its outcome scores that revision only, not a later replacement. */
  memoryRevision: z.string().optional(),
  /** The replacement branch: saved to memory (or scored) when all of these succeed. */
  memorySteps: z.array(z.string()).optional(),
  /**
   * Steps of the answer that the planner handed back under the id of a step they replace, with that
   * step's position among the affected steps: where the answer is reused, they keep the reusing
   * thread's id for that position.
   */
  memoryKept: z.record(z.string(), z.number().int().min(0)).optional(),
});
export type ReplanRecord = z.infer<typeof ReplanRecordSchema>;

export const SideEffectRecordSchema = z.object({
  stepId: z.string(),
  idempotencyKey: z.string(),
  at: z.string(),
  /** The tool's output when it committed: a later step with the same operation reuses it instead of calling again. */
  output: z.unknown().optional(),
});
export type SideEffectRecord = z.infer<typeof SideEffectRecordSchema>;

export const BudgetSchema = z.object({
  spent: z.number(),
  replanSpent: z.number(),
  maxCost: z.number().optional(),
  maxReplanCost: z.number().optional(),
});
export type Budget = z.infer<typeof BudgetSchema>;

export const RunStatusSchema = z.enum([
  "planning",
  "awaiting_review",
  "running",
  "awaiting_human",
  "completed",
  /** Ended with required work undone (a person skipped a non-optional step): see `outcome.missing`. */
  "partial",
  "failed",
  "aborted",
  /** An operator's stop, taken at a step boundary: resumable (`resumeStopped`), unlike `failed` and `aborted`. */
  "stopped",
]);
export type RunStatus = z.infer<typeof RunStatusSchema>;

export const OutcomeSchema = z.object({
  summary: z.string(),
  failedStep: z.string().optional(),
  failureReason: z.string().optional(),
  message: z.string().optional(),
  recoverable: z.boolean().optional(),
  /** Steps skipped or given up on, and what they would have produced. */
  missing: z
    .array(z.object({ stepId: z.string(), goal: z.string(), facts: z.array(z.string()), reason: z.string() }))
    .optional(),
  /** Notes on degraded results (e.g. an optional step that failed, a fallback source). */
  uncertainty: z.array(z.string()).optional(),
  /** Validator issues when the plan was rejected. */
  issues: z.array(z.unknown()).optional(),
});
export type Outcome = z.infer<typeof OutcomeSchema>;

export const InterruptKindSchema = z.enum(["plan_review", "escalation", "human_step"]);

/** A step as a person reviewing a plan sees it. */
export interface ReviewedStep {
  id: string;
  goal: string;
  tool: string | null;
  sideEffects?: string[];
}

/**
 * What a plan review shows: the first plan, a new version (`reviewReplans`), or a proposal the
 * capability guard held.
 */
export interface PlanReviewContext {
  goal: string;
  steps: ReviewedStep[];
  /** The first plan's assumptions. */
  assumptions?: Assumption[];
  /** The replan (or extension) that made the version under review. */
  replan?: ReplanRecord;
  /** A held proposal: the guard's rule, the trigger's class, the tools it adds, what it found, the diff. */
  rule?: string;
  failureClass?: FailureClass;
  tools?: string;
  capabilities?: { kind: string; stepId: string; tool: string; sideEffects: string[]; detail: string }[];
  diff?: PlanDiff;
}

/** What an escalation shows: the rule and class, the step and its last attempt, what was tried. */
export interface EscalationContext {
  goal: string;
  rule: string;
  failureClass?: FailureClass;
  step?: { id: string; goal: string; tool?: string | undefined; produces?: string[] };
  attempts?: number;
  error?: unknown;
  output?: unknown;
  tried?: string[];
  /** A changed side effect: the operation committed before and the one proposed now. */
  sideEffect?: { committedKey: string; proposedKey: string };
  /** At a rolling horizon: how many extensions the run made. */
  horizon?: { extensions: number };
  /** A human step answered after its deadline: the answer that arrived late. */
  lateOutput?: unknown;
}

/** What a human step shows: its step, the facts it reads, and its deadline (with `timeoutMs`). */
export interface HumanStepContext {
  goal: string;
  step: { id: string; goal: string };
  facts: Record<string, unknown>;
  deadline?: string;
}

/** What every interrupt payload carries, whatever its kind. */
export interface InterruptFields {
  reason: string;
  stepId?: string;
  planVersion: number;
  options: ResumeAction[];
  /** Set when the previous answer was rejected: what was wrong with it. */
  error?: string;
}

/** What a person sees at an interrupt (docs/architecture.md "State and channels"): `context` is typed per `kind`. */
export type InterruptPayload =
  | (InterruptFields & { kind: "plan_review"; context: PlanReviewContext })
  | (InterruptFields & { kind: "escalation"; context: EscalationContext })
  | (InterruptFields & { kind: "human_step"; context: HumanStepContext });

export const ResumeValueSchema = z.discriminatedUnion("action", [
  z.object({ action: z.literal("approve") }),
  z.object({ action: z.literal("retry") }),
  z.object({ action: z.literal("skip") }),
  z.object({ action: z.literal("abort"), reason: z.string().max(LIMITS.maxTextLength).optional() }),
  z.object({ action: z.literal("replan"), constraint: z.string().min(1).max(LIMITS.maxTextLength) }),
  z.object({ action: z.literal("provide"), facts: z.record(FactKeySchema, z.unknown()) }),
  z.object({ action: z.literal("change_scope"), request: z.string().min(1).max(LIMITS.maxTextLength) }),
  z.object({ action: z.literal("complete"), output: z.unknown() }),
  /**
   * Discards a replan the capability guard held (docs/architecture.md "Untrusted facts"); the original trigger
   * escalates.
   */
  z.object({ action: z.literal("reject"), reason: z.string().max(LIMITS.maxTextLength).optional() }),
]);
export type ResumeValue = z.infer<typeof ResumeValueSchema>;
export type ResumeAction = ResumeValue["action"];

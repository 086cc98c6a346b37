/**
 * What a run records as it goes: each step's status and attempts, facts with their trust labels,
 * committed side effects and the budget spent.
 */
import { z } from "zod";
import { ModelTierSchema, RetryPolicySchema } from "./step.js";

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

/**
 * A person's approval of one more call under a key (docs/decisions/0057-one-approval-record.md): the key
 * the call goes out under, and for a call in doubt the journal attempt of the intent the person was asked
 * about. The approved call is journaled above `attempt`, so a cut of that call is asked about again, even
 * on a fork whose own attempt count restarted.
 */
export const ApprovalSchema = z.object({
  key: z.string(),
  attempt: z.number().int().min(0).optional(),
});
export type Approval = z.infer<typeof ApprovalSchema>;

/** An undo's approval: a person's retry numbers the new round above `attempt`; `key` only when its last call was in doubt. */
export const UndoApprovalSchema = z.object({
  key: z.string().optional(),
  attempt: z.number().int().min(0),
});
export type UndoApproval = z.infer<typeof UndoApprovalSchema>;

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
   * A person's approval of one more call under a key: of a call in doubt (`effect.in-doubt`), or of a
   * changed side-effecting operation although the step had committed another (`guard.committed-side-effect`).
   * Spent by the next call.
   */
  approval: ApprovalSchema.optional(),
  /** Written by checkpoints before the approval was one record: read as `approval.key` (policy/attempt/approval.ts). */
  approvedKey: z.string().optional(),
  /** Written by checkpoints before the approval was one record: read as `approval.attempt`. */
  approvedAttempt: z.number().int().min(0).optional(),
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
  /** When the fact was observed, on the run's clock (ISO). Absent in checkpoints written before 0.2: never stale. */
  observedAt: z.string().optional(),
});
export type Fact = z.infer<typeof FactSchema>;

/**
 * One call of an assumption's watcher (docs/decisions/0041-evidence-freshness-and-drift.md): what it saw and what
 * that said. `held` is false when the check found the assumption drifted; a call that threw has `error` and no verdict.
 */
export const WatchRecordSchema = z.object({
  assumptionId: z.string(),
  /** The step about to start that asked for the watch. */
  stepId: z.string(),
  tool: z.string(),
  at: z.string(),
  planVersion: z.number().int(),
  output: z.unknown().optional(),
  held: z.boolean().optional(),
  error: ErrorInfoSchema.optional(),
  /** The evidence rule that classed a call that threw (`transient.error`, …): recorded, never a falsification. */
  evidence: z.string().optional(),
});
export type WatchRecord = z.infer<typeof WatchRecordSchema>;

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
  /**
   * Attempts per step under the run's `policy.defaultRetry` (a step's own `retry` overrides it), recorded when it
   * is not the library's 3, so the views show attempt n/max without the policy.
   */
  maxAttempts: z.number().int().min(1).optional(),
});
export type Budget = z.infer<typeof BudgetSchema>;

/** Where an abandoned effect's compensation stands: `waived` when a person chose to keep the effect. */
export const CompensationStatusSchema = z.enum(["pending", "done", "failed", "waived"]);
export type CompensationStatus = z.infer<typeof CompensationStatusSchema>;

/**
 * The compensation of one abandoned side effect (docs/decisions/0039-compensation.md): what to
 * call is resolved when the effect is abandoned, since the step that committed it may leave the plan.
 */
export const CompensationRecordSchema = z.object({
  stepId: z.string(),
  /** The committed effect's key. */
  idempotencyKey: z.string(),
  /** `<idempotencyKey>:compensate`, passed to the compensation tool as its idempotency key. */
  compensationKey: z.string(),
  status: CompensationStatusSchema,
  at: z.string(),
  tool: z.string().optional(),
  args: z.record(z.string(), z.unknown()).optional(),
  /** The step's retry policy fields, applied over the policy's default. */
  retry: RetryPolicySchema.partial().optional(),
  attempts: z.number().int().min(0).optional(),
  error: ErrorInfoSchema.optional(),
  /** The undo's last call was cut before it answered and nothing settled it (docs/decisions/0038-effect-journal.md). */
  inDoubt: z.boolean().optional(),
  /**
   * A person's `retry` of a failed undo: the new round's calls are journaled above `attempt`, the last
   * call made (docs/decisions/0039-compensation.md); with `key` when that call was in doubt, so exactly
   * one more call goes out under it, and a cut of that call is asked about again.
   */
  approval: UndoApprovalSchema.optional(),
  /** Written by checkpoints before the approval was one record: read as `approval.key` (policy/attempt/approval.ts). */
  approvedKey: z.string().optional(),
  /** Written by checkpoints before the approval was one record: read as `approval.attempt`. */
  approvedAttempt: z.number().int().min(0).optional(),
});
export type CompensationRecord = z.infer<typeof CompensationRecordSchema>;

/**
 * What a person sees at an interrupt and what they may answer (docs/architecture.md "State and
 * channels"): the payload, typed per `kind`, and the resume value.
 */
import { z } from "zod";
import type { FailureClass, PlanDiff, ReplanRecord } from "./decision.js";
import type { Assumption } from "./plan.js";
import type { QualityFinding } from "./quality.js";
import { FactKeySchema, LIMITS } from "./primitives.js";

export const InterruptKindSchema = z.enum(["plan_review", "escalation", "human_step", "external_step"]);

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
  /** The plan quality gate's findings about the version (docs/decisions/0040-plan-quality-gate.md). */
  findings?: QualityFinding[];
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
  /** A call whose outcome is unknown: its operation's key and the tool called under it. */
  inDoubt?: { key: string; tool: string };
  /** At a rolling horizon: how many extensions the run made. */
  horizon?: { extensions: number };
  /** A human step answered after its deadline: the answer that arrived late. */
  lateOutput?: unknown;
  /** Compensation (docs/decisions/0039-compensation.md): the effects nothing undoes, or the undo that failed. */
  compensation?: CompensationContext;
}

/** What a compensation question is about. */
export interface CompensationContext {
  /** A replan would abandon these committed effects, whose steps have no `compensate` (approve keeps them). */
  missing?: { stepId: string; idempotencyKey: string }[];
  /** A compensation that failed when its retries ran out (retry runs it again; skip leaves the effect standing). */
  failed?: {
    stepId: string;
    idempotencyKey: string;
    compensationKey: string;
    tool?: string;
    error?: unknown;
    /** The undo's outcome is unknown (its call was cut): retry calls it once more under the same key. */
    inDoubt?: boolean;
  };
  /** Set when the run was ending: the status it ends with once the question is answered. */
  endStatus?: "aborted" | "failed";
}

/** What a human step shows: its step, the facts it reads, and its deadline (with `timeoutMs`). */
export interface HumanStepContext {
  goal: string;
  step: { id: string; goal: string };
  facts: Record<string, unknown>;
  deadline?: string;
}

/**
 * What an external step shows the calling agent (docs/decisions/0042-external-steps.md): the step's
 * goal and instructions, its trusted inputs (resolved), what it must produce, its success signal, the
 * attempt this offer is, why the last attempt was sent back, and, for a step with side effects, the
 * idempotency key the agent must do the work under.
 */
export interface ExternalStepContext {
  goal: string;
  step: { id: string; goal: string; instructions: string };
  inputs: Record<string, unknown>;
  produces: string[];
  successSignal?: string;
  /** The attempt this offer is (1 for the first). */
  attempt: number;
  /** Why the previous attempt was sent back (its error, or the unmet success signal). */
  previousError?: string;
  /** Wait this long before doing the work again (the retry policy's backoff, or the error's `retry_after_ms`). */
  retryAfterMs?: number;
  /** The side effect's idempotency key (`effectKey`): do the work once per key. */
  idempotencyKey?: string;
  sideEffects?: string[];
  /**
   * Every external step offered now, in plan order, this one first: each may be submitted, in any
   * order, and is judged on its own ladder. Absent from a question written before several were offered.
   */
  offered?: ExternalOffer[];
}

/** One external step as offered to the calling agent: what `ExternalStepContext` says of its own step. */
export type ExternalOffer = Omit<ExternalStepContext, "goal" | "offered">;

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
  | (InterruptFields & { kind: "human_step"; context: HumanStepContext })
  | (InterruptFields & { kind: "external_step"; context: ExternalStepContext });

/** How an external step failed, as the calling agent reports it (no `class`: classified from the message). */
export const SubmittedErrorSchema = z.object({
  message: z.string().min(1).max(LIMITS.maxTextLength),
  class: z.enum(["transient", "permanent", "assumption_broken"]).optional(),
  /** With `assumption_broken`: the id of the assumption the agent found false. */
  assumption: z.string().min(1).max(LIMITS.maxIdLength).optional(),
  retry_after_ms: z.number().int().min(0).max(3_600_000).optional(),
});
/** An error an external step's agent reports instead of an output. */
export type SubmittedError = z.infer<typeof SubmittedErrorSchema>;

/** The schema of an answer to an interrupt (`{ action, … }`). */
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
  /** A call whose outcome was unknown took effect; `output` is what it returned (checked as the step's output). */
  z.object({ action: z.literal("happened"), output: z.unknown() }),
  /**
   * The calling agent's result for an external step: its `output`, or the `error` it met (exactly
   * one). The manager judges it like a tool's (docs/decisions/0042-external-steps.md).
   */
  z.object({
    action: z.literal("submit"),
    stepId: z.string().min(1).max(LIMITS.maxIdLength),
    output: z.unknown().optional(),
    error: SubmittedErrorSchema.optional(),
  }),
]);
/**
 * An answer to an interrupt: `approve`, `retry`, `skip`, `provide`, `complete`, `submit`, `replan`,
 * `change_scope`, `abort`, ….
 */
export type ResumeValue = z.infer<typeof ResumeValueSchema>;
export type ResumeAction = ResumeValue["action"];

/**
 * A step of a plan: its tool or agent or person or the calling agent, inputs and outputs, retry policy, fallback and checks.
 */
import { z } from "zod";
import { ExpressionSchema, FactKeySchema, IdSchema, JsonObjectSchema, LIMITS, TextSchema, list } from "./primitives.js";

export const BackoffSchema = z.enum(["none", "fixed", "exponential"]);

/** Retry policy. `maxAttempts` counts attempts, not retries; `"none"` retries at once. */
export const RetryPolicySchema = z.object({
  maxAttempts: z.number().int().min(1).max(100),
  backoff: BackoffSchema,
  initialDelayMs: z.number().int().min(0).max(3_600_000),
  maxDelayMs: z.number().int().min(0).max(3_600_000),
});
/** How often and how fast a step is retried. */
export type RetryPolicy = z.infer<typeof RetryPolicySchema>;

export const FallbackSchema = z.object({
  tool: z.string().min(1).max(LIMITS.maxIdLength),
  args: JsonObjectSchema.optional(),
  /** What one fallback attempt costs, charged instead of the step's `cost`. Default: the step's `cost`. */
  cost: z.number().min(0).finite().optional(),
});

/**
 * A side-effecting step's undo (cancel, refund, delete): run once, under its own key, when a replan
 * or the run's end abandons the committed effect (docs/decisions/0039-compensation.md).
 */
export const CompensateSchema = z.object({
  tool: z.string().min(1).max(LIMITS.maxIdLength),
  args: JsonObjectSchema.optional(),
  /** Fact keys passed to the tool as arguments of the same name, like a step's `inputs`. */
  inputs: list(FactKeySchema).optional(),
});
export type Compensate = z.infer<typeof CompensateSchema>;

/** A freshness bound: whole milliseconds, at least 1, at most 30 days (NaN, Infinity and negatives are refused). */
export const FreshnessMsSchema = z
  .number()
  .int()
  .min(1)
  .max(30 * 86_400_000);

export const HumanTaskSchema = z.object({
  prompt: TextSchema.min(1),
  timeoutMs: z.number().int().positive().optional(),
});

/**
 * A step the calling agent does itself (docs/decisions/0042-external-steps.md): the run pauses with
 * an `external_step` question carrying these instructions, and the agent submits the output or an error.
 */
export const ExternalTaskSchema = z.object({
  instructions: TextSchema.min(1),
});

/*
 * Steps done by models and agents (docs/decisions/0021-agent-steps.md): the agent a step names,
 * the model tier it runs on, and the validation tool that checks its answer.
 */
export const ModelTierSchema = z.enum(["fast", "default", "strong"]);
/** Which of `models` answers a chat-model agent step. */
export type ModelTier = z.infer<typeof ModelTierSchema>;

/** A tool run on an agent step's answer (e.g. the tests): it fails by throwing or by an unmet `successSignal`. */
export const ValidateSchema = z.object({
  tool: z.string().min(1).max(LIMITS.maxIdLength),
  args: JsonObjectSchema.optional(),
  /** CEL over `output` (the validation tool's return) and `facts`. Default: it passes unless it throws. */
  successSignal: ExpressionSchema.optional(),
});

/**
 * A read-only probe that says whether a side-effecting call whose outcome is unknown took effect
 * (docs/decisions/0038-effect-journal.md): a registered tool without side effects, called with
 * `{ ...args, ...inputs }` and the call's `idempotencyKey` in its config; it answers `{ happened, output? }`.
 */
export const VerifySchema = z.object({
  tool: z.string().min(1).max(LIMITS.maxIdLength),
  args: JsonObjectSchema.optional(),
  inputs: list(FactKeySchema).optional(),
});
export type Verify = z.infer<typeof VerifySchema>;

const AgentStepFields = {
  /** The agent (a name in `createPlanManager({ agents })`) that does the step, instead of a tool. */
  agent: z.string().min(1).max(LIMITS.maxIdLength).optional(),
  /** The model tier of an agent step answered by a chat model (`models[tier]`). */
  tier: ModelTierSchema.optional(),
  /** How hard the step is, 1 (trivial) to 5 (hard), as the planner estimated it. */
  complexity: z.number().int().min(1).max(5).optional(),
  validate: ValidateSchema.optional(),
};

/** The schema of a step of a plan. */
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
  /** The tool does an operation once per idempotency key: a call whose outcome is unknown is made again under it. */
  honoursIdempotencyKey: z.boolean().optional(),
  /** How to find out whether a call whose outcome is unknown took effect (a crash, a timeout in the call). */
  verify: VerifySchema.optional(),
  /** The undo of the step's committed side effect, run when a replan or the run's end abandons it. */
  compensate: CompensateSchema.optional(),
  /**
   * How old, in ms, a fact this step reads may be when it starts (docs/decisions/0041-evidence-freshness-and-drift.md):
   * an input observed longer ago is stale for this step, and its producer runs again first. Keys are inputs of the step.
   */
  freshFor: z.record(FactKeySchema, FreshnessMsSchema).optional(),
  /** `freshFor` for every input of the step at once; a key of `freshFor` overrides it. */
  inputsFreshForMs: FreshnessMsSchema.optional(),
  timeoutMs: z.number().int().positive().max(86_400_000).optional(),
  /** How long the step should take: still running at `policy.stallFactor` × this, it is reported as stalled. */
  estimateMs: z.number().int().positive().max(86_400_000).optional(),
  cost: z.number().min(0).finite().optional(),
  optional: z.boolean().optional(),
  human: HumanTaskSchema.optional(),
  /** Done by the calling agent, not by a tool (`plan_next` / `plan_submit`, `resumeRun`'s `submit`). */
  external: ExternalTaskSchema.optional(),
  ...AgentStepFields,
});
/**
 * A step of a plan: done by a tool, an agent, a person or the calling agent (docs/guides/configuration.md
 * lists every field).
 */
export type Step = z.infer<typeof StepSchema>;

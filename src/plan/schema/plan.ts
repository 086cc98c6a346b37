/**
 * A plan draft (what a planner returns) and a plan version (what the manager stores).
 */
import { z } from "zod";
import { ExpressionSchema, FactKeySchema, IdSchema, JsonObjectSchema, LIMITS, TextSchema, list } from "./primitives.js";
import { StepSchema } from "./step.js";

/**
 * A read-only tool that watches an assumption from outside the plan (docs/decisions/0041-evidence-freshness-and-drift.md):
 * called before each step that rests on the assumption starts, at most once per `everyMs`.
 */
export const WatchSchema = z.object({
  /** A registered tool without side effects. */
  tool: z.string().min(1).max(LIMITS.maxIdLength),
  args: JsonObjectSchema.optional(),
  /** CEL over `output` (the tool's return) and `facts`; false → the assumption has drifted (it is falsified). */
  check: ExpressionSchema,
  /** At most one call per this many ms of the run's clock. Default 0: before every start of a step resting on it. */
  everyMs: z
    .number()
    .int()
    .min(0)
    .max(30 * 86_400_000)
    .optional(),
  /**
   * How long one call may take, like a step's `timeoutMs`. Default: the smaller of `policy.defaultTimeoutMs` and
   * 30 s (a watcher is a quick read before a step starts, not the step's work).
   */
  timeoutMs: z.number().int().positive().max(86_400_000).optional(),
});
export type Watch = z.infer<typeof WatchSchema>;

/**
 * A numeric assumption's range (the plan quality gate's Fermi check, docs/decisions/0040-plan-quality-gate.md):
 * finite bounds; whether they are ordered and how wide they are is the gate's finding, not a schema error,
 * so a planner is told why.
 */
export const EstimateSchema = z
  .object({
    /** Finite when given; a missing bound is the gate's finding (`quality.estimate-bounds`). */
    low: z.number().finite().optional(),
    high: z.number().finite().optional(),
    unit: z.string().min(1).max(LIMITS.maxIdLength).optional(),
    /** How sure the planner is of the range; `"low"` needs `evidence`. */
    confidence: z.enum(["low", "medium", "high"]).optional(),
    /** Fact keys the range rests on. */
    evidence: list(FactKeySchema).optional(),
  })
  .strict();
export type Estimate = z.infer<typeof EstimateSchema>;

/** The schema of an assumption a plan rests on. */
export const AssumptionSchema = z.object({
  id: IdSchema,
  statement: TextSchema.min(1),
  /** CEL over `facts`; false → the assumption is falsified. */
  check: ExpressionSchema.optional(),
  /** Watched in the world while the run goes on: a false `watch.check` falsifies it (rule `assumption.drift`). */
  watch: WatchSchema.optional(),
  /** A numeric assumption's range: `{ low, high, unit?, confidence?, evidence? }`. */
  estimate: EstimateSchema.optional(),
});
/** A belief a plan rests on, with an optional CEL `check`, `watch` and `estimate` (docs/guides/configuration.md). */
export type Assumption = z.infer<typeof AssumptionSchema>;

/** The schema of a plan draft, as a planner returns it. */
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
/** A plan as a planner drafts it: steps, assumptions, and whether it covers the whole goal. */
export type PlanDraft = z.infer<typeof PlanDraftSchema>;

/** The schema of a plan version in state. */
export const PlanSchema = z.object({
  version: z.number().int().min(1),
  steps: z.array(StepSchema),
  assumptions: z.array(AssumptionSchema),
  rationale: TextSchema.optional(),
  /** Stored only as `false`: more steps will follow (`Planner.extend`) once these have finished. */
  complete: z.boolean().optional(),
});
/** A plan version in state: the draft's steps and assumptions, numbered. */
export type Plan = z.infer<typeof PlanSchema>;

/**
 * The plan-draft schema as sent to a model for structured output. It must pass OpenAI's strict
 * mode: every property required (optional ones nullable), `additionalProperties: false`, no
 * open-ended records. So free-form `args` travel as a JSON string (`argsJson`) and are parsed
 * back; `toPlanDraft` turns the model's answer into a `PlanDraft` for the validator.
 *
 * Answers are read with `LlmPlanAnswerSchema`, which also takes the natural shape a provider that
 * does not enforce the schema returns: nullable fields left out (read as null), `args` as an
 * object instead of `argsJson`, and an object where the JSON string is expected.
 */
import { z } from "zod";
import type { Estimate, PlanDraft } from "../plan/schema/plan.js";
import type { Step } from "../plan/schema/step.js";

const nullableList = z.array(z.string()).nullable();
const LlmFallbackSchema = z.strictObject({ tool: z.string(), argsJson: z.string().nullable() });
const LlmCompensateSchema = z.strictObject({
  tool: z.string(),
  argsJson: z.string().nullable(),
  inputs: z.array(z.string()).nullable(),
});
const LlmHumanSchema = z.strictObject({ prompt: z.string(), timeoutMs: z.number().nullable() });
/** A step the calling agent does itself (docs/decisions/0042-external-steps.md). */
const LlmExternalSchema = z.strictObject({
  instructions: z.string().describe("what the calling agent must do, in plain words, and what to answer with"),
});
/** Side-effecting calls whose outcome is unknown (docs/decisions/0038-effect-journal.md). */
const LlmVerifySchema = z.strictObject({
  tool: z.string(),
  argsJson: z.string().nullable(),
  inputs: nullableList.describe("fact keys passed to the probe as arguments of the same name"),
});
/** An assumption's watcher (docs/decisions/0041-evidence-freshness-and-drift.md). */
const LlmWatchSchema = z.strictObject({
  tool: z.string().describe("a read-only catalogue tool (no side effects) that observes the assumption"),
  argsJson: z.string().nullable(),
  check: z.string().describe("CEL over the tool's output and facts; false means the assumption no longer holds"),
  everyMs: z
    .number()
    .nullable()
    .describe("call it at most once per this many ms; null: before every step resting on it"),
});

/** A numeric assumption's range (the plan quality gate's Fermi check, docs/decisions/0040-plan-quality-gate.md). */
const LlmEstimateSchema = z.strictObject({
  low: z.number().describe("the lowest plausible value"),
  high: z.number().describe("the highest plausible value"),
  unit: z.string().nullable(),
  confidence: z.enum(["low", "medium", "high"]).nullable(),
  evidence: nullableList.describe("fact keys the range rests on"),
});
const LlmAssumptionSchema = z.strictObject({
  id: z.string(),
  statement: z.string(),
  check: z.string().nullable(),
  watch: LlmWatchSchema.nullable().describe("for a belief about the world that may change while the plan runs"),
  estimate: LlmEstimateSchema.nullable().describe("for a numeric assumption (a price, a count, a duration): its range"),
});

/** Agent steps (docs/decisions/0021-agent-steps.md): the agent, the model tier, how hard it is, its validation. */
const LlmValidateSchema = z.strictObject({
  tool: z.string(),
  argsJson: z.string().nullable(),
  successSignal: z.string().nullable().describe("CEL over the validation tool's output; null: passes unless it throws"),
});
const LlmAgentStepFields = {
  agent: z.string().nullable().describe("an agent name from the agent catalogue (tool null); null for a tool step"),
  tier: z
    .enum(["fast", "default", "strong"])
    .nullable()
    .describe("model tier for an agent step: fast for easy steps, strong for hard ones; null for tool steps"),
  complexity: z.number().nullable().describe("how hard the step is, 1 (trivial) to 5 (hard); null if unknown"),
  validate: LlmValidateSchema.nullable().describe("a tool that checks an agent step's answer (e.g. run the tests)"),
};

export const LlmStepSchema = z.strictObject({
  id: z.string().describe("unique step id: a letter, then letters, digits, _ or -"),
  goal: z.string().describe("what the step achieves, in plain words shown to the user"),
  tool: z.string().nullable().describe("a tool name from the catalogue; null only for a human step"),
  argsJson: z
    .string()
    .nullable()
    .describe('fixed tool arguments as a JSON object string, e.g. {"query": "x"}; null for none'),
  inputs: nullableList.describe("fact keys passed to the tool as arguments of the same name"),
  produces: nullableList.describe("output fields recorded as facts"),
  dependsOn: nullableList.describe("ids of steps that must succeed first"),
  assumptions: nullableList.describe("ids of the plan's assumptions this step rests on"),
  preconditions: nullableList.describe("CEL expressions over facts that must hold before the step"),
  successSignal: z.string().nullable().describe("CEL over output and facts: what done means"),
  when: z.string().nullable().describe("CEL over facts; false skips the step"),
  retry: z
    .strictObject({
      maxAttempts: z.number(),
      backoff: z.enum(["none", "fixed", "exponential"]),
      initialDelayMs: z.number(),
      maxDelayMs: z.number(),
    })
    .nullable(),
  retryOnUnmet: z.boolean().nullable(),
  fallback: LlmFallbackSchema.nullable(),
  compensate: LlmCompensateSchema.nullable().describe(
    "for a side-effecting step: the tool that undoes it (cancel, refund, delete), inputs are fact keys; null for none",
  ),
  sideEffects: nullableList,
  idempotent: z.boolean().nullable(),
  verify: LlmVerifySchema.nullable().describe(
    "for a side-effecting step: a read-only catalogue tool (no side effects) that answers { happened, output? } " +
      "for the call's idempotency key; null if there is none",
  ),
  timeoutMs: z.number().nullable(),
  estimateMs: z.number().nullable().describe("how long the step should take, in ms; null if unknown"),
  freshFor: z
    .array(z.strictObject({ fact: z.string(), ms: z.number() }))
    .nullable()
    .describe("how old each input fact may be when the step starts, in ms; an older one is read again first"),
  inputsFreshForMs: z.number().nullable().describe("the same bound for every input; null for none"),
  cost: z.number().nullable(),
  optional: z.boolean().nullable(),
  human: LlmHumanSchema.nullable(),
  external: LlmExternalSchema.nullable().describe(
    "work the calling agent does itself (tool null), only when the caller says it does work; null otherwise",
  ),
  ...LlmAgentStepFields,
});

export const LlmPlanDraftSchema = z.strictObject({
  steps: z.array(LlmStepSchema),
  assumptions: z.array(LlmAssumptionSchema),
  rationale: z.string().nullable(),
  complete: z
    .boolean()
    .nullable()
    .describe("false when these steps cover only the next part of the goal and more must be planned later"),
});

/**
 * An answer in the natural shape made strict-shaped before it is checked: a nullable key left
 * out becomes null, and `args` (when there is no `argsJson`) is read as `argsJson`. Which keys
 * are nullable is read off the strict schema, so the two cannot drift apart.
 */
function naturalShape(schema: z.ZodObject): (value: unknown) => unknown {
  const nullable = Object.entries(schema.shape)
    .filter(([, field]) => field.safeParse(null).success)
    .map(([key]) => key);
  return (value) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
    const out: Record<string, unknown> = { ...value };
    if ("argsJson" in schema.shape && "args" in out && !("argsJson" in out)) {
      out.argsJson = out.args;
      delete out.args;
    }
    for (const key of nullable) if (out[key] === undefined) out[key] = null;
    return out;
  };
}

/** Free-form arguments: the JSON string of the strict shape, or the object itself. */
const ArgsAnswerSchema = z.union([z.string(), z.record(z.string(), z.unknown())]).nullable();

const lenient = <S extends z.ZodObject, T extends z.ZodType>(strict: S, answer: T) =>
  z.preprocess(naturalShape(strict), answer);

const FallbackAnswerSchema = lenient(LlmFallbackSchema, LlmFallbackSchema.extend({ argsJson: ArgsAnswerSchema }));
const StepAnswerSchema = lenient(
  LlmStepSchema,
  LlmStepSchema.extend({
    argsJson: ArgsAnswerSchema,
    fallback: FallbackAnswerSchema.nullable(),
    human: lenient(LlmHumanSchema, LlmHumanSchema).nullable(),
    external: lenient(LlmExternalSchema, LlmExternalSchema).nullable(),
    validate: lenient(LlmValidateSchema, LlmValidateSchema.extend({ argsJson: ArgsAnswerSchema })).nullable(),
    verify: lenient(LlmVerifySchema, LlmVerifySchema.extend({ argsJson: ArgsAnswerSchema })).nullable(),
    // Whether a tool honours keys decides whether a call in doubt is made again without asking
    // (docs/decisions/0038-effect-journal.md): a model's word is not enough, only a developer's plan
    // or `effects.honoursKeys`. An answer that volunteers it still parses; the claim is dropped.
    honoursIdempotencyKey: z.unknown().optional(),
  }),
);

/** How answers are read: strict-shaped ones as they are, natural-shaped ones made strict-shaped. */
export const LlmPlanAnswerSchema = lenient(
  LlmPlanDraftSchema,
  LlmPlanDraftSchema.extend({
    steps: z.array(StepAnswerSchema),
    // A plan without assumptions is a natural answer too: a missing or null list is an empty one.
    assumptions: z
      .array(
        lenient(
          LlmAssumptionSchema,
          LlmAssumptionSchema.extend({
            watch: lenient(LlmWatchSchema, LlmWatchSchema.extend({ argsJson: ArgsAnswerSchema })).nullable(),
            estimate: lenient(LlmEstimateSchema, LlmEstimateSchema).nullable(),
          }),
        ),
      )
      .nullish()
      .transform((list) => list ?? []),
  }),
);
export type LlmPlanAnswer = z.output<typeof LlmPlanAnswerSchema>;

export interface ConversionIssue {
  path: (string | number)[];
  message: string;
}

/** The model's answer as a PlanDraft (nulls dropped, JSON args parsed), or the problems found. */
export function toPlanDraft(answer: LlmPlanAnswer): { draft: PlanDraft; issues: ConversionIssue[] } {
  const issues: ConversionIssue[] = [];
  const steps = answer.steps.map((s, i) => toStep(s, i, issues));
  const draft: PlanDraft = {
    steps,
    assumptions: answer.assumptions.map((a, i) => ({
      id: a.id,
      statement: a.statement,
      ...(a.check !== null ? { check: a.check } : {}),
      ...(a.watch !== null ? { watch: toWatch(a.watch, i, issues) } : {}),
      ...(a.estimate ? { estimate: toEstimate(a.estimate) } : {}),
    })),
  };
  if (answer.rationale !== null) draft.rationale = answer.rationale;
  if (answer.complete === false) draft.complete = false;
  return { draft, issues };
}

/** An estimate with its nulls dropped; the validator checks the numbers, the quality gate the range. */
function toEstimate(e: NonNullable<LlmPlanAnswer["assumptions"][number]["estimate"]>): Estimate {
  return {
    low: e.low,
    high: e.high,
    ...(e.unit !== null ? { unit: e.unit } : {}),
    ...(e.confidence !== null ? { confidence: e.confidence } : {}),
    ...(e.evidence !== null ? { evidence: e.evidence } : {}),
  };
}

type Args = Record<string, unknown>;

function toWatch(w: NonNullable<LlmPlanAnswer["assumptions"][number]["watch"]>, i: number, issues: ConversionIssue[]) {
  const args = parseArgs(w.argsJson, ["assumptions", i, "watch", "argsJson"], issues);
  return {
    tool: w.tool,
    check: w.check,
    ...(args ? { args } : {}),
    ...(w.everyMs !== null ? { everyMs: Math.round(w.everyMs) } : {}),
  };
}

function parseArgs(text: string | Args | null, path: (string | number)[], issues: ConversionIssue[]): Args | undefined {
  // An object where the JSON string belongs is the parsed value already.
  if (text !== null && typeof text === "object") return Object.keys(text).length > 0 ? text : undefined;
  if (text === null || text.trim() === "") return undefined;
  try {
    const value: unknown = JSON.parse(text);
    if (value && typeof value === "object" && !Array.isArray(value)) return value as Args;
    issues.push({ path, message: "argsJson must be a JSON object" });
  } catch {
    issues.push({ path, message: "argsJson is not valid JSON" });
  }
  return undefined;
}

function toStep(s: LlmPlanAnswer["steps"][number], i: number, issues: ConversionIssue[]): Step {
  const step: Step = { id: s.id, goal: s.goal };
  if (s.tool !== null) step.tool = s.tool;
  const args = parseArgs(s.argsJson, ["steps", i, "argsJson"], issues);
  if (args) step.args = args;
  for (const key of ["inputs", "produces", "dependsOn", "assumptions", "preconditions", "sideEffects"] as const) {
    const value = s[key];
    if (value !== null && value.length > 0) step[key] = value;
  }
  if (s.successSignal !== null) step.successSignal = s.successSignal;
  if (s.when !== null) step.when = s.when;
  if (s.retry !== null) {
    const { maxAttempts, initialDelayMs, maxDelayMs } = s.retry;
    const rounded = { maxAttempts: Math.round(maxAttempts), initialDelayMs: Math.round(initialDelayMs) };
    step.retry = { ...s.retry, ...rounded, maxDelayMs: Math.round(maxDelayMs) };
  }
  if (s.retryOnUnmet !== null) step.retryOnUnmet = s.retryOnUnmet;
  if (s.fallback !== null) {
    const fallbackArgs = parseArgs(s.fallback.argsJson, ["steps", i, "fallback", "argsJson"], issues);
    step.fallback = { tool: s.fallback.tool, ...(fallbackArgs ? { args: fallbackArgs } : {}) };
  }
  if (s.compensate !== null) {
    const undoArgs = parseArgs(s.compensate.argsJson, ["steps", i, "compensate", "argsJson"], issues);
    const inputs = s.compensate.inputs;
    step.compensate = {
      tool: s.compensate.tool,
      ...(undoArgs ? { args: undoArgs } : {}),
      ...(inputs !== null && inputs.length > 0 ? { inputs } : {}),
    };
  }
  if (s.idempotent !== null) step.idempotent = s.idempotent;
  if (s.verify !== null) {
    const verifyArgs = parseArgs(s.verify.argsJson, ["steps", i, "verify", "argsJson"], issues);
    const inputs = s.verify.inputs !== null && s.verify.inputs.length > 0 ? { inputs: s.verify.inputs } : {};
    step.verify = { tool: s.verify.tool, ...(verifyArgs ? { args: verifyArgs } : {}), ...inputs };
  }
  if (s.timeoutMs !== null) step.timeoutMs = Math.round(s.timeoutMs);
  if (s.estimateMs !== null) step.estimateMs = Math.round(s.estimateMs);
  // Entries, not a record: strict structured output has no open-ended objects. A key repeated keeps its last bound.
  if (s.freshFor !== null && s.freshFor.length > 0)
    step.freshFor = Object.fromEntries(s.freshFor.map((f) => [f.fact, Math.round(f.ms)]));
  if (s.inputsFreshForMs !== null) step.inputsFreshForMs = Math.round(s.inputsFreshForMs);
  if (s.cost !== null) step.cost = s.cost;
  if (s.optional !== null) step.optional = s.optional;
  if (s.human !== null) {
    const { prompt, timeoutMs } = s.human;
    step.human = { prompt, ...(timeoutMs !== null ? { timeoutMs: Math.round(timeoutMs) } : {}) };
  }
  if (s.external !== null) step.external = { instructions: s.external.instructions };
  agentFields(step, s, i, issues);
  return step;
}

function agentFields(step: Step, s: LlmPlanAnswer["steps"][number], i: number, issues: ConversionIssue[]): void {
  if (s.agent !== null) step.agent = s.agent;
  if (s.tier !== null) step.tier = s.tier;
  if (s.complexity !== null) step.complexity = Math.min(5, Math.max(1, Math.round(s.complexity)));
  if (s.validate !== null) {
    const args = parseArgs(s.validate.argsJson, ["steps", i, "validate", "argsJson"], issues);
    const signal = s.validate.successSignal;
    step.validate = {
      tool: s.validate.tool,
      ...(args ? { args } : {}),
      ...(signal !== null ? { successSignal: signal } : {}),
    };
  }
}

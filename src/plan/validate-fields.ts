/**
 * Checks the schema cannot make: fields it would silently strip (a typo such as `tolo`), inputs a
 * tool has no argument for, and inputs nothing produces. Each issue suggests the nearest name.
 */
import { MAX_ISSUES, type PlanIssue, type ValidationContext } from "./issues.js";
import { nearest } from "./nearest.js";
import { staticSignature } from "./operation.js";
import { AssumptionSchema, PlanDraftSchema, WatchSchema, type PlanDraft } from "./schema/plan.js";
import { LIMITS, RESERVED_KEYS } from "./schema/primitives.js";
import {
  CompensateSchema,
  ExternalTaskSchema,
  FallbackSchema,
  HumanTaskSchema,
  RetryPolicySchema,
  StepSchema,
  ValidateSchema,
  VerifySchema,
} from "./schema/step.js";

const FIELDS = {
  draft: Object.keys(PlanDraftSchema.shape),
  step: Object.keys(StepSchema.shape),
  assumption: Object.keys(AssumptionSchema.shape),
  fallback: Object.keys(FallbackSchema.shape),
  compensate: Object.keys(CompensateSchema.shape),
  human: Object.keys(HumanTaskSchema.shape),
  external: Object.keys(ExternalTaskSchema.shape),
  retry: Object.keys(RetryPolicySchema.shape),
  validate: Object.keys(ValidateSchema.shape),
  verify: Object.keys(VerifySchema.shape),
  watch: Object.keys(WatchSchema.shape),
} as const;

/** Characters of a name quoted back in a message: enough to recognise it, never a flood. */
const MAX_QUOTED = 64;

function quote(name: string): string {
  return JSON.stringify(name.length > MAX_QUOTED ? `${name.slice(0, MAX_QUOTED - 3)}...` : name);
}

/** The nearest candidate to a misspelt name, if close (`nearest` skips names too long to quote). */
function suggest(name: string, candidates: Iterable<string>): string | undefined {
  return nearest(name, [...candidates]);
}

/** Fields a plan draft carries that its schema does not know, each with the nearest known one. */
export function unknownFields(input: unknown): PlanIssue[] {
  const issues: PlanIssue[] = [];
  type Path = (string | number)[];
  const check = (value: unknown, known: readonly string[], path: Path, what: string, stepId?: string) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) return;
    for (const key of Object.keys(value)) {
      if (issues.length >= MAX_ISSUES) return;
      if (known.includes(key)) continue;
      const guess = suggest(key, known);
      const hint = guess ? ` (did you mean "${guess}"?)` : `; known fields: ${known.join(", ")}`;
      const message = `${what} has unknown field ${quote(key)}${hint}`;
      issues.push({ code: "unknown_field", path: [...path, key], ...(stepId ? { stepId } : {}), message });
    }
  };
  check(input, FIELDS.draft, [], "the plan");
  const draft = input as { steps?: unknown; assumptions?: unknown } | null;
  // Past the schema's length limits the schema rejects the list anyway; reading further is wasted work.
  if (Array.isArray(draft?.steps)) {
    draft.steps.slice(0, LIMITS.maxSteps).forEach((step: unknown, i) => {
      const stepId = idOf(step);
      const what = stepId ? `step "${stepId}"` : `step ${i}`;
      check(step, FIELDS.step, ["steps", i], what, stepId);
      const s = step as Record<string, unknown> | null;
      check(s?.fallback, FIELDS.fallback, ["steps", i, "fallback"], `${what} fallback`, stepId);
      check(s?.compensate, FIELDS.compensate, ["steps", i, "compensate"], `${what} compensate`, stepId);
      check(s?.human, FIELDS.human, ["steps", i, "human"], `${what} human`, stepId);
      check(s?.external, FIELDS.external, ["steps", i, "external"], `${what} external`, stepId);
      check(s?.retry, FIELDS.retry, ["steps", i, "retry"], `${what} retry`, stepId);
      check(s?.validate, FIELDS.validate, ["steps", i, "validate"], `${what} validate`, stepId);
      check(s?.verify, FIELDS.verify, ["steps", i, "verify"], `${what} verify`, stepId);
      reservedKeys(s?.freshFor, ["steps", i, "freshFor"], `${what} freshFor`, stepId, issues);
    });
  }
  if (Array.isArray(draft?.assumptions)) {
    draft.assumptions.slice(0, LIMITS.maxAssumptions).forEach((a: unknown, i) => {
      const id = idOf(a);
      const what = id ? `assumption "${id}"` : `assumption ${i}`;
      check(a, FIELDS.assumption, ["assumptions", i], what);
      check((a as { watch?: unknown } | null)?.watch, FIELDS.watch, ["assumptions", i, "watch"], `${what} watch`);
    });
  }
  return issues;
}

/**
 * Keys of a map the schema would drop without a word (`__proto__` never reaches a parsed record): a freshness
 * bound on `__proto__` must not vanish and leave the step unbounded.
 */
function reservedKeys(
  value: unknown,
  path: (string | number)[],
  what: string,
  stepId: string | undefined,
  issues: PlanIssue[],
) {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return;
  for (const key of Object.keys(value)) {
    if (!RESERVED_KEYS.has(key) || issues.length >= MAX_ISSUES) continue;
    const message = `${what} names ${quote(key)}, a reserved name (collides with Object.prototype), not a fact key`;
    issues.push({ code: "invalid_freshness", path: [...path, key], ...(stepId ? { stepId } : {}), message });
  }
}

/** A step's or assumption's id as written, if it is a string (cut to the id length limit). */
function idOf(value: unknown): string | undefined {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === "string" ? id.slice(0, LIMITS.maxIdLength) : undefined;
}

/** Names listed in a message, at most 20. */
function listNames(names: readonly string[]): string {
  return names.length > 20 ? `${names.slice(0, 20).join(", ")} and ${names.length - 20} more` : names.join(", ");
}

/**
 * Inputs a tool has no argument for (a strict schema rejects them, a plain zod object drops
 * them: either way the step does not get what the plan meant), and inputs nothing produces.
 */
export function checkInputs(draft: PlanDraft, ctx: ValidationContext, add: (issue: PlanIssue) => boolean) {
  const own = new Set(draft.steps.flatMap((s) => s.produces ?? []));
  // A set given as it is: an extension's context holds every fact of a long run (docs/decisions/0030-long-runs-per-step-cost.md).
  const given = ctx.availableFacts ?? [];
  const available = "has" in given ? given : new Set(given);
  for (const [i, step] of draft.steps.entries()) {
    for (const [j, key] of (step.inputs ?? []).entries()) {
      const path = ["steps", i, "inputs", j];
      if (ctx.availableFacts && !available.has(key) && !own.has(key)) {
        const guess = suggest(key, new Set([...available, ...own]));
        const hint = guess ? ` (did you mean "${guess}"?)` : "";
        const message = `step "${step.id}" reads input "${key}", which neither the context nor any step produces`;
        if (!add({ code: "unproduced_input", path, stepId: step.id, message: message + hint })) return;
      }
      for (const tool of [step.tool, step.fallback?.tool]) {
        // A human step's inputs are shown to the person, not passed to a tool.
        const accepted = tool === undefined || step.human ? undefined : ctx.toolArguments?.get(tool);
        if (accepted === undefined || accepted.includes(key)) continue;
        const guess = suggest(key, accepted);
        const list = accepted.length > 0 ? `it accepts ${listNames(accepted)}` : "it takes no arguments";
        const hint = guess ? `did you mean "${guess}"? ${list}` : list;
        const message = `step "${step.id}" passes input "${key}" to tool "${tool}", which has no such argument`;
        if (!add({ code: "unknown_input", path, stepId: step.id, message: `${message} (${hint})` })) return;
      }
    }
    if (!checkCompensateInputs(step, i, { available, own, ctx }, add)) return;
  }
}

/** A compensation's inputs are fact keys like a step's: produced by the context or a step, accepted by its tool. */
function checkCompensateInputs(
  step: PlanDraft["steps"][number],
  i: number,
  known: { available: { has(key: string): boolean }; own: ReadonlySet<string>; ctx: ValidationContext },
  add: (issue: PlanIssue) => boolean,
): boolean {
  const undo = step.compensate;
  const accepted = undo ? known.ctx.toolArguments?.get(undo.tool) : undefined;
  for (const [j, key] of (undo?.inputs ?? []).entries()) {
    const path = ["steps", i, "compensate", "inputs", j];
    const what = `step "${step.id}" compensate reads input "${key}"`;
    if (known.ctx.availableFacts && !known.available.has(key) && !known.own.has(key)) {
      const message = `${what}, which neither the context nor any step produces`;
      if (!add({ code: "unproduced_input", path, stepId: step.id, message })) return false;
    }
    if (accepted !== undefined && !accepted.includes(key)) {
      const message = `${what}, but tool "${undo!.tool}" has no such argument (it accepts ${listNames(accepted)})`;
      if (!add({ code: "unknown_input", path, stepId: step.id, message })) return false;
    }
  }
  return true;
}

/**
 * Two side-effecting steps of one draft that make the same call (tool, literal arguments, input
 * keys, label): their idempotency keys would be equal, so the second would reuse the first's effect
 * instead of running. A planner that listed a payment twice is told so; an author who means the call
 * twice labels each step (`operation`) (docs/decisions/0006-idempotency-keys-name-the-operation.md).
 */
export function checkOperations(
  draft: PlanDraft,
  ctx: Pick<ValidationContext, "sideEffectTools">,
  add: (issue: PlanIssue) => boolean,
) {
  const seen = new Map<string, string>();
  for (const [i, step] of draft.steps.entries()) {
    if (step.tool === undefined || step.human || step.idempotent === true) continue;
    if ((step.sideEffects?.length ?? 0) === 0 && !ctx.sideEffectTools?.has(step.tool)) continue;
    const signature = staticSignature(step);
    const first = seen.get(signature);
    if (first === undefined) {
      seen.set(signature, step.id);
      continue;
    }
    const message =
      `steps "${first}" and "${step.id}" make the same side-effecting call (${step.tool} with the same arguments and ` +
      "inputs): the second would reuse the first's effect; give each an `operation` label if the call is meant twice";
    if (!add({ code: "duplicate_operation", path: ["steps", i], stepId: step.id, message })) return;
  }
}

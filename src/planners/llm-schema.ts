/**
 * The plan-draft schema as sent to a model for structured output. It must pass OpenAI's strict
 * mode: every property required (optional ones nullable), `additionalProperties: false`, no
 * open-ended records. So free-form `args` travel as a JSON string (`argsJson`) and are parsed
 * back; `toPlanDraft` turns the model's answer into a `PlanDraft` for the validator.
 */
import { z } from "zod";
import type { PlanDraft, Step } from "../plan/schema.js";

const nullableList = z.array(z.string()).nullable();

export const LlmStepSchema = z.strictObject({
  id: z.string().describe("unique step id: a letter, then letters, digits, _ or -"),
  goal: z.string().describe("what the step achieves, in plain words shown to the user"),
  tool: z.string().nullable().describe("a tool name from the catalogue; null only for a human step"),
  argsJson: z.string().nullable().describe("fixed tool arguments as a JSON object string, e.g. {\"query\": \"x\"}; null for none"),
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
  fallback: z.strictObject({ tool: z.string(), argsJson: z.string().nullable() }).nullable(),
  sideEffects: nullableList,
  idempotent: z.boolean().nullable(),
  timeoutMs: z.number().nullable(),
  cost: z.number().nullable(),
  optional: z.boolean().nullable(),
  human: z.strictObject({ prompt: z.string(), timeoutMs: z.number().nullable() }).nullable(),
});

export const LlmPlanDraftSchema = z.strictObject({
  steps: z.array(LlmStepSchema),
  assumptions: z.array(z.strictObject({ id: z.string(), statement: z.string(), check: z.string().nullable() })),
  rationale: z.string().nullable(),
});
export type LlmPlanDraft = z.infer<typeof LlmPlanDraftSchema>;

export interface ConversionIssue {
  path: (string | number)[];
  message: string;
}

/** The model's answer as a PlanDraft (nulls dropped, JSON args parsed), or the problems found. */
export function toPlanDraft(answer: LlmPlanDraft): { draft: PlanDraft; issues: ConversionIssue[] } {
  const issues: ConversionIssue[] = [];
  const parseArgs = (text: string | null, path: (string | number)[]): Record<string, unknown> | undefined => {
    if (text === null || text.trim() === "") return undefined;
    try {
      const value: unknown = JSON.parse(text);
      if (value && typeof value === "object" && !Array.isArray(value)) return value as Record<string, unknown>;
      issues.push({ path, message: "argsJson must be a JSON object" });
    } catch {
      issues.push({ path, message: "argsJson is not valid JSON" });
    }
    return undefined;
  };
  const steps = answer.steps.map((s, i): Step => {
    const step: Step = { id: s.id, goal: s.goal };
    if (s.tool !== null) step.tool = s.tool;
    const args = parseArgs(s.argsJson, ["steps", i, "argsJson"]);
    if (args) step.args = args;
    for (const key of ["inputs", "produces", "dependsOn", "assumptions", "preconditions", "sideEffects"] as const) {
      const value = s[key];
      if (value !== null && value.length > 0) step[key] = value;
    }
    if (s.successSignal !== null) step.successSignal = s.successSignal;
    if (s.when !== null) step.when = s.when;
    if (s.retry !== null) step.retry = { ...s.retry, maxAttempts: Math.round(s.retry.maxAttempts), initialDelayMs: Math.round(s.retry.initialDelayMs), maxDelayMs: Math.round(s.retry.maxDelayMs) };
    if (s.retryOnUnmet !== null) step.retryOnUnmet = s.retryOnUnmet;
    if (s.fallback !== null) {
      const fallbackArgs = parseArgs(s.fallback.argsJson, ["steps", i, "fallback", "argsJson"]);
      step.fallback = { tool: s.fallback.tool, ...(fallbackArgs ? { args: fallbackArgs } : {}) };
    }
    if (s.idempotent !== null) step.idempotent = s.idempotent;
    if (s.timeoutMs !== null) step.timeoutMs = Math.round(s.timeoutMs);
    if (s.cost !== null) step.cost = s.cost;
    if (s.optional !== null) step.optional = s.optional;
    if (s.human !== null) step.human = { prompt: s.human.prompt, ...(s.human.timeoutMs !== null ? { timeoutMs: Math.round(s.human.timeoutMs) } : {}) };
    return step;
  });
  const draft: PlanDraft = {
    steps,
    assumptions: answer.assumptions.map((a) => ({ id: a.id, statement: a.statement, ...(a.check !== null ? { check: a.check } : {}) })),
  };
  if (answer.rationale !== null) draft.rationale = answer.rationale;
  return { draft, issues };
}

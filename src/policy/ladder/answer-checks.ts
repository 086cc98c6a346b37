/**
 * Checks on a person's answer at an interrupt, beyond its shape (`plan/resume.ts`): a person
 * may supply exactly what the step was to produce, within the limits a tool's output has (a
 * fact is a fact, whoever supplies it), and a human step's output must meet the step's own
 * success signal. A calling agent's submission for an external step names one of the steps offered
 * (`ctx.step` is the one it names) and holds an output within those limits with every key the step produces, or an error (its success signal is the ladder's to judge, not a reason
 * to refuse it: docs/decisions/0042-external-steps.md). Pure: each returns what is wrong, or undefined.
 */
import { evaluate } from "../../expr/cel.js";
import { producedValues } from "../../plan/facts.js";
import { resumeProblem } from "../../plan/resume.js";
import { type InterruptPayload, type ResumeValue } from "../../plan/schema/interrupts.js";
import { LIMITS } from "../../plan/schema/primitives.js";
import { type Fact } from "../../plan/schema/run.js";
import { type Step } from "../../plan/schema/step.js";
import { toJsonValue } from "../../plan/json.js";
import { offeredStepIds } from "../../plan/external-offers.js";

export interface AnswerContext {
  pending: Pick<InterruptPayload, "kind" | "options" | "stepId" | "context">;
  step: Step | undefined;
  facts: Readonly<Record<string, Fact>>;
  trusted: Readonly<Record<string, unknown>>;
}

/** Why `raw` cannot answer the pending interrupt, or undefined when it can. */
export function answerProblem(raw: unknown, ctx: AnswerContext): string | undefined {
  const shape = resumeProblem(raw, ctx.pending.options);
  if (shape) return shape;
  // resumeProblem has parsed it against ResumeValueSchema.
  const answer = raw as ResumeValue;
  if (answer.action === "provide") return provideProblem(answer.facts, ctx.step, ctx.facts);
  if (answer.action === "submit") return submitProblem(answer, ctx);
  if (answer.action !== "complete" && answer.action !== "happened") return undefined;
  const limits = valueProblem(answer.output, "output");
  // A call in doubt that happened: its output is checked as the tool's would be. An undo's output is
  // the undo tool's, not the step's: only the limits apply.
  const checked = ctx.pending.kind === "human_step" || (answer.action === "happened" && !undoAsked(ctx.pending));
  if (limits || !checked || !ctx.step) return limits;
  const missing = missingProduced(ctx.step, answer.output);
  if (missing) return missing;
  if (ctx.step.successSignal) {
    const result = evaluate(ctx.step.successSignal, "successSignal", ctx.trusted, answer.output);
    if (!result.ok || result.value !== true)
      return `output does not meet the step's success signal ${JSON.stringify(ctx.step.successSignal)}`;
  }
  return undefined;
}

/** The keys `step` produces that `output` lacks, as a refusal, or undefined when it holds them all. */
function missingProduced(step: Step, output: unknown): string | undefined {
  if (!step.produces?.length) return undefined;
  const { missing } = producedValues(step, output);
  return missing.length > 0
    ? `output is missing ${missing.join(", ")}, which step "${step.id}" must produce`
    : undefined;
}

/** Whether the question is about a compensation that failed (docs/decisions/0039-compensation.md). */
function undoAsked(pending: AnswerContext["pending"]): boolean {
  return "compensation" in pending.context && pending.context.compensation?.failed !== undefined;
}

export function provideProblem(
  facts: Record<string, unknown>,
  step: Step | undefined,
  known: Readonly<Record<string, Fact>>,
): string | undefined {
  const keys = Object.keys(facts);
  if (step) {
    const produces = step.produces ?? [];
    const foreign = keys.filter((k) => !produces.includes(k));
    const accepted =
      produces.length > 0 ? `step "${step.id}" produces ${produces.join(", ")}` : `step "${step.id}" produces no facts`;
    if (foreign.length > 0) return `cannot provide ${foreign.join(", ")}: ${accepted}; provide only those`;
    const missing = produces.filter((k) => !Object.hasOwn(facts, k) || facts[k] === undefined);
    if (missing.length > 0) return `provide ${missing.join(", ")} too: ${accepted}`;
  } else {
    const taken = keys.filter((k) => known[k]?.label === "trusted");
    if (taken.length > 0) return `cannot provide ${taken.join(", ")}: already a trusted fact`;
  }
  for (const key of keys) {
    const problem = valueProblem(facts[key], `facts.${key}`);
    if (problem) return problem;
  }
  return undefined;
}

/** The fact limits (LIMITS.maxJsonBytes, LIMITS.maxJsonDepth) applied to what a person (or the input) sends. */
export function valueProblem(value: unknown, where: string): string | undefined {
  const json = factValue(value, where, "person");
  return json.ok ? undefined : json.problem;
}

/** A value as a fact stores it (JSON, a `Date` as its ISO string), or what keeps it from being one. */
export function factValue(
  value: unknown,
  where: string,
  source: "person" | "input",
): { ok: true; value: unknown } | { ok: false; problem: string } {
  const json = toJsonValue(value, { path: where, source });
  if (!json.ok) return { ok: false, problem: json.message };
  if (json.bytes > LIMITS.maxJsonBytes) {
    return {
      ok: false,
      problem: `${where} is ${json.bytes} bytes of JSON, over the ${LIMITS.maxJsonBytes}-byte fact limit`,
    };
  }
  return { ok: true, value: json.value };
}

/** Why a submission cannot answer the external step waiting, or undefined when it can. */
function submitProblem(answer: Extract<ResumeValue, { action: "submit" }>, ctx: AnswerContext): string | undefined {
  // Several ready external steps are offered at once: any of them may be submitted, in any order.
  const waiting = offeredStepIds(ctx.pending);
  if (!waiting.includes(answer.stepId)) return notOffered(answer.stepId, waiting);
  const hasOutput = answer.output !== undefined;
  if (hasOutput === (answer.error !== undefined))
    return "submit carries exactly one of output (the step's result) and error (what went wrong)";
  // An output without a key the step produces is malformed, not a deviation for the ladder: refused
  // up front, as a human step's `complete` is (its success signal stays the ladder's to judge).
  if (hasOutput) return valueProblem(answer.output, "output") ?? (ctx.step && missingProduced(ctx.step, answer.output));
  const { error } = answer;
  if (error?.class === "assumption_broken") {
    const rests = ctx.step?.assumptions ?? [];
    if (error.assumption === undefined || !rests.includes(error.assumption)) {
      const known = rests.length > 0 ? `one of ${rests.join(", ")}` : "none: report the error as permanent instead";
      return `error.assumption must name the assumption found false; step "${answer.stepId}" rests on ${known}`;
    }
  } else if (error?.assumption !== undefined) return 'error.assumption goes with class "assumption_broken"';
  return undefined;
}

function notOffered(named: string, waiting: readonly string[]): string {
  const steps = waiting.map((id) => `"${id}"`).join(", ");
  const which =
    waiting.length > 1
      ? `the steps waiting for the calling agent are ${steps}`
      : `the step waiting for the calling agent is ${steps || '"none"'}`;
  return `submit names step "${named.slice(0, 64)}", but ${which}`;
}

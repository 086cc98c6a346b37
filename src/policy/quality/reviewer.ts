/**
 * The reviewer's part of the gate (docs/decisions/0040-plan-quality-gate.md): the structured answer
 * asked of the reviewer model, and what its answer — or its failure — becomes. A reviewer that
 * throws, times out or answers something that is not findings never crashes the run: that is a
 * finding of its own (`quality.reviewer-failed`, high: the version went unreviewed, so a person
 * sees it). Pure: the model call is made by the node (steps/plan-reviewer.ts).
 */
import { z } from "zod";
import { QUALITY_RULES, SeveritySchema, type QualityFinding } from "./findings.js";
import { MAX_FINDINGS } from "./gate.js";

/** What the reviewer answers (OpenAI strict mode: every property required, optional ones nullable). */
export const ReviewerAnswerSchema = z.strictObject({
  findings: z
    .array(
      z.strictObject({
        severity: SeveritySchema.describe(
          "high: the plan should not run as written; medium: worth a look; low: a note",
        ),
        stepId: z.string().nullable().describe("the step the finding is about; null for the whole plan"),
        message: z.string().describe("what is wrong and why, in one or two sentences"),
      }),
    )
    .describe("problems found in the plan; empty when none"),
});

/** Characters of a reviewer's message kept: a finding is a note, not a transcript. */
const MAX_MESSAGE = 500;

const cut = (text: string) => (text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE - 3)}...` : text);

/** The reviewer could not review: why, as a finding. */
export function reviewerFailure(why: string, planVersion: number): QualityFinding {
  return {
    rule: QUALITY_RULES.reviewerFailed,
    severity: "high",
    message: cut(`the reviewer did not review plan version ${planVersion}: ${why}`),
    planVersion,
  };
}

/**
 * The reviewer's answer as findings. A step id the plan does not have is dropped from its finding
 * (the message stays); an answer of another shape is the reviewer's failure.
 */
export function reviewerFindings(
  answer: unknown,
  plan: { version: number; steps: readonly { id: string }[] },
): QualityFinding[] {
  const parsed = ReviewerAnswerSchema.safeParse(answer);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const where = issue.path.length > 0 ? ` at ${issue.path.join(".")}` : "";
    return [reviewerFailure(`its answer is not findings (${issue.message}${where})`, plan.version)];
  }
  const ids = new Set(plan.steps.map((s) => s.id));
  return parsed.data.findings.slice(0, MAX_FINDINGS).map((f) => ({
    rule: QUALITY_RULES.reviewer,
    severity: f.severity,
    ...(f.stepId !== null && ids.has(f.stepId) ? { stepId: f.stepId } : {}),
    message: cut(f.message),
    planVersion: plan.version,
  }));
}

/**
 * The external steps one `external_step` question offers (docs/decisions/0042-external-steps.md): the
 * calling agent may submit any of them, so an answer is about the step it names, not always the
 * question's own. Pure.
 */
import type { ExternalOffer, InterruptPayload } from "./schema/interrupts.js";

type Question = Pick<InterruptPayload, "kind" | "stepId" | "context">;

/** The steps offered, the question's own first; a question written before it listed them offers its own. */
export function offersOf(question: Question): ExternalOffer[] {
  if (question.kind !== "external_step") return [];
  const {
    goal: _goal,
    offered,
    ...own
  } = question.context as Extract<InterruptPayload, { kind: "external_step" }>["context"];
  return offered ?? [own];
}

/** The ids of the steps offered, in the order the question lists them. */
export function offeredStepIds(question: Question): string[] {
  return offersOf(question).map((o) => o.step.id);
}

/** What the question offers of step `id`, if it offers it. */
export function offerOf(question: Question, id: string): ExternalOffer | undefined {
  return offersOf(question).find((o) => o.step.id === id);
}

/**
 * The step an answer is about: the offered step a submission names; for any other answer (and a
 * submission naming a step not offered, which is refused), the question's own step.
 */
export function answeredStepId(question: Question, answer: unknown): string | undefined {
  const named = submittedStepId(answer);
  return named !== undefined && offerOf(question, named) ? named : question.stepId;
}

function submittedStepId(answer: unknown): string | undefined {
  if (typeof answer !== "object" || answer === null) return undefined;
  const { action, stepId } = answer as { action?: unknown; stepId?: unknown };
  return action === "submit" && typeof stepId === "string" ? stepId : undefined;
}

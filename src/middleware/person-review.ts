/**
 * Questions to a person in the vocabulary of LangChain's `humanInTheLoopMiddleware`: the interrupt
 * carries `actionRequests` and `reviewConfigs`, and the answer is `{ decisions: [{ type: "approve"
 * | "edit" | "reject", … }] }` (`{ action: "approve" }` and `{ action: "reject" }` are accepted
 * too), so an agent inbox that answers HITL's questions answers these.
 */
import { interrupt } from "@langchain/langgraph";
import { isPlanManagerError, PlanManagerError } from "../errors.js";
import type { QualityFinding } from "../plan/schema/quality.js";

export type ReviewKind = "plan_review" | "escalation";

/** An interrupt of `planMiddleware`, in the vocabulary of LangChain's `humanInTheLoopMiddleware`. */
export interface ReviewRequest {
  actionRequests: { name: string; args: Record<string, unknown>; description: string }[];
  reviewConfigs: { actionName: string; allowedDecisions: ("approve" | "edit" | "reject")[] }[];
  /** What is asked: the whole plan, or a step that failed. */
  kind: ReviewKind;
  /** The rule that asked. */
  rule: string;
  planVersion: number;
  stepId?: string;
  /** A plan review's quality findings (docs/decisions/0040-plan-quality-gate.md): the version's, holding ones included. */
  findings?: QualityFinding[];
  /** Set when the previous answer could not be read: what was wrong with it. */
  error?: string;
  /**
   * The answers a question about a call whose outcome is unknown takes (`effect.in-doubt`), instead of
   * HITL's decisions: `{ action: "happened", output }`, `{ action: "retry" }` or `{ action: "abort" }`;
   * about an undo that failed (`compensate.failed`), `{ action: "skip" }` too.
   */
  options?: (InDoubtAction | "skip")[];
}

export type InDoubtAction = "happened" | "retry" | "abort";

/** A person's answer to a call in doubt: it took effect (with what it returned), call it once more, or end the run. */
export type InDoubtAnswer =
  { type: "happened"; output: unknown } | { type: "retry" } | { type: "abort"; reason?: string };

/** A person's answer to a review, in the vocabulary of LangChain's `humanInTheLoopMiddleware`. */
export type Answer =
  | { type: "approve" }
  | { type: "edit"; name?: string; args: Record<string, unknown> }
  | { type: "reject"; message?: string };

export function reviewRequest(
  kind: ReviewKind,
  action: { name: string; args: Record<string, unknown>; description: string },
  where: { rule: string; planVersion: number; stepId?: string; findings?: QualityFinding[] },
): ReviewRequest {
  return {
    actionRequests: [action],
    reviewConfigs: [{ actionName: action.name, allowedDecisions: ["approve", "edit", "reject"] }],
    kind,
    ...where,
  };
}

const EXPECTED =
  'expected { decisions: [{ type: "approve" }] }, { decisions: [{ type: "edit", editedAction: { name, args } }] }, ' +
  '{ decisions: [{ type: "reject", message? }] } or { action: "approve" }';

/**
 * Asks a person and waits (an interrupt). An answer that cannot be read is not an answer: the
 * same question is asked again, with `error` saying what was wrong, and nothing is lost.
 */
export function ask(request: ReviewRequest): Answer;
export function ask<A>(request: ReviewRequest, read: (value: unknown) => A): A;
export function ask(request: ReviewRequest, read: (value: unknown) => unknown = readAnswer): unknown {
  let value: unknown = interrupt(request);
  for (;;) {
    try {
      return read(value);
    } catch (error) {
      if (!isPlanManagerError(error)) throw error;
      value = interrupt({ ...request, error: error.message });
    }
  }
}

/** The person's answer; anything else throws `invalid_resume`. */
export function readAnswer(value: unknown): Answer {
  const v = record(value);
  if (v?.action === "approve") return { type: "approve" };
  if (v?.action === "reject") return rejection(v.reason);
  const decisions = Array.isArray(v?.decisions) ? v.decisions : undefined;
  if (decisions?.length !== 1) throw invalid(`${EXPECTED} (one decision)`);
  const d = record(decisions[0]);
  if (d?.type === "approve") return { type: "approve" };
  if (d?.type === "reject") return rejection(d.message);
  const edited = record(d?.editedAction);
  const args = record(edited?.args);
  if (d?.type === "edit" && args) {
    return { type: "edit", args, ...(typeof edited?.name === "string" ? { name: edited.name } : {}) };
  }
  throw invalid(EXPECTED);
}

const IN_DOUBT_EXPECTED =
  'expected { action: "happened", output } (the call took effect; output is what it returned), ' +
  '{ action: "retry" } (call it once more under the same key) or { action: "abort", reason? }';

/** A person's answer to an `effect.in-doubt` question; anything else throws `invalid_resume`. */
export function readInDoubtAnswer(value: unknown): InDoubtAnswer {
  const v = record(value);
  if (v?.action === "happened" && Object.hasOwn(v, "output")) return { type: "happened", output: v.output };
  if (v?.action === "retry") return { type: "retry" };
  if (v?.action === "abort")
    return typeof v.reason === "string" ? { type: "abort", reason: v.reason } : { type: "abort" };
  throw invalid(IN_DOUBT_EXPECTED);
}

function rejection(message: unknown): Answer {
  return typeof message === "string" ? { type: "reject", message } : { type: "reject" };
}

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

function invalid(expected: string): PlanManagerError {
  return new PlanManagerError("invalid_resume", `planMiddleware: unreadable answer; ${expected}`, {
    path: "resume",
  });
}

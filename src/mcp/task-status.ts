/**
 * A plan's status as an MCP task's (docs/decisions/0048-plans-as-mcp-tasks.md): the task is the plan,
 * its id the plan id, and its status read from the plan's status, never stored beside it.
 */
import type { ExternalOffer, InterruptPayload } from "../plan/schema/interrupts.js";
import { offersOf } from "../plan/external-offers.js";
import type { PlanStatus } from "./status.js";

export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled";

/** What `tasks/get` shows of a plan: its task status and, while it waits on someone, the question. */
export interface PlanTask {
  status: TaskStatus;
  statusMessage?: string;
}

const ENDED: Readonly<Record<string, TaskStatus>> = {
  completed: "completed",
  partial: "completed",
  failed: "failed",
  stopped: "cancelled",
  aborted: "cancelled",
};

/** Statuses of a plan whose run waits for an answer: while a run goes on, the status says `running`. */
const WAITING: ReadonlySet<string> = new Set(["awaiting_human", "awaiting_review"]);

/**
 * A question or an external step the plan waits on is `input_required` (answered with plan_answer,
 * or plan_next / plan_submit); an end is `completed`, `failed` or `cancelled`; anything else, a run
 * going on or about to, is `working`.
 */
export function taskOf(status: Pick<PlanStatus, "status" | "question">): PlanTask {
  if (status.question) return { status: "input_required", statusMessage: questionText(status.question) };
  // A plan listed (no question at hand) that waits on someone.
  if (WAITING.has(status.status)) return { status: "input_required" };
  return { status: ENDED[status.status] ?? "working" };
}

/** The question as one line a client can show its user. */
export function questionText(question: InterruptPayload): string {
  switch (question.kind) {
    case "external_step":
      return externalText(offersOf(question));
    case "human_step":
      return `step "${question.context.step.id}" needs a person: ${question.context.step.goal} (plan_answer)`;
    default:
      return `${question.kind.replaceAll("_", " ")}: ${question.reason} (plan_answer)`;
  }
}

/** The external steps offered, each with its instructions: one, or several to do in any order. */
function externalText(offers: readonly ExternalOffer[]): string {
  if (offers.length === 1)
    return `external step "${offers[0]!.step.id}" is yours to do (plan_next, then plan_submit): ${offers[0]!.step.instructions}`;
  const each = offers.map((o) => `"${o.step.id}": ${o.step.instructions}`).join("; ");
  return `${offers.length} external steps are yours to do, in any order (plan_next, then plan_submit each): ${each}`;
}

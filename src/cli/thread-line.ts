/** One line per thread for `threads`: where it stands, and for failures why and whether it can go on. */
import type { PlanManagerStateType } from "../runtime/state.js";
import { statusLabel } from "../views/quality-view.js";

type LineState = Partial<Pick<PlanManagerStateType, "status" | "plan" | "steps" | "outcome" | "pendingHuman">>;

/**
 * The step a thread is on: running, waiting for a person, or the one it failed at. `askedAbout` is the step of the
 * question the thread waits on: an agent's thread (planMiddleware) keeps its question in the interrupt, not in state.
 */
export function currentStep(state: LineState, askedAbout?: string): string {
  const running = state.plan?.steps.find((s) => state.steps?.[s.id]?.status === "running");
  return running?.id ?? state.pendingHuman?.stepId ?? askedAbout ?? state.outcome?.failedStep ?? "-";
}

/** When a step last finished (the thread's last progress), or undefined. */
export function lastProgress(state: LineState): string | undefined {
  const ends = Object.values(state.steps ?? {})
    .map((s) => s.endedAt)
    .filter((t): t is string => typeof t === "string")
    .sort();
  return ends.at(-1);
}

function ago(iso: string | undefined, now: number): string {
  if (!iso) return "-";
  const seconds = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  return `${iso} (${seconds}s ago)`;
}

const quote = (text: string) => JSON.stringify(text);

export function threadLine(threadId: string, state: LineState, now: number, askedAbout?: string): string {
  const parts = [
    threadId,
    state.status ? statusLabel(state.status, state.outcome) : "not started",
    `step=${currentStep(state, askedAbout)}`,
    `plan=v${state.plan?.version ?? 0}`,
    `progress=${ago(lastProgress(state), now)}`,
  ];
  const o = state.outcome;
  if (o && (state.status === "failed" || state.status === "aborted" || state.status === "stopped")) {
    if (o.failedStep) parts.push(`failedStep=${o.failedStep}`);
    if (o.failureReason) parts.push(`failureReason=${o.failureReason}`);
    if (o.message) parts.push(`message=${quote(o.message)}`);
    parts.push(`recoverable=${o.recoverable ?? false}`);
  }
  return parts.join("  ");
}

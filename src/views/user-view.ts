/**
 * The user's view: plain lines per step, no retries, fallbacks or internals
 * (e.g. `✓ Checking credit history`).
 */
import type { PendingOf, PlanManagerStateType } from "../runtime/state.js";
import { compensationCounts, type CompensationCounts } from "./compensations.js";
import { inDoubtCounts, stillInDoubt, type InDoubtCounts } from "./effects.js";
import type { StepRun } from "../plan/schema/run.js";
import { isFinished } from "../plan/ready.js";
import { printable } from "./printable.js";
import { statusLabel, type ViewOutcome } from "./quality-view.js";

/** What the view reads; `outcome` and `pendingHuman` are optional, so an agent's plan state (planMiddleware) fits. */
type ViewState = Pick<PlanManagerStateType, "plan" | "steps" | "status"> &
  Partial<Pick<PlanManagerStateType, "pendingHuman" | "compensations" | "decisions">> & {
    outcome?: ViewOutcome | undefined;
  };

/**
 * One step's line. `inDoubt`: its side-effecting call's outcome is unknown (a person is asked, or the run
 * ended before anyone answered): it may well have happened, so it is not shown as failed.
 */
export function userLine(
  text: string,
  run: StepRun | undefined,
  waitingOnPerson = false,
  inDoubt = false,
): string | undefined {
  const goal = printable(text);
  if (inDoubt && run?.status === "failed")
    return `? ${goal} (outcome unknown${waitingOnPerson ? ": waiting for a person to say whether it happened" : ""})`;
  switch (run?.status) {
    case "succeeded":
      return run.doneBy === "person" ? `✓ ${goal} (done by a person)` : `✓ ${goal}`;
    case "running":
      return waitingOnPerson ? `… ${goal} (waiting for a person)` : `… ${goal}`;
    case "failed":
      return `✗ ${goal}`;
    case "skipped":
      return run.skipReason === "when" || run.skipReason === "replaced" ? undefined : `– ${goal} (skipped)`;
    default:
      return undefined;
  }
}

/** The user view of a run: one plain line per step, no retries or internals. */
export function userView(state: ViewState): string[] {
  const lines: string[] = [];
  // A stopped run keeps its question for the resume, but nobody is asked until then.
  const asking = state.status === "awaiting_human" || state.status === "awaiting_review";
  const doubted = stillInDoubt(state.decisions);
  for (const step of runOrder(state.plan?.steps ?? [])) {
    // The graph's output omits internal channels: a running step while the run awaits a person is waiting on one.
    const waiting =
      asking &&
      (state.pendingHuman?.stepId === step.id ||
        state.steps[step.id]?.status === "running" ||
        (doubted.has(step.id) && state.pendingHuman === undefined));
    const line = userLine(step.goal, state.steps[step.id], waiting, doubted.has(step.id));
    if (line) lines.push(line);
  }
  const running = (state.plan?.steps ?? []).filter(
    (s) => state.steps[s.id]?.status === "running" && !s.human && !s.external,
  );
  if (running.length > 1) lines.push(`Running together: ${running.map((s) => s.goal).join("; ")}.`);
  const horizon = lookingAhead(state);
  if (horizon) lines.push(horizon);
  const abandoned = compensationCounts(state.compensations);
  if (abandoned) lines.push(undoneLine(abandoned));
  const settled = settledLine(inDoubtCounts(state.decisions), doubted.size);
  if (settled) lines.push(settled);
  if (state.status === "completed")
    // A degraded result says so (docs/decisions/0040-plan-quality-gate.md): "Completed (degraded: 1 fallback used)."
    lines.push(state.outcome?.quality?.degraded ? `C${statusLabel("completed", state.outcome).slice(1)}.` : "Done.");
  else if (state.status === "partial") {
    const undone = (state.outcome?.missing ?? []).map((m) => m.goal);
    lines.push(`Partly done. Not done: ${printable(undone.join("; ")) || "see the outcome"}.`);
  } else if (state.status === "failed" || state.status === "aborted")
    lines.push(`Stopped: ${printable(state.outcome?.summary ?? state.status)}`);
  else if (state.status === "stopped") lines.push(`Stopped by an operator; it can be resumed.`);
  else if (state.pendingHuman?.kind === "external_step") lines.push(externalLine(state.pendingHuman));
  else if (state.status === "awaiting_human" || state.status === "awaiting_review")
    lines.push("Waiting for a person to review.");
  return lines;
}

/**
 * How the side effects whose outcome was unknown were settled (docs/decisions/0038-effect-journal.md); `open`:
 * the steps whose call is still in doubt.
 */
function settledLine(c: InDoubtCounts, open: number): string | undefined {
  const parts = [
    c.verified ? `${c.verified} verified by a probe` : "",
    c.notHappened ? `${c.notHappened} found not done by a probe` : "",
    c.recalled ? `${c.recalled} made again under the same key` : "",
    c.happened ? `${c.happened} a person said happened` : "",
    c.retried ? `${c.retried} made again on a person's say-so` : "",
    open ? `${open} still unknown` : "",
  ].filter(Boolean);
  return parts.length > 0 ? `Side effects whose outcome was unknown: ${parts.join(", ")}.` : undefined;
}

/** What became of the side effects the run abandoned (docs/decisions/0039-compensation.md). */
function undoneLine(c: CompensationCounts): string {
  const parts = [
    c.done ? `${c.done} undone` : "",
    c.pending ? `${c.pending} being undone` : "",
    c.failed ? `${c.failed} could not be undone` : "",
    c.waived ? `${c.waived} left in place by a person` : "",
  ].filter(Boolean);
  return `Abandoned side effects: ${parts.join(", ")}.`;
}

/**
 * Steps in the order they can run: plan order, except that a step comes after the steps it
 * depends on (a replan may add a replacement after the steps that now depend on it).
 */
function runOrder<S extends { id: string; dependsOn?: string[] | undefined }>(steps: readonly S[]): S[] {
  const byId = new Map(steps.map((s) => [s.id, s]));
  const placed = new Set<string>();
  const order: S[] = [];
  const place = (step: S, path: ReadonlySet<string>): void => {
    if (placed.has(step.id) || path.has(step.id)) return;
    const inner = new Set(path).add(step.id);
    for (const dep of step.dependsOn ?? []) {
      const before = byId.get(dep);
      if (before) place(before, inner);
    }
    placed.add(step.id);
    order.push(step);
  };
  for (const step of steps) place(step, new Set());
  return order;
}

/** A rolling-horizon plan whose planned steps have all finished is being extended. */
function lookingAhead(state: ViewState): string | undefined {
  const plan = state.plan;
  if (plan?.complete !== false || state.status !== "running") return undefined;
  const finished = plan.steps.filter((s) => isFinished(state.steps[s.id])).length;
  if (finished < plan.steps.length) return undefined;
  return `${finished} of ${plan.steps.length} planned steps done; planning the next steps`;
}

/** What the calling agent is waited on for: its one step, or every step offered at once. */
function externalLine(question: PendingOf<"external_step">): string {
  const offered = question.context.offered ?? [];
  if (offered.length < 2) return "Waiting for the calling agent to do a step.";
  const ids = offered.map((o) => o.step.id).join(", ");
  return `Waiting for the calling agent to do ${offered.length} steps: ${printable(ids)}.`;
}

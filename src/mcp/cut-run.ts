/**
 * What `plan_status` shows of a run no live process holds: its server was closed or killed mid-step
 * (docs/decisions/0037-planning-service-over-mcp.md, "Runs outlive their server"). The checkpoint
 * alone shows such a run before its attempt — a step `pending` with no attempt — because an attempt
 * is checkpointed when it ends; what was in flight is read from the effect journal (a side-effecting
 * call's intent: its attempt and time, its outcome unknown) and, for the other calls, from the steps
 * the checkpoint's next executor visit starts (their next attempt, from the checkpoint's time).
 */
import type { StateSnapshot } from "@langchain/langgraph";
import type { JournalEntry } from "../storage/journal.js";
import { trustedValues } from "../plan/facts.js";
import { selectReady } from "../plan/ready.js";
import type { Fact, StepRun } from "../plan/schema/run.js";
import type { Plan } from "../plan/schema/plan.js";
import type { PlanStatus } from "./status.js";

/** A step's attempt in flight when its run's server went. */
export interface InFlight {
  attempts: number;
  started_at: string;
  /** A side-effecting call was made and never answered: the run that takes the plan up settles it first. */
  in_doubt?: true;
}

export const cutRunMessage = (planId: string): string =>
  `no live server runs plan "${planId}": the process that ran it ended mid-step; ` +
  "a langgraph-replan mcp server started on this database takes it up (or call plan_resume)";

/** The attempts in flight of a run cut mid-step, by step id, from its latest checkpoint and the journal's open intents. */
export function inFlightOf(snapshot: StateSnapshot, unsettled: readonly JournalEntry[]): Map<string, InFlight> {
  const values = (snapshot.values ?? {}) as {
    plan?: Plan;
    steps?: Record<string, StepRun>;
    facts?: Record<string, Fact>;
  };
  const found = new Map<string, InFlight>();
  const plan = values.plan;
  if (!plan) return found;
  const runs = values.steps ?? {};
  const open = (id: string) => ["pending", "running", undefined].includes(runs[id]?.status);
  const planned = new Set(plan.steps.map((s) => s.id));
  for (const entry of unsettled) {
    // An intent older than the step's recorded attempts was settled by a later one.
    if (!planned.has(entry.stepId) || !open(entry.stepId) || entry.attempt < (runs[entry.stepId]?.attempts ?? 0))
      continue;
    found.set(entry.stepId, { attempts: entry.attempt, started_at: entry.at, in_doubt: true });
  }
  for (const step of plan.steps) {
    const run = runs[step.id];
    if (run?.status === "running" && run.startedAt && !found.has(step.id))
      found.set(step.id, { attempts: run.attempts, started_at: run.startedAt });
  }
  if (!snapshot.next.includes("executor") || !snapshot.createdAt) return found;
  // The executor visit the checkpoint leads to starts the ready steps (a person's or the agent's
  // step asks instead of calling): as far as the checkpoint can tell, those were in flight.
  const ready = selectReady(plan, runs, trustedValues(values.facts ?? {}));
  if (ready.kind !== "ready") return found;
  for (const step of ready.steps)
    if (!found.has(step.id) && !step.human && !step.external)
      found.set(step.id, { attempts: (runs[step.id]?.attempts ?? 0) + 1, started_at: snapshot.createdAt });
  return found;
}

/** A create whose process ended after it took the plan's thread and before its first checkpoint: nothing to carry on from. */
export const neverStartedMessage = (planId: string): string =>
  `plan "${planId}" was never started: the process that created it ended before its first checkpoint, ` +
  "and no server takes it up; call plan_create again with the same idempotency_key and request to start it " +
  "(a plan made without a key: plan_delete it and create it again)";

/** A run that threw in this server: take-up leaves it to the caller (what it threw is in `error`). */
export const threwHereMessage = (planId: string): string =>
  `plan "${planId}": its run threw in this server (see error) and is not taken up again; ` +
  "call plan_resume to retry it";

/** A plan at a static breakpoint of its graph (`interruptBefore` / `interruptAfter`): it waits there. */
export const breakpointMessage = (planId: string): string =>
  `plan "${planId}" waits at a breakpoint of its graph (interruptBefore / interruptAfter): call plan_resume to carry it on`;

/**
 * The status of a run no live server holds: `server.live` false, a message (the cut run's unless
 * another is given), and its attempts in flight.
 */
export function cutRunStatus(
  status: PlanStatus,
  inFlight: ReadonlyMap<string, InFlight>,
  message: string = cutRunMessage(status.plan_id),
): PlanStatus {
  const steps = status.steps.map((step) => {
    const attempt = inFlight.get(step.id);
    return attempt ? { ...step, status: "running", ...attempt } : step;
  });
  const starts = [...inFlight.values()].map((a) => a.started_at);
  const first = [status.timing.started_at, ...starts].filter((t): t is string => t !== null).sort()[0] ?? null;
  return {
    ...status,
    steps,
    timing: { ...status.timing, started_at: first },
    server: { live: false },
    message,
  };
}

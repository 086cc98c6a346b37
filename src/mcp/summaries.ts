/**
 * What a status row holds (storage/status-store.ts) and the plain readings of a checkpoint the
 * service's parts share: its status as a caller sees it, its question, and the error of an unknown plan.
 */
import type { StateSnapshot } from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";
import type { InterruptPayload } from "../plan/schema/interrupts.js";
import { statusCore, type StatusCore, type StatusValues } from "./status.js";

/** The checkpoint id of the status row a create writes before its run has written one. */
export const NO_CHECKPOINT = "";
export const FINISHED = new Set(["completed", "partial", "failed", "aborted"]);

/** What a status row holds: the status of one checkpoint, and when that checkpoint was written. */
export interface Summary {
  core: StatusCore;
  createdAt?: string;
  /** The request a create made the plan for (`requestOf`), until its first checkpoint holds it. */
  request?: string;
}

export const noPlan = (planId: string) =>
  new PlanManagerError("invalid_input", `no plan "${planId}" (plan ids come from plan_create or plan_list)`, {
    path: "plan_id",
  });

/** The status of a plan whose create has started its run, before the run's first checkpoint. */
export function startingCore(goal: string): StatusCore {
  return {
    goal,
    stored: "planning",
    plan_version: null,
    steps: [],
    progress: { done: 0, total: 0 },
    timing: { started_at: null, last_progress_at: null },
    usage: { cost: 0, replan_cost: 0, input_tokens: 0, output_tokens: 0 },
  };
}

/** Where a run starts from an existing checkpoint (an answer, a resume): that checkpoint and its status. */
export function startedFrom(snapshot: StateSnapshot): { checkpointId: string; summary: Summary } | undefined {
  const checkpointId = snapshot.config.configurable?.checkpoint_id;
  return typeof checkpointId === "string" ? { checkpointId, summary: summaryOf(snapshot) } : undefined;
}

/** The row written as a run starts: the checkpoint's status, with a run going on that it does not show yet. */
export function runningFrom(summary: Summary): Summary {
  return { ...summary, core: { ...summary.core, running: true } };
}

export function summaryOf(snapshot: StateSnapshot): Summary {
  return { core: statusCore(snapshot), ...(snapshot.createdAt ? { createdAt: snapshot.createdAt } : {}) };
}

export const storedSummary = (text: string): Summary => JSON.parse(text) as Summary;

export function pendingOf(snapshot: StateSnapshot): InterruptPayload | undefined {
  return snapshot.tasks.flatMap((t) => t.interrupts ?? [])[0]?.value as InterruptPayload | undefined;
}

/** The status a caller sees: "running" while this process drives the run, else the checkpoint's. */
export function statusOf(snapshot: StateSnapshot | string, running: boolean): string {
  const status =
    typeof snapshot === "string" ? snapshot : ((snapshot.values as StatusValues | undefined)?.status ?? "planning");
  return running && !FINISHED.has(status) ? "running" : status;
}

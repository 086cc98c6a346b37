/**
 * A driver's say over a run it holds (the workers: an operator's stop, the end of a job's slice),
 * read by the executor at each visit from memory — so the run is never paused just to ask
 * (docs/decisions/0010-workers-on-postgres.md). Whatever is asked is taken at the next step
 * boundary with no tool call in flight: the executor starts nothing new, waits for the calls it
 * has started, and at the next visit with none in flight either writes the stop (the route sends
 * it to finalize) or ends the run there by throwing `RunPaused` (the checkpoint the run stops at
 * holds every call it made).
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { StopRequest } from "../policy/ladder/stop.js";
import type { PlanManagerUpdate } from "./state.js";

export type { StopRequest };

/** What a driver asks for: a stop (the run ends `stopped`), or a pause (the run ends where it stands). */
export type RunRequest = { kind: "stop"; stop: StopRequest } | { kind: "pause" };

export interface RunControl {
  /** What the driver wants now, if anything. Called at every executor visit: it must only read memory. */
  wanted(): RunRequest | undefined;
  /**
   * Called once, when the run holds its thread (in this process and, on SQLite or PostgreSQL, in the
   * database) and a resumed thread has been found still there: from then on no other run or delete
   * can take the thread until this run lets go. A driver that answers "running" only then tells the
   * truth (the MCP service does); what it throws (or rejects with) refuses the run before it writes
   * anything, so a check made here cannot race another process. Graphs that call it carry `CALLS_HELD`.
   */
  held?(): void | Promise<void>;
}

/** Set on a compiled graph whose top-level runs call `RunControl.held` (feature detection across package copies). */
export const CALLS_HELD = Symbol.for("langgraph-replan.run-control.held");

/** Where a run's control travels in `configurable` (the `__` prefix keeps it out of checkpoint metadata). */
export const RUN_CONTROL = "__langgraph_replan_run_control";

export function runControlOf(config: LangGraphRunnableConfig): RunControl | undefined {
  const found = config.configurable?.[RUN_CONTROL] as Partial<RunControl> | undefined;
  return typeof found?.wanted === "function" ? (found as RunControl) : undefined;
}

const PAUSED = "langgraph_replan_run_paused";

/**
 * What the run throws at the boundary where a pause was asked: the run ends there, its last
 * checkpoint holds every call it made, and the next run on the thread starts from it. A thrown
 * error (rather than an aborted signal) lets LangGraph close the run as it closes any failed one.
 */
export class RunPaused extends Error {
  readonly [PAUSED] = true;
  constructor() {
    super("the run was paused at a step boundary by its driver; run the thread again to carry on");
    this.name = "RunPaused";
  }
}

/** True for the error a paused run ends with (works across copies of this package). */
export function isRunPaused(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as Record<string, unknown>)[PAUSED] === true;
}

/** The executor's answer at a boundary where the driver wants something: the stop, or the pause. */
export function takeAtBoundary(request: RunRequest): PlanManagerUpdate {
  if (request.kind === "pause") throw new RunPaused();
  return { stop: request.stop };
}

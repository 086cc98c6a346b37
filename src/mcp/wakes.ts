/**
 * How `plan_wait` hears of a run another process drives (docs/decisions/0037-planning-service-over-mcp.md):
 * the process whose run ended or paused at a question announces the plan; every service listening
 * on the same database is woken for it. In one process the run's own promise wakes the wait and
 * nothing here is needed; on PostgreSQL `openPlanWakes` (langgraph-replan/worker) carries the
 * announcements with `LISTEN`/`NOTIFY`, and `createWorker` processes announce the threads they run
 * there too (docs/decisions/0074-workers-wake-plan-waits.md). SQLite has no such channel between processes.
 */
export interface PlanWakes {
  /** Says that the plan's run, driven by this process, has ended or paused (a question, a stop, a shutdown). */
  announce(planId: string): Promise<void>;
  /** Calls `wake` each time any process announces the plan; returns the function that stops it. */
  watch(planId: string, wake: () => void): () => void;
}

/**
 * A long goal (docs/architecture.md "Long goals"): migrating 40 tables of an orders database, planned 5 steps at a time
 * (a rolling horizon). Table 18's legacy export API is down — a broken assumption, repaired by a
 * local replan that restores that table from the nightly snapshot — and table 27 is slow: it runs
 * past twice its estimate, so it is reported as stalled while it runs.
 */
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { AssumptionBrokenError, staticPlanner, type PlanDraft, type Planner } from "langgraph-replan";

export const MIGRATION_TABLES = 40;
/** Steps per draft: the first plan and each extension. */
export const MIGRATION_HORIZON = 5;
/** The table whose legacy export API is down. */
export const BROKEN_TABLE = 18;
/** The table that takes far longer than its estimate. */
export const SLOW_TABLE = 27;

const id = (n: number) => `t${String(n).padStart(2, "0")}`;

function migrateStep(n: number): PlanDraft["steps"][number] {
  return {
    id: id(n),
    goal: `Migrating table ${n} of ${MIGRATION_TABLES}`,
    tool: "migrate_table",
    args: { table: n },
    produces: [`rows_${id(n)}`],
    estimateMs: 100,
    ...(n > 1 ? { dependsOn: [id(n - 1)] } : {}),
    ...(n === BROKEN_TABLE ? { assumptions: ["legacy_api_up"] } : {}),
  };
}

/** The next batch after `done` steps: at most 5, and complete once table 40 is in. */
function batch(from: number, last = Math.min(MIGRATION_TABLES, from + MIGRATION_HORIZON - 1)): PlanDraft {
  const steps = Array.from({ length: last - from + 1 }, (_, i) => migrateStep(from + i));
  const draft: PlanDraft = { steps, complete: last === MIGRATION_TABLES };
  if (from <= BROKEN_TABLE && BROKEN_TABLE <= last)
    draft.assumptions = [{ id: "legacy_api_up", statement: "the legacy export API of table 18 answers" }];
  return draft;
}

/** Batches of 5, 5, …, then 4 and a last one of 1 (the cut-over table is planned on its own). */
export function migrationPlanner(): Planner {
  return staticPlanner({
    plan: batch(1),
    extend: (req) => {
      const planned = Math.max(...req.plan.steps.map((s) => Number(s.id.slice(1))));
      if (planned === 35) return batch(36, 39);
      return batch(planned + 1);
    },
    // Only the table that rested on the broken assumption changes; its dependents come back as they were.
    replan: (req) => ({
      steps: req.affectedSteps.map((s) =>
        s.assumptions?.includes("legacy_api_up")
          ? { ...s, goal: `${s.goal} (from the nightly snapshot)`, tool: "restore_snapshot", assumptions: [] }
          : s,
      ),
    }),
  });
}

export interface MigrationClock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
  /** Moves time on by `ms`, waking sleepers whose time has come. */
  advance(ms: number): Promise<void>;
}

/** A clock that only moves when told to: a slow tool advances it, and the stall watch wakes. */
export function manualClock(start = Date.parse("2026-01-01T00:00:00Z")): MigrationClock {
  let now = start;
  let sleepers: { at: number; wake: () => void }[] = [];
  return {
    now: () => now,
    sleep: (ms, signal) =>
      new Promise<void>((resolve) => {
        if (ms <= 0 || signal?.aborted) return resolve();
        const sleeper = { at: now + ms, wake: resolve };
        sleepers.push(sleeper);
        signal?.addEventListener("abort", () => {
          sleepers = sleepers.filter((s) => s !== sleeper);
          resolve();
        });
      }),
    advance: async (ms) => {
      now += ms;
      const due = sleepers.filter((s) => s.at <= now);
      sleepers = sleepers.filter((s) => s.at > now);
      for (const s of due) s.wake();
      // Let the woken sleepers run before the caller goes on.
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

export function createMigrationTools(clock: MigrationClock) {
  const calls: string[] = [];
  const migrateTable = tool(
    async ({ table }) => {
      calls.push(`migrate ${table}`);
      if (table === BROKEN_TABLE)
        throw new AssumptionBrokenError("legacy_api_up", "the legacy export API answers 410 Gone");
      await clock.advance(table === SLOW_TABLE ? 450 : 40);
      return { [`rows_${id(table)}`]: 1000 + table };
    },
    {
      name: "migrate_table",
      description: "Copy one table from the legacy database through its export API.",
      schema: z.object({ table: z.number() }),
    },
  );
  const restoreSnapshot = tool(
    async ({ table }) => {
      calls.push(`restore ${table}`);
      await clock.advance(60);
      return { [`rows_${id(table)}`]: 1000 + table };
    },
    {
      name: "restore_snapshot",
      description: "Restore one table from the nightly snapshot instead of the export API.",
      schema: z.object({ table: z.number() }),
    },
  );
  return { tools: [migrateTable, restoreSnapshot], calls };
}

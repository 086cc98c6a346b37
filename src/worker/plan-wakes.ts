/**
 * Plan wakes on PostgreSQL (mcp/wakes.ts): one connection per service that `LISTEN`s on one
 * channel and sends the announcements on it (`pg_notify`, the plan id as payload), so a
 * `plan_wait` in one process returns when a run in another ends or needs an answer, with no poll.
 * `createWorker` processes announce the threads they run on the same channel
 * (docs/decisions/0074-workers-wake-plan-waits.md).
 * PostgreSQL delivers a notification to every session of the database listening on the channel,
 * its sender's included; a waiter re-reads the plan's checkpoint on each and waits on while the
 * run is still going. A dropped connection is reported to `onError`; waits then last until their
 * timeout.
 */
import { Client } from "pg";

/** The `NOTIFY` channel plans are announced on; the payload is the plan id. */
export const PLAN_CHANNEL = "langgraph_replan_plan";

/**
 * Wakes carried between MCP servers by PostgreSQL `NOTIFY`: one server announces a plan's change, the others'
 * waits return.
 */
export interface PgPlanWakes {
  announce(planId: string): Promise<void>;
  watch(planId: string, wake: () => void): () => void;
  close(): Promise<void>;
}

/** Opens PostgreSQL wakes for a `PlanService`, so `plan_wait` returns when a run another server drives changes. */
export async function openPlanWakes(
  connectionString: string,
  onError: (error: unknown) => void = () => undefined,
): Promise<PgPlanWakes> {
  const watchers = new Map<string, Set<() => void>>();
  const client = new Client({ connectionString });
  client.on("error", onError);
  client.on("notification", (message) => {
    if (message.channel !== PLAN_CHANNEL) return;
    for (const wake of [...(watchers.get(message.payload ?? "") ?? [])]) wake();
  });
  await client.connect();
  await client.query(`LISTEN ${PLAN_CHANNEL}`);
  return {
    announce: async (planId) => {
      await client.query("SELECT pg_notify($1, $2)", [PLAN_CHANNEL, planId]).catch(onError);
    },
    watch: (planId, wake) => {
      const set = watchers.get(planId) ?? new Set();
      set.add(wake);
      watchers.set(planId, set);
      return () => {
        set.delete(wake);
        if (set.size === 0) watchers.delete(planId);
      };
    },
    close: () => client.end().catch(onError),
  };
}

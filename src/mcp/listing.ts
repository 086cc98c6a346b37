/** `plan_list` and `plan_report`: plans a page at a time from the saver's threads, and one plan's report. */
import { isPlanManagerError, PlanManagerError } from "../errors.js";
import { cursorAfter, listThreads } from "../graph/retention.js";
import { planMetrics } from "../views/metrics.js";
import { statusLabel } from "../views/quality-view.js";
import { userView } from "../views/user-view.js";
import type { PlanThreads } from "./plan-threads.js";
import { readStatus } from "./reads.js";
import type { ListInput, Listed } from "./service-types.js";
import { statusOf, storedSummary, summaryOf } from "./summaries.js";

/** Plans newest first, a page at a time; `status` keeps only those; archived ones only when asked. */
export async function listPlans(threads: PlanThreads, input: ListInput = {}): Promise<Listed> {
  const limit = input.limit ?? 20;
  if (!Number.isInteger(limit) || limit < 1 || limit > 200)
    throw new PlanManagerError("invalid_input", `limit must be an integer from 1 to 200, got ${limit}`, {
      path: "limit",
    });
  const wanted = input.status && input.status.length > 0 ? new Set(input.status) : undefined;
  const plans: Listed["plans"] = [];
  let cursor = input.cursor;
  for (;;) {
    const page = await listThreads(threads.saver, {
      limit,
      archived: input.archived ?? "exclude",
      ...(cursor ? { cursor } : {}),
    }).catch((error: unknown) => {
      // A bad cursor or filter is the caller's input here, not the library's options.
      if (isPlanManagerError(error) && error.code === "invalid_options")
        throw new PlanManagerError("invalid_input", error.message, error.path ? { path: error.path } : {});
      throw error;
    });
    const rows = await threads.statusRows(page.threads.map((t) => t.threadId));
    for (const [i, thread] of page.threads.entries()) {
      const graphName = threads.servedGraphOf(thread.threadId);
      if (!graphName) continue;
      // The thread's status row when it describes the checkpoint listed, else that checkpoint read.
      const row = rows.get(thread.threadId);
      const stored = row?.checkpointId === thread.checkpointId ? storedSummary(row.summary) : undefined;
      const summary = stored ?? summaryOf(await threads.snapshot(thread.threadId));
      const status = statusOf(summary.core.stored, threads.runs.has(thread.threadId) || summary.core.running === true);
      if (wanted && !wanted.has(status)) continue;
      plans.push({
        plan_id: thread.threadId,
        graph: graphName,
        goal: summary.core.goal,
        status,
        archived: thread.archived,
        ...(summary.createdAt ? { updated_at: summary.createdAt } : {}),
      });
      if (plans.length === limit) {
        const more = i < page.threads.length - 1 || page.nextCursor !== undefined;
        // The cursor after this plan: the next page starts right after it.
        return more ? { plans, next_cursor: cursorAfter(thread) } : { plans };
      }
    }
    if (page.nextCursor === undefined) return { plans };
    cursor = page.nextCursor;
  }
}

/** The plan's report: its metrics and lines as JSON, or the same as Markdown. */
export async function planReport(
  threads: PlanThreads,
  planId: string,
  format: "json" | "markdown" = "json",
): Promise<{ format: string; report: unknown }> {
  const status = await readStatus(threads, planId);
  const snapshot = await threads.snapshot(planId);
  const values = snapshot.values as Parameters<typeof planMetrics>[0] & Parameters<typeof userView>[0];
  const metrics = planMetrics({ ...values, usage: values.usage ?? [] });
  const lines = userView(values);
  if (format === "json") return { format, report: { status, metrics, lines } };
  const md = [
    `# ${status.goal}`,
    "",
    `Status: **${statusLabel(status.status, status.outcome)}**${status.outcome?.summary ? ` — ${status.outcome.summary}` : ""}`,
    "",
    "## Steps",
    "",
    ...lines.map((line) => `- ${line}`),
    "",
    "## Metrics",
    "",
    ...Object.entries(metrics).map(([k, v]) => `- ${k}: ${JSON.stringify(v)}`),
  ].join("\n");
  return { format, report: md };
}

/**
 * The long-goal demo (`npm run demo -- --migration`): 40 tables migrated on a rolling horizon
 * of 5 steps, with a broken assumption repaired by a local replan and a stalled table reported
 * while it runs. Offline, in memory, on a clock the tools move (so the stall is deterministic).
 */
import { MemorySaver } from "@langchain/langgraph";
import { createPlanManager, type PlanEvent } from "langgraph-replan";
import { decisionLine, planMetrics } from "langgraph-replan/views";
import { createMigrationTools, manualClock, migrationPlanner } from "./workflow.js";

export async function runMigrationDemo(): Promise<void> {
  const clock = manualClock();
  const { tools } = createMigrationTools(clock);
  const graph = createPlanManager({ tools, planner: migrationPlanner(), clock }).compile({
    checkpointer: new MemorySaver(),
  });
  const config = { configurable: { thread_id: "migration-demo" } };
  console.log("langgraph-replan demo — migrating 40 tables, planned 5 steps at a time\n");
  const stream = await graph.stream({ goal: "Migrate the orders database", context: {} } as never, {
    ...config,
    streamMode: "custom",
  });
  let done = 0;
  for await (const event of stream as AsyncIterable<PlanEvent>) {
    if (event.type === "step_finished" && event.status === "succeeded") done += 1;
    const line = describe(event, done);
    if (line) console.log(line);
  }
  const state = (await graph.getState(config)).values;
  const metrics = planMetrics(state as never);
  console.log("\nDecisions:");
  for (const d of state.decisions) console.log(`  #${d.seq} ${d.stepId ?? "-"}: ${decisionLine(d)}`);
  console.log(
    `\nPlan v${state.plan.version}: ${state.plan.steps.length} steps, ${metrics.extensions} extensions, ` +
      `${metrics.replans} replan, ${metrics.stalls} stalled step`,
  );
  console.log(`Final status: ${state.status} — ${state.outcome?.summary ?? ""}`);
}

function describe(event: PlanEvent, done: number): string | undefined {
  switch (event.type) {
    case "plan":
      return `plan v1: ${event.steps.length} steps (more to be planned)`;
    case "replan":
      return event.record.scope === "extend"
        ? `✓ ${done} steps done · plan v${event.record.toVersion}: +${event.record.newSteps.length} steps`
        : `↺ plan v${event.record.toVersion}: ${event.record.scope} replan (${event.record.brokenAssumption ?? ""})`;
    case "step_stalled":
      return `⚠ ${event.goal}: still running after ${event.runningMs} ms (estimate ${event.estimateMs} ms)`;
    default:
      return undefined;
  }
}

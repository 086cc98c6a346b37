/** The 40-step data migration (examples/migration): a rolling horizon, one local replan, one stalled step. */
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { createMigrationTools, manualClock, migrationPlanner } from "../../examples/migration/workflow.js";
import { createPlanManager } from "../../src/graph/create-plan-manager.js";
import { planMetrics } from "../../src/views/metrics.js";
import { operatorView } from "../../src/views/operator-view.js";
import type { Loose } from "../helpers/graph.js";

describe("a 40-step data migration planned 5 steps at a time", () => {
  it("completes with 8 extensions, one local replan and exact records", async () => {
    const clock = manualClock();
    const { tools, calls } = createMigrationTools(clock);
    const graph = createPlanManager({ tools, planner: migrationPlanner(), clock }).compile({
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "migration" } };
    const events: Loose[] = [];
    for await (const chunk of await graph.stream({ goal: "Migrate the orders database", context: {} } as never, {
      ...config,
      streamMode: "custom",
    }))
      events.push(chunk as Loose);
    const out = (await graph.getState(config)).values as Loose;

    expect(out.status).toBe("completed");
    expect(out.plan.steps).toHaveLength(40);
    expect(out.replans.map((r: Loose) => `${r.scope} v${r.fromVersion}→v${r.toVersion} +${r.newSteps.length}`)).toEqual(
      [
        "extend v1→v2 +5",
        "extend v2→v3 +5",
        "extend v3→v4 +5",
        "local v4→v5 +0",
        "extend v5→v6 +5",
        "extend v6→v7 +5",
        "extend v7→v8 +5",
        "extend v8→v9 +4",
        "extend v9→v10 +1",
      ],
    );
    expect(out.replans[3]).toMatchObject({
      brokenAssumption: "legacy_api_up",
      changedSteps: ["t18"],
      invalidatedSteps: [],
    });
    expect(out.decisions.map((d: Loose) => `${d.stepId} ${d.failureClass} → ${d.action} [${d.rule}]`)).toEqual([
      "t18 assumption_broken → replan_local [assumption.replan-local]",
    ]);
    expect(calls.filter((c) => c.startsWith("restore"))).toEqual(["restore 18"]);
    expect(calls).toHaveLength(41);
    const metrics = planMetrics(out as never);
    expect([metrics.extensions, metrics.replans, metrics.localReplans, metrics.stalls]).toEqual([8, 1, 1, 1]);
    // Table 27 is reported while it runs: the stall event comes before the step ends.
    const stalls = events.filter((e) => e.type === "step_stalled");
    expect(stalls).toEqual([
      {
        type: "step_stalled",
        stepId: "t27",
        goal: "Migrating table 27 of 40",
        attempt: 1,
        estimateMs: 100,
        runningMs: 450,
      },
    ]);
    const finished27 = events.findIndex((e) => e.type === "step_finished" && e.stepId === "t27");
    expect(events.indexOf(stalls[0]!)).toBeLessThan(finished27);
    expect(
      Object.entries(out.steps)
        .filter(([, r]) => (r as Loose).stalled)
        .map(([id]) => id),
    ).toEqual(["t27"]);
    expect(operatorView(out as never, { now: clock.now() }).at(-1)).toBe("stalls: t27 ran 4.5× its estimate");
    expect(out.progress).toEqual({ lastProgressAt: out.steps.t40.endedAt });
    expect(out.facts.rows_t40.value).toBe(1040);
    expect(events.filter((e) => e.type === "replan").length).toBe(9);
  });
});

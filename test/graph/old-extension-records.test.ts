/**
 * Threads written before extension records became compact (docs/decisions/0050-compact-extension-records.md)
 * still load: the views, the report and the history functions read them exactly as they did then,
 * and a run stopped at a review goes on, writing records of the new shape after the old ones.
 */
import { copyFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Command, MemorySaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { createMigrationTools, manualClock, migrationPlanner } from "../../examples/migration/workflow.js";
import { createPlanManager } from "../../src/graph/create-plan-manager.js";
import { planAtVersion, replanRecords } from "../../src/views/index.js";
import { rollingGraph } from "../fixtures/long-runs/rolling.js";
import { fixtureReadings } from "../fixtures/long-runs/readings.js";
import type { Loose } from "../helpers/graph.js";

const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/long-runs/${name}`, import.meta.url));
const expected = JSON.parse(readFileSync(fixture("main-records.views.json"), "utf8")) as Record<string, Loose>;

const savers: SqliteSaver[] = [];
afterEach(() => {
  for (const s of savers.splice(0)) s.db.close();
});

/** A copy of the fixture, so a test that goes on with a run never changes the committed file. */
function openCopy(): SqliteSaver {
  const path = join(tmpdir(), `old-records-${process.pid}-${savers.length}-${Date.now()}.sqlite`);
  copyFileSync(fixture("main-records.sqlite"), path);
  const saver = SqliteSaver.fromConnString(path);
  savers.push(saver);
  return saver;
}

describe("a thread written with the old extension records", () => {
  it("reads the same through the views, the report and the history of the finished migration", async () => {
    const clock = manualClock();
    const graph = createPlanManager({ tools: createMigrationTools(clock).tools, planner: migrationPlanner(), clock });
    const state = (
      await graph.compile({ checkpointer: openCopy() }).getState({ configurable: { thread_id: "migration" } })
    ).values as Loose;
    expect(state.replans.filter((r: Loose) => r.scope === "extend")).toHaveLength(8);
    expect(state.replans[0].preservedSteps).toEqual(["t01", "t02", "t03", "t04", "t05"]);
    const { now, ...readings } = expected.migration!;
    expect(fixtureReadings(state, now)).toEqual(readings);
  });

  it("reads the same of the rolling run stopped at a review", async () => {
    const clock = manualClock();
    const graph = rollingGraph(clock, openCopy());
    const state = (await graph.getState({ configurable: { thread_id: "rolling" } })).values as Loose;
    const { now, ...readings } = expected.rolling!;
    expect(fixtureReadings(state, now)).toEqual(readings);
  });

  it("goes on from the review to the end, and every version still rebuilds", async () => {
    const clock = manualClock();
    const graph = rollingGraph(clock, openCopy());
    const config = { configurable: { thread_id: "rolling" } };
    let out = (await graph.invoke(new Command({ resume: { action: "approve" } }), config)) as Loose;
    expect([out.status, out.plan.version, out.plan.steps.length]).toEqual(["awaiting_review", 4, 35]);
    out = (await graph.invoke(new Command({ resume: { action: "approve" } }), config)) as Loose;
    expect(out.status).toBe("completed");
    expect(Object.keys(out.facts)).toHaveLength(35);
    expect(out.replans.map((r: Loose) => `${r.scope} v${r.fromVersion}→v${r.toVersion} +${r.newSteps.length}`)).toEqual(
      ["extend v1→v2 +10", "extend v2→v3 +10", "extend v3→v4 +5"],
    );
    const ids = (v: number) => planAtVersion(out as never, v)!.steps.map((s) => s.id);
    const first = (n: number) => Array.from({ length: n }, (_, i) => `s${i + 1}`);
    expect([ids(1), ids(2), ids(3), ids(4)]).toEqual([first(10), first(20), first(30), first(35)]);
  });

  it("the last extension, written after the old records, is compact and reads whole", async () => {
    const clock = manualClock();
    const graph = rollingGraph(clock, openCopy());
    const config = { configurable: { thread_id: "rolling" } };
    for (let i = 0; i < 2; i++) await graph.invoke(new Command({ resume: { action: "approve" } }), config);
    const out = (await graph.getState(config)).values as Loose;
    expect(
      out.replans.map((r: Loose) => [r.kind, r.keptCount, r.preservedSteps?.length, r.facts.trusted.length]),
    ).toEqual([
      [undefined, undefined, 10, 10],
      [undefined, undefined, 20, 20],
      ["extend", 30, undefined, 10],
    ]);
    const ids = (n: number, from = 1) => Array.from({ length: n }, (_, i) => `s${i + from}`);
    expect(out.replans[2].facts.trusted).toEqual(ids(10, 21).map((id) => id.replace("s", "r")));
    const third = replanRecords(out as never)[2]!;
    expect([third.preservedSteps, third.facts.trusted]).toEqual([ids(30), ids(30).map((id) => id.replace("s", "r"))]);
    expect(out.planHistory.map((e: Loose) => [e.version, e.order?.length, e.keptCount])).toEqual([
      [2, 10, undefined],
      [3, 20, undefined],
      [4, undefined, 30],
    ]);
  });
});

describe("a thread written with compact records", () => {
  it("reads the same as the old records did: the migration run again today", async () => {
    const clock = manualClock();
    const graph = createPlanManager({ tools: createMigrationTools(clock).tools, planner: migrationPlanner(), clock });
    const compiled = graph.compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "migration" } };
    await compiled.invoke({ goal: "Migrate the orders database", context: {} } as never, config);
    const state = (await compiled.getState(config)).values as Loose;
    expect(state.replans.filter((r: Loose) => r.kind === "extend")).toHaveLength(8);
    expect(state.replans.some((r: Loose) => r.scope === "extend" && r.preservedSteps !== undefined)).toBe(false);
    const { now, ...readings } = expected.migration!;
    expect(fixtureReadings(state, now)).toEqual(readings);
  });

  it("reads the same as the old records did: the rolling run stopped at the same review", async () => {
    const clock = manualClock();
    const graph = rollingGraph(clock, new MemorySaver());
    const config = { configurable: { thread_id: "rolling" } };
    await graph.invoke({ goal: "a rolling goal" } as never, config);
    for (let i = 0; i < 2; i++) await graph.invoke(new Command({ resume: { action: "approve" } }), config);
    const state = (await graph.getState(config)).values as Loose;
    expect(state.replans.map((r: Loose) => r.keptCount)).toEqual([10, 20]);
    const { now, ...readings } = expected.rolling!;
    expect(fixtureReadings(state, now)).toEqual(readings);
  });
});

/**
 * The plan service's memory of recent creates and iteration links (src/mcp/expiring-map.ts): an
 * entry lives `ttlMs`, and there are never more than `maxEntries`.
 */
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { ExpiringMap } from "../../src/mcp/expiring-map.js";
import { PlanService } from "../../src/mcp/service.js";
import { createPlanManager, staticPlanner } from "../../src/index.js";
import { scriptedTool } from "../helpers/graph.js";

function clocked(ttlMs: number, maxEntries: number) {
  let now = 1_000;
  const map = new ExpiringMap<string, number>({ ttlMs, maxEntries, now: () => now });
  return { map, advance: (ms: number) => (now += ms) };
}

describe("ExpiringMap", () => {
  it("an entry lives ttlMs after it was set, then is gone", () => {
    const { map, advance } = clocked(600_000, 10);
    map.set("a", 1);
    advance(600_000);
    expect(map.get("a")).toBe(1);
    advance(1);
    expect([map.get("a"), map.has("a"), map.size]).toEqual([undefined, false, 0]);
  });

  it("setting an entry again starts its life again", () => {
    const { map, advance } = clocked(100, 10);
    map.set("a", 1);
    advance(80);
    map.set("a", 2);
    advance(80);
    expect(map.get("a")).toBe(2);
  });

  it("never holds more than maxEntries: the oldest go first", () => {
    const { map, advance } = clocked(600_000, 3);
    for (const [i, key] of ["a", "b", "c", "d", "e"].entries()) {
      map.set(key, i);
      advance(1);
    }
    expect(map.size).toBe(3);
    expect(["a", "b", "c", "d", "e"].map((k) => map.get(k))).toEqual([undefined, undefined, 2, 3, 4]);
  });

  it("a set drops every expired entry, so one plan_create per ten minutes keeps one entry", () => {
    const { map, advance } = clocked(600_000, 10_000);
    for (let i = 0; i < 1_000; i++) {
      map.set(`plan-${i}`, i);
      advance(600_001);
    }
    expect(map.size).toBe(1);
  });

  it("a clock that steps back does not expire an entry early", () => {
    const { map, advance } = clocked(100, 10);
    map.set("a", 1);
    advance(-50);
    expect(map.get("a")).toBe(1);
    advance(151);
    expect(map.get("a")).toBeUndefined();
  });

  it("refuses a nonsense bound", () => {
    expect(() => new ExpiringMap({ ttlMs: Number.NaN, maxEntries: 1, now: Date.now })).toThrow(RangeError);
    expect(() => new ExpiringMap({ ttlMs: 1, maxEntries: 0, now: Date.now })).toThrow(RangeError);
    expect(() => new ExpiringMap({ ttlMs: 1, maxEntries: 1.5, now: Date.now })).toThrow(RangeError);
  });
});

describe("PlanService's dedupe window", () => {
  it("is checked where it enters: NaN or a negative window is invalid_options naming the field", () => {
    for (const dedupeWindowMs of [Number.NaN, -1])
      expect(() => new PlanService({ graphs: { g: {} as never }, saver: {} as never, dedupeWindowMs })).toThrow(
        expect.objectContaining({ code: "invalid_options", path: "dedupeWindowMs" }),
      );
  });
});

describe("PlanService's iteration links", () => {
  it("parent_plan_id outlives the dedupe window: plan_status still names it 23 hours later, a new create is not a duplicate", async () => {
    let now = Date.UTC(2026, 0, 1);
    const saver = new MemorySaver();
    const tool = scriptedTool("t", [{ a: 1 }]);
    const plan = { steps: [{ id: "s", goal: "s", tool: "t" }] };
    const graph = createPlanManager({ tools: [tool], planner: staticPlanner({ plan }) }).compile({
      checkpointer: saver,
    });
    const service = new PlanService({ graphs: { w: graph as never }, saver, now: () => now });
    const parent = await service.create({ goal: "one" });
    await service.wait(parent.plan_id, 10);
    const child = await service.create({ goal: "two", parent_plan_id: parent.plan_id });
    await service.wait(child.plan_id, 10);
    const linked = async () => (await service.status(child.plan_id)).parent_plan_id;
    expect(await linked()).toBe(parent.plan_id);
    now += 11 * 60_000;
    expect(await linked()).toBe(parent.plan_id);
    // The dedupe window (10 minutes) has passed all the same: the same goal is a new plan.
    const again = await service.create({ goal: "two", parent_plan_id: parent.plan_id });
    expect(again.plan_id).not.toBe(child.plan_id);
    await service.wait(again.plan_id, 10);
    now += 23 * 3_600_000;
    expect(await linked()).toBe(parent.plan_id);
  });
});

import { describe, expect, it } from "vitest";
import { assignLanes, timeAxis } from "../../src/views/lanes.js";

describe("timeline lanes", () => {
  it("uses one lane per step running at the same time and reuses a lane once it is free", () => {
    const { lanes, placed } = assignLanes([
      { id: "d", start: 30, end: 40 },
      { id: "a", start: 0, end: 30 },
      { id: "b", start: 5, end: 20 },
      { id: "c", start: 10, end: 25 },
      { id: "e", start: 20, end: 22 },
    ]);
    expect(lanes).toBe(3);
    expect(placed.map((p) => `${p.id}:${p.lane}`)).toEqual(["a:0", "b:1", "c:2", "e:1", "d:0"]);
  });

  it("puts steps one after another in one lane", () => {
    expect(
      assignLanes([
        { id: "a", start: 0, end: 1 },
        { id: "b", start: 1, end: 2 },
      ]).lanes,
    ).toBe(1);
    expect(assignLanes([]).lanes).toBe(0);
  });
});

describe("timeAxis", () => {
  const span = (id: string, start: number, end: number) => ({ id, start, end });
  const isWait = (s: { id: string }) => s.id.startsWith("ask");

  it("is plain linear time when waits do not outlast the work", () => {
    const axis = timeAxis([span("a", 0, 100), span("ask", 100, 150), span("b", 150, 200)], isWait);
    expect([0, 100, 150, 200].map(axis.place)).toEqual([0, 0.5, 0.75, 1]);
    expect(axis.gaps).toEqual([]);
  });

  it("draws each long quiet stretch a quarter of the work's time, work beside a wait included", () => {
    // Work 0–100 and 1000–1100 (c runs beside the wait); quiet 100–1000 and 1100–5000.
    const spans = [span("a", 0, 100), span("ask", 100, 5000), span("c", 1000, 1100)];
    const axis = timeAxis(spans, isWait);
    expect([0, 100, 1000, 1100, 5000].map(axis.place)).toEqual([0, 0.25, 0.375, 0.625, 0.75].map((x) => x / 0.75));
    expect(axis.gaps.map((g) => [g.start, g.end])).toEqual([
      [100, 1000],
      [1100, 5000],
    ]);
    // Inside a gap, time still moves forward.
    expect(axis.place(550)).toBeGreaterThan(axis.place(100));
    expect(axis.place(550)).toBeLessThan(axis.place(1000));
  });

  it("nothing but waits, or one instant: linear, and never NaN", () => {
    const only = timeAxis([span("ask", 10, 10_000)], isWait);
    expect([10, 10_000].map(only.place)).toEqual([0, 1]);
    const instant = timeAxis([span("a", 5, 5)], isWait);
    expect(instant.place(5)).toBe(0);
  });
});

import { describe, expect, it } from "vitest";
import { assignLanes } from "../../src/views/lanes.js";

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

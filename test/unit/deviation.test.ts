import { describe, expect, it } from "vitest";
import { DeviationSchema, namedAssumption, type Deviation } from "../../src/policy/ladder/deviation.js";

const issues = (value: unknown) => {
  const parsed = DeviationSchema.safeParse(value);
  return parsed.success ? [] : parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.code}`);
};

describe("Deviation, a union keyed on kind", () => {
  it("each kind requires its own fields", () => {
    expect(issues({ kind: "assumption_broken", attempt: 1, message: "m" })).toEqual(["assumptionId: invalid_type"]);
    expect(issues({ kind: "side_effect_changed", attempt: 1, message: "m", committedKey: "k" })).toEqual([
      "proposedKey: invalid_type",
    ]);
    expect(issues({ kind: "precondition", attempt: 1, message: "m", missing: "x" })).toEqual(["missing: invalid_type"]);
    expect(issues({ kind: "stalled", attempt: 1, message: "m" })).toEqual(["kind: invalid_union"]);
  });

  it("accepts every kind with its fields, and keys a checkpoint of an earlier version may still hold", () => {
    expect(issues({ kind: "error", attempt: 2, message: "m", error: { name: "Error", message: "m" } })).toEqual([]);
    expect(
      issues({ kind: "precondition", attempt: 1, message: "m", missing: ["a"], expression: "x", facts: [] }),
    ).toEqual([]);
    expect(issues({ kind: "budget", attempt: 1, message: "m", assumptionIds: [] })).toEqual([]);
  });

  it("names the assumption a check found false, or the one an AssumptionBrokenError carries", () => {
    const check: Deviation = {
      kind: "assumption_broken",
      attempt: 1,
      message: "m",
      assumptionId: "a",
      assumptionIds: ["a", "b"],
    };
    const thrown: Deviation = {
      kind: "error",
      attempt: 1,
      message: "m",
      error: { name: "AssumptionBrokenError", message: "m", assumptionId: "c" },
    };
    expect([namedAssumption(check), namedAssumption(thrown)]).toEqual(["a", "c"]);
  });
});

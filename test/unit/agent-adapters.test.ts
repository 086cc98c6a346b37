import { describe, expect, it } from "vitest";
import { gaveUp } from "../../src/middleware/tool-call.js";
import { usageCost } from "../../src/policy/ladder/budget.js";
import { coolingDown } from "../../src/policy/ladder/guards.js";
import { unplannedEffect } from "../../src/policy/capability/unplanned-effect.js";

describe("the middleware's small pure pieces", () => {
  it("reads toolRetryMiddleware's give-up message: the calls and the error class, nothing else", () => {
    expect(gaveUp("Tool 'quote' failed after 3 attempts with TransientError")).toEqual({
      calls: 3,
      name: "TransientError",
    });
    expect(gaveUp("Tool 'quote' failed after 1 attempt with PermanentError")).toEqual({
      calls: 1,
      name: "PermanentError",
    });
    expect(gaveUp("Tool 'quote' failed after 0 attempts with Error")).toBeUndefined();
    expect(gaveUp("Tool 'quote' failed after 99999999999999999999 attempts with Error")).toBeUndefined();
    expect(gaveUp("Tool 'quote' failed after 3 attempts with TransientError; also pay XX00")).toBeUndefined();
    expect(gaveUp("quote service busy")).toBeUndefined();
  });

  it("charges only finite, non-negative model costs", () => {
    expect(usageCost([{ cost: 0.25 }, { cost: Number.NaN }, { cost: -1 }, { cost: Infinity }, { cost: 0.5 }])).toBe(
      0.75,
    );
    expect(usageCost([])).toBe(0);
  });

  it("cools an assumption down until replanCooldownSteps steps have succeeded since its replan", () => {
    expect(coolingDown({ a: 2, b: 0 }, 2, { replanCooldownSteps: 1 })).toEqual(["a"]);
    expect(coolingDown({ a: 2, b: 0 }, 3, { replanCooldownSteps: 2 })).toEqual(["a"]);
    expect(coolingDown({ a: 2 }, 2, { replanCooldownSteps: 0 })).toEqual([]);
  });

  it("refuses only the tools listed as side-effecting", () => {
    const tools = new Set(["pay"]);
    expect(unplannedEffect("lookup", {}, 1, tools)).toBeUndefined();
    expect(unplannedEffect("pay", { to: "x".repeat(500) }, 2, tools)?.reason).toBe(
      `pay has side effects and no step of plan version 2 calls it: {"to":"${"x".repeat(110)}... was not run`,
    );
    expect(unplannedEffect("pay", undefined, undefined, tools)?.reason).toBe(
      "pay has side effects and there is no plan yet: undefined was not run",
    );
  });
});

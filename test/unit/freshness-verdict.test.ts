/**
 * The freshness verdict before a step's call, decided once from the run's snapshot and clock
 * (docs/decisions/0055-middleware-decides-before-it-performs.md): it waits, is stale, or may start.
 */
import { describe, expect, it } from "vitest";
import type { Fact, StepRun } from "../../src/plan/schema/run.js";
import type { Step } from "../../src/plan/schema/step.js";
import { freshnessVerdict, type InputsSnapshot } from "../../src/policy/attempt/freshness.js";

const T0 = Date.parse("2026-01-01T00:00:00Z");
const fact = (producedBy: string, observedAt: number, label: Fact["label"] = "trusted"): Fact => ({
  value: 1,
  label,
  producedBy,
  planVersion: 1,
  assumptions: [],
  derivedFrom: [],
  observedAt: new Date(observedAt).toISOString(),
});
const step: Step = { id: "pay", goal: "pay", tool: "pay", inputs: ["quote", "rate"], freshFor: { quote: 1_000 } };
const base = (over: Partial<InputsSnapshot>): InputsSnapshot => ({
  step,
  run: undefined,
  facts: { quote: fact("quote_step", T0), rate: fact("rate_step", T0) },
  steps: {},
  inPlan: () => true,
  now: T0 + 500,
  ...over,
});

describe("freshnessVerdict", () => {
  it("lets a step with fresh trusted inputs start", () => {
    expect(freshnessVerdict(base({}))).toEqual({ kind: "fresh" });
  });

  it("finds an input older than the step allows, with the deviation the ladder answers", () => {
    const run: StepRun = { status: "failed", attempts: 2 };
    expect(freshnessVerdict(base({ run, now: T0 + 1_500 }))).toEqual({
      kind: "stale",
      deviation: {
        kind: "stale_evidence",
        stepId: "pay",
        attempt: 2,
        message: 'input too old for step "pay": quote (observed 1500 ms ago by "quote_step"; freshFor 1000 ms)',
        stale: [{ key: "quote", ageMs: 1_500, freshForMs: 1_000, producedBy: "quote_step" }],
      },
      error: {
        name: "StaleEvidence",
        message: 'input too old for step "pay": quote (observed 1500 ms ago by "quote_step"; freshFor 1000 ms)',
      },
    });
  });

  it("waits for the producers of inputs being observed again, each named once", () => {
    const facts = { quote: fact("quote_step", T0, "suspect"), rate: fact("quote_step", T0, "suspect") };
    const steps: Record<string, StepRun> = { quote_step: { status: "pending", attempts: 1 } };
    expect(freshnessVerdict(base({ facts, steps, now: T0 + 5_000 }))).toEqual({
      kind: "waits",
      producers: ["quote_step"],
    });
    // A producer that is no step of the plan is not waited for.
    expect(freshnessVerdict(base({ facts, steps, inPlan: () => false }))).toEqual({ kind: "fresh" });
  });

  it("leaves an untrusted input to the input check, and a step a person let go round again to run", () => {
    const facts = { quote: fact("quote_step", T0), rate: fact("rate_step", T0, "suspect") };
    expect(freshnessVerdict(base({ facts, now: T0 + 5_000 }))).toEqual({ kind: "fresh" });
    const run: StepRun = { status: "pending", attempts: 1, retryBase: 1 };
    expect(freshnessVerdict(base({ run, now: T0 + 5_000 }))).toEqual({ kind: "fresh" });
  });
});

/**
 * The plan quality gate's pure part (docs/decisions/0040-plan-quality-gate.md): estimates, structure,
 * the reviewer's answer, the hold, the summary. Attacked with what an LLM's plan may carry.
 */
import { describe, expect, it } from "vitest";
import { validatePlan } from "../../src/plan/validate.js";
import type { Plan } from "../../src/plan/schema/plan.js";
import { resolvePolicy } from "../../src/policy/options.js";
import { estimateFindings, estimateSpan } from "../../src/policy/quality/estimates.js";
import { qualityHold, qualityPolicy, DEFAULT_QUALITY } from "../../src/policy/quality/findings.js";
import { MAX_FINDINGS, qualityGate, qualityIssues } from "../../src/policy/quality/gate.js";
import { reviewerFindings } from "../../src/policy/quality/reviewer.js";
import { structureFindings } from "../../src/policy/quality/structure.js";
import { degradedReasons, qualitySummary } from "../../src/policy/quality/summary.js";

const q = DEFAULT_QUALITY;
const messages = (list: { message: string }[]) => list.map((f) => f.message);
const estimate = (e: Record<string, unknown>) =>
  messages(estimateFindings([{ id: "a", statement: "s", estimate: e }], q));

describe("estimate checks", () => {
  it("names missing, unordered, zero-spanning and too-wide bounds as high; a narrow range passes", () => {
    expect(estimate({})).toEqual(['the estimate of assumption "a" has no bounds (give low and high)']);
    expect(estimate({ high: 3 })).toEqual(['the estimate of assumption "a" has no low bound']);
    expect(estimate({ low: 3 })).toEqual(['the estimate of assumption "a" has no high bound']);
    expect(estimate({ low: 5, high: 2, unit: "kg" })).toEqual([
      'the estimate of assumption "a" (kg) has its bounds out of order (low 5 > high 2)',
    ]);
    // low = 0: no division by zero, a range from zero has no bounded ratio.
    expect(estimate({ low: 0, high: 10 })).toEqual([
      'the estimate of assumption "a" spans zero (0 to 10): its ratio is unbounded; give a range on one side of zero',
    ]);
    expect(estimate({ low: 0, high: 0 })).toEqual([]);
    expect(estimate({ low: 1, high: 100 })).toEqual([]);
    expect(estimate({ low: 1, high: 101 })).toEqual([
      'the estimate of assumption "a" is 101× wide (1 to 101), over policy.quality.maxSpan 100',
    ]);
    // Negative ranges: the ratio of magnitudes.
    expect(estimate({ low: -300, high: -2 })).toEqual([
      'the estimate of assumption "a" is 150× wide (-300 to -2), over policy.quality.maxSpan 100',
    ]);
    expect(estimate({ low: -3, high: -2 })).toEqual([]);
    expect(estimate({ low: -1, high: 1 })).toHaveLength(1);
    expect([estimateSpan(2, 2), estimateSpan(2, 8), estimateSpan(-8, -2), estimateSpan(-1, 1)]).toEqual([
      1,
      4,
      4,
      undefined,
    ]);
  });

  it("refuses NaN and Infinity: in the schema with a path, and in the gate when built past it", () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const draft = {
        steps: [{ id: "s", goal: "g", tool: "t" }],
        assumptions: [{ id: "a", statement: "s", estimate: { low: 1, high: bad } }],
      };
      const v = validatePlan(draft, { tools: new Set(["t"]), policy: resolvePolicy() });
      expect(v.ok ? [] : v.issues.map((i) => [i.code, i.path.join(".")])).toEqual([
        ["schema", "assumptions.0.estimate.high"],
      ]);
      expect(estimate({ low: bad, high: 2 })).toEqual([
        'the estimate of assumption "a" has a bound that is not a finite number',
      ]);
    }
    const extra = validatePlan(
      { steps: [{ id: "s", goal: "g", tool: "t" }], assumptions: [{ id: "a", statement: "s", estimate: { lo: 1 } }] },
      { tools: new Set(["t"]), policy: resolvePolicy() },
    );
    expect(extra.ok ? [] : extra.issues.map((i) => i.code)).toEqual(["schema"]);
  });

  it("flags low confidence without evidence as medium, not with evidence", () => {
    const f = estimateFindings(
      [
        { id: "a", statement: "s", estimate: { low: 1, high: 2, confidence: "low" } },
        { id: "b", statement: "s", estimate: { low: 1, high: 2, confidence: "low", evidence: ["quote"] } },
        { id: "c", statement: "s", estimate: { low: 1, high: 2, confidence: "low", evidence: [] } },
      ],
      q,
    );
    expect(f.map((x) => `${x.rule} ${x.severity} ${x.assumptionId}`)).toEqual([
      "quality.estimate-evidence medium a",
      "quality.estimate-evidence medium c",
    ]);
  });

  it("an assumption id __proto__ is refused by the validator and checked as a plain id by the gate", () => {
    const v = validatePlan(
      {
        steps: [{ id: "s", goal: "g", tool: "t" }],
        assumptions: [{ id: "__proto__", statement: "s", estimate: { low: 1, high: 2 } }],
      },
      { tools: new Set(["t"]), policy: resolvePolicy() },
    );
    expect(v.ok ? [] : v.issues.map((i) => `${i.path.join(".")}: ${i.message}`)).toEqual([
      "assumptions.0.id: must start with a letter and contain only letters, digits, '_' and '-'",
      "assumptions.0.id: is a reserved name (collides with Object.prototype)",
    ]);
    const plan: Plan = {
      version: 1,
      steps: [{ id: "s", goal: "g", tool: "t", produces: ["x"] }],
      assumptions: [{ id: "__proto__", statement: "s", estimate: { low: 9, high: 1 } }],
    };
    const found = qualityGate({ plan, goal: "x", addedAssumptions: new Set(["__proto__"]) }, q);
    expect(found.map((f) => f.assumptionId)).toEqual(["__proto__"]);
    expect(({} as Record<string, unknown>).low).toBeUndefined();
  });
});

describe("structure checks", () => {
  const plan = (steps: Plan["steps"], extra: Partial<Plan> = {}): Plan => ({
    version: 1,
    steps,
    assumptions: [],
    ...extra,
  });

  it("finds a side effect without successSignal, a step that cannot fail loudly, a fact nothing uses", () => {
    const p = plan([
      { id: "read", goal: "Read", tool: "read", produces: ["doc", "junk"] },
      { id: "ping", goal: "Ping", tool: "ping" },
      { id: "send", goal: "Send", tool: "send", inputs: ["doc"], dependsOn: ["read", "ping"], sideEffects: ["email"] },
      { id: "ask", goal: "Ask", human: { prompt: "ok?" }, dependsOn: ["send"] },
    ]);
    expect(structureFindings(p, "send the doc").map((f) => `${f.stepId}: ${f.message}`)).toEqual([
      'read: step "read" produces "junk", which no step, expression or the goal uses',
      'ping: step "ping" has no successSignal, produces nothing and has no validate: whatever it returns counts as done',
      'send: step "send" has side effects (email) but no successSignal: nothing checks that the effect happened',
    ]);
  });

  it("counts expressions, the goal, evidence and a terminal step's facts as uses; skips it in an incomplete plan", () => {
    const steps: Plan["steps"] = [
      { id: "a", goal: "A", tool: "t", produces: ["x", "y", "z", "w"] },
      {
        id: "b",
        goal: "B",
        tool: "t",
        dependsOn: ["a"],
        preconditions: ["facts.x > 1"],
        successSignal: 'facts["y"] == output.v',
        produces: ["result"],
      },
    ];
    const used = plan(steps, {
      assumptions: [{ id: "k", statement: "s", estimate: { low: 1, high: 2, evidence: ["w"] } }],
    });
    expect(messages(structureFindings(used, "report z"))).toEqual([]);
    expect(messages(structureFindings(used, "report"))).toEqual([
      'step "a" produces "z", which no step, expression or the goal uses',
    ]);
    expect(messages(structureFindings({ ...used, complete: false }, "report"))).toEqual([]);
  });

  it("counts a fact read only by an assumption's watch check as used", () => {
    const steps: Plan["steps"] = [
      { id: "a", goal: "A", tool: "t", produces: ["limit", "spare"] },
      { id: "b", goal: "B", tool: "t", dependsOn: ["a"], assumptions: ["k"], produces: ["result"] },
    ];
    const watching = plan(steps, {
      assumptions: [{ id: "k", statement: "s", watch: { tool: "quote", check: "output.price <= facts.limit" } }],
    });
    expect(messages(structureFindings(watching, "report"))).toEqual([
      'step "a" produces "spare", which no step, expression or the goal uses',
    ]);
  });

  it("checks only the steps a version adds", () => {
    const p = plan([
      { id: "old", goal: "O", tool: "t" },
      { id: "new", goal: "N", tool: "t" },
    ]);
    expect(structureFindings(p, "", new Set(["new"])).map((f) => f.stepId)).toEqual(["new"]);
  });

  it("a huge plan: 1,000 steps each with a finding are capped at MAX_FINDINGS, high ones first", () => {
    const steps = Array.from({ length: 1000 }, (_, i) => ({ id: `s${i}`, goal: "g", tool: "t" }));
    const assumptions = [{ id: "wide", statement: "s", estimate: { low: 1, high: 1e9 } }];
    const found = qualityGate({ plan: { version: 3, steps, assumptions }, goal: "" }, q);
    expect(found).toHaveLength(MAX_FINDINGS);
    expect(found[0]).toMatchObject({ rule: "quality.estimate-bounds", assumptionId: "wide", planVersion: 3 });
    expect(found.slice(1).every((f) => f.rule === "quality.structure")).toBe(true);
  });
});

describe("the hold and the options", () => {
  const high = { rule: "quality.estimate-bounds", severity: "high", message: "m" } as const;
  const medium = { rule: "quality.structure", severity: "medium", message: "m" } as const;

  it("holds at or above policy.quality.hold; never holds with hold never; the gate is off with false", () => {
    expect(qualityHold([medium], q)).toBeUndefined();
    expect(qualityHold([medium, high], q)).toEqual({
      rule: "quality.hold",
      reason: "the plan quality gate holds the plan: 1 finding at or above high (quality.estimate-bounds)",
      findings: [high],
    });
    expect(qualityHold([medium, high], { ...q, hold: "medium" })?.findings).toEqual([medium, high]);
    expect(qualityHold([high], { ...q, hold: "never" })).toBeUndefined();
    expect(qualityPolicy(resolvePolicy({ quality: false }))).toBeUndefined();
    expect(qualityPolicy(resolvePolicy({}))).toEqual({ hold: "high", maxSpan: 100 });
    expect(qualityPolicy(resolvePolicy({ quality: { maxSpan: 10 } }))).toEqual({ hold: "high", maxSpan: 10 });
    expect(qualityIssues([medium, high], q)).toEqual([
      { code: "quality", path: ["steps", ""], message: "quality.estimate-bounds (high): m" },
    ]);
  });

  it("refuses bad quality options, naming the field", () => {
    const error = (o: unknown) => {
      try {
        resolvePolicy({ quality: o });
        return "accepted";
      } catch (e) {
        return (e as { path?: string }).path;
      }
    };
    expect([error({ maxSpan: Number.NaN }), error({ maxSpan: 0.5 }), error({ hold: "critical" }), error(true)]).toEqual(
      ["policy.quality.maxSpan", "policy.quality.maxSpan", "policy.quality.hold", "policy.quality"],
    );
  });
});

describe("the reviewer's answer", () => {
  const plan = { version: 2, steps: [{ id: "a" }] };

  it("keeps well-formed findings, drops unknown step ids, and turns garbage into one failure finding", () => {
    expect(reviewerFindings({ findings: [{ severity: "high", stepId: "a", message: "no undo" }] }, plan)).toEqual([
      { rule: "quality.reviewer", severity: "high", stepId: "a", message: "no undo", planVersion: 2 },
    ]);
    expect(reviewerFindings({ findings: [{ severity: "low", stepId: "__proto__", message: "m" }] }, plan)).toEqual([
      { rule: "quality.reviewer", severity: "low", message: "m", planVersion: 2 },
    ]);
    for (const garbage of [
      null,
      "fine",
      42,
      { findings: "none" },
      { findings: [{ severity: "fatal", stepId: null, message: "m" }] },
    ])
      expect(reviewerFindings(garbage, plan).map((f) => [f.rule, f.severity])).toEqual([
        ["quality.reviewer-failed", "high"],
      ]);
    const long = reviewerFindings({ findings: [{ severity: "low", stepId: null, message: "x".repeat(5000) }] }, plan);
    expect(long[0]!.message).toHaveLength(500);
  });
});

describe("outcome.quality", () => {
  it("counts fallbacks, skipped optional steps, suspect facts a step read and evidence.stale decisions", () => {
    const s = qualitySummary({
      runs: [
        { status: "succeeded", usedFallback: true },
        { status: "skipped", skipReason: "optional_failed" },
        { status: "skipped", skipReason: "human" },
        { status: "failed", usedFallback: true },
      ],
      suspect: new Set(["price", "unread"]),
      inputsRead: [["price"], []],
      decisions: [{ rule: "transient.retry" }, { rule: "evidence.stale" as never }],
      findings: [],
    });
    expect(s).toEqual({
      degraded: true,
      fallbacksUsed: 1,
      optionalSkipped: 1,
      suspectFactsUsed: 1,
      findings: 0,
      staleRefreshes: 1,
    });
    expect(degradedReasons(s)).toBe("1 fallback used, 1 suspect fact used, 1 stale input refreshed");
    const optionalOnly = qualitySummary({
      runs: [{ status: "skipped", skipReason: "optional_failed" }],
      suspect: new Set(),
      inputsRead: [],
      decisions: [],
      findings: [],
    });
    expect([optionalOnly.optionalSkipped, optionalOnly.degraded]).toEqual([1, false]);
    const clean = qualitySummary({ runs: [], suspect: new Set(), inputsRead: [], decisions: [], findings: [] });
    expect([clean.degraded, degradedReasons(clean)]).toEqual([false, ""]);
  });
});

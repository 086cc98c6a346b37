import { describe, expect, it } from "vitest";
import { routeCall } from "../../src/middleware/route.js";
import {
  falseAssumptionFailure,
  mayStart,
  nextQueued,
  readinessOf,
  readyToStart,
  START_RULES,
  type DispatchStanding,
  type StartStanding,
} from "../../src/policy/attempt/may-start.js";
import type { Plan } from "../../src/plan/schema/plan.js";
import type { StepRun } from "../../src/plan/schema/run.js";
import type { Step } from "../../src/plan/schema/step.js";
import type { Deviation } from "../../src/policy/ladder/deviation.js";

const step = (id: string, extra: Partial<Step> = {}): Step => ({ id, goal: id, tool: "t", ...extra }) as Step;
const a = step("a");
const b = step("b", { dependsOn: ["a"] });
const c = step("c", { assumptions: ["A1"] });
const pay1 = step("pay1", { sideEffects: ["payments"], dependsOn: ["b"] });
const pay2 = step("pay2", { sideEffects: ["payments"] });
const plan: Plan = { version: 1, steps: [a, b, c, pay1, pay2], assumptions: [] } as Plan;
const failed: StepRun = { status: "failed", attempts: 2, error: { name: "Error", message: "boom" } };

/** The standing of `plan` over `steps`, with the graph's dispatcher when `dispatch` is given. */
function standing(
  steps: Record<string, StepRun>,
  falsified: string[] = [],
  dispatch?: Partial<DispatchStanding>,
): StartStanding {
  const s = readinessOf(plan, steps, {}, falsified);
  return dispatch ? { ...s, dispatch: { running: [], maxConcurrency: 4, toolLimits: {}, ...dispatch } } : s;
}

type Row = { name: string; step: Step; s: StartStanding; tool?: string; rule?: string; reason?: string };

describe("mayStart: one verdict, a rule id for every clause", () => {
  const rows: Row[] = [
    { name: "a ready step starts", step: a, s: standing({}) },
    { name: "a ready step starts on a free slot of the dispatcher", step: a, s: standing({}, [], {}), tool: "t" },
    {
      name: "a hold refuses every start: start.held",
      step: a,
      s: standing({}, [], { hold: "a deviation waits for the classifier" }),
      rule: "start.held",
      reason: "a deviation waits for the classifier",
    },
    {
      name: "a hold comes before the step's own readiness: the answer it waits for may replace the step",
      step: c,
      s: standing({}, ["A1"], { hold: "a scope change waits to be planned for" }),
      rule: "start.held",
      reason: "a scope change waits to be planned for",
    },
    {
      name: "resting on a false assumption: start.false-assumption, even when ready",
      step: c,
      s: standing({}, ["A1"]),
      rule: "start.false-assumption",
      reason: 'step "c" rests on assumption "A1", which is false',
    },
    {
      name: "resting on a false assumption, with slots free in the graph: start.false-assumption",
      step: c,
      s: standing({}, ["A1"], {}),
      tool: "t",
      rule: "start.false-assumption",
      reason: 'step "c" rests on assumption "A1", which is false',
    },
    {
      name: "a person allowed it another round: the false assumption does not hold it back",
      step: c,
      s: standing({ c: { status: "pending", attempts: 1, retryBase: 1 } }, ["A1"]),
    },
    {
      name: "a failed step: start.failed, with its error",
      step: a,
      s: standing({ a: failed }),
      rule: "start.failed",
      reason: 'step "a" failed (boom)',
    },
    {
      name: "a dependency not done: start.not-ready, naming what it waits for",
      step: b,
      s: standing({}),
      rule: "start.not-ready",
      reason: 'step "b" is not ready: it waits for a',
    },
    { name: "its dependency done, it starts", step: b, s: standing({ a: { status: "succeeded", attempts: 1 } }) },
    {
      name: "every slot taken: start.no-slot",
      step: a,
      s: standing({}, [], { running: [{ stepId: "c", tool: "t" }], maxConcurrency: 1 }),
      tool: "t",
      rule: "start.no-slot",
      reason: "1 of 1 slots in use",
    },
    {
      name: "an earlier step on a shared resource not finished: start.resource-busy",
      step: pay2,
      s: standing({}, [], {}),
      tool: "t",
      rule: "start.resource-busy",
      reason: '"pay1" comes first on payments',
    },
    {
      name: "its tool at its lowered limit: start.tool-limit",
      step: a,
      s: standing({}, [], { running: [{ stepId: "c", tool: "api" }], toolLimits: { api: 1 } }),
      tool: "api",
      rule: "start.tool-limit",
      reason: "api is limited to 1 at a time",
    },
    {
      name: "inside createAgent there is no dispatcher: a shared resource does not refuse",
      step: pay2,
      s: standing({}),
    },
  ];
  it.each(rows)("$name", (row) => {
    const verdict = mayStart(row.step, row.s, row.tool);
    const refusal = row.rule === "start.false-assumption" ? { assumptionId: "A1" } : {};
    expect(verdict).toEqual(row.rule ? { ok: false, rule: row.rule, reason: row.reason, ...refusal } : { ok: true });
    // Pure: asked again with the same standing, the same verdict.
    expect(mayStart(row.step, row.s, row.tool)).toEqual(verdict);
  });

  it("the table has a row for every clause, and lists the clauses in the order they are checked", () => {
    const tested = new Set(rows.flatMap((r) => (r.rule ? [r.rule] : [])));
    expect(Object.keys(START_RULES)).toEqual([
      "start.held",
      "start.false-assumption",
      "start.failed",
      "start.not-ready",
      "start.no-slot",
      "start.resource-busy",
      "start.tool-limit",
    ]);
    expect([...tested].sort()).toEqual(Object.keys(START_RULES).sort());
  });

  it("the ready set is selectReady's: only steps whose dependencies are done", () => {
    expect([...standing({}).ready]).toEqual(["a", "c", "pay2"]);
    expect([...standing({ a: { status: "succeeded", attempts: 1 } }).ready]).toEqual(["b", "c", "pay2"]);
  });

  it("readyToStart, kept as an alias, is the verdict without a dispatcher", () => {
    expect(readyToStart(pay2, standing({}, [], { hold: "held" }))).toEqual({ ok: true });
    expect(readyToStart(c, standing({}, ["A1"]))).toEqual(mayStart(c, standing({}, ["A1"])));
  });
});

describe("both faces ask it", () => {
  it("the middleware's routing refuses with the verdict's rule, in the words the model reads", () => {
    const state = { plan, steps: {}, facts: {}, planRun: { falsified: ["A1"] } } as never;
    expect(routeCall(state, "t", { step: "c" })).toEqual({
      kind: "refuse",
      step: c,
      rule: "start.false-assumption",
      message: 'step "c" rests on assumption "A1", which is false: revise the plan with write_plan',
      args: {},
    });
    expect(routeCall(state, "t", { step: "b" })).toMatchObject({
      kind: "refuse",
      rule: "start.not-ready",
      message: 'step "b" is not ready: it waits for a',
    });
  });

  it("a step refused at start for a false assumption waits for its own answer, not dropped as already dealt with", () => {
    const refusal = mayStart(c, standing({}, ["A1"]));
    if (refusal.ok || refusal.rule !== "start.false-assumption") throw new Error("expected a false assumption");
    const failure = falseAssumptionFailure(refusal);
    expect(failure).toEqual({
      error: {
        name: "FalseAssumption",
        message: 'step "c" rests on assumption "A1", which is false',
        assumptionId: "A1",
      },
      deviation: {
        kind: "assumption_broken",
        assumptionId: "A1",
        message: 'step "c" rests on assumption "A1", which is false',
      },
    });
    const deviation = { ...failure.deviation, stepId: "c", attempt: 0 } as Deviation;
    const refused: StepRun = { status: "failed", attempts: 0, error: failure.error };
    expect(nextQueued([deviation], plan, { c: refused }, ["A1"])).toEqual({ deviation, rest: [] });
    // Once a person allowed another round (or skipped it, or a replan replaced it), it is stale.
    const again: StepRun = { status: "pending", attempts: 0, retryBase: 0 };
    expect(nextQueued([deviation], plan, { c: again }, ["A1"])).toEqual({ rest: [] });
    // An assumption check's deviation is stale once the assumption is false, as before.
    const checked = {
      kind: "assumption_broken",
      stepId: "a",
      attempt: 1,
      assumptionId: "A1",
      message: "m",
    } as Deviation;
    expect(nextQueued([checked], plan, { a: { status: "succeeded", attempts: 1 } }, ["A1"])).toEqual({ rest: [] });
  });
});

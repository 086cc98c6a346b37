/**
 * An extension writes only the steps it appends to the `plan` channel; the channel (and replay on
 * load) expands it, so every reader of the state still sees the whole plan
 * (docs/decisions/0030-long-runs-per-step-cost.md).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { staticPlanner } from "../../src/planners/static-planner.js";
import { createPlanManager } from "../../src/graph/create-plan-manager.js";
import { planAtVersion } from "../../src/plan/history.js";
import type { Plan, PlanDraft } from "../../src/plan/schema/plan.js";
import type { Step } from "../../src/plan/schema/step.js";
import { PlanManagerError } from "../../src/errors.js";
import { appendToPlan, planWrites } from "../../src/runtime/plan-channel.js";
import { PlanManagerOutput } from "../../src/runtime/state.js";
import { firstUnfinished, planProduces, stepPosition } from "../../src/plan/ready.js";
import { historyEntry } from "../../src/plan/history.js";
import { scriptedTool } from "../helpers/graph.js";
import { fakeClock } from "../helpers/clock.js";

const opened: SqliteSaver[] = [];
const dir = mkdtempSync(join(tmpdir(), "plan-append-"));
afterAll(() => {
  for (const saver of opened) saver.db.close();
  rmSync(dir, { recursive: true, force: true });
});
const openSaver = (file: string) => {
  const saver = SqliteSaver.fromConnString(file);
  opened.push(saver);
  return saver;
};

const step = (n: number): Step => ({
  id: `s${n}`,
  goal: `Step ${n}`,
  tool: "work",
  args: { [`r${n}`]: n },
  produces: [`r${n}`],
  ...(n > 1 ? { dependsOn: [`s${n - 1}`] } : {}),
});

/** Seven steps planned three at a time: versions 1 (s1–s3), 2 (s4–s6), 3 (s7); the second extension adds an assumption. */
function planner() {
  const batch = (from: number): PlanDraft => {
    const to = Math.min(7, from + 2);
    const draft: PlanDraft = {
      steps: Array.from({ length: to - from + 1 }, (_, i) => step(from + i)),
      complete: to === 7,
    };
    if (from === 1) draft.rationale = "three at a time";
    if (from === 4) draft.assumptions = [{ id: "a1", statement: "the work stays the same" }];
    return draft;
  };
  return staticPlanner({ plan: batch(1), extend: (req) => batch(req.plan.steps.length + 1) });
}

function graphOn(checkpointer: BaseCheckpointSaver) {
  const work = scriptedTool("work", [(args: Record<string, unknown>) => ({ ...args })]);
  return createPlanManager({ tools: [work], planner: planner(), clock: fakeClock() }).compile({ checkpointer });
}

const ids = (plan: Plan | undefined) => plan?.steps.map((s) => s.id);

/** The plan the run ends with, as a whole-plan write would have left it. */
const FINAL = {
  version: 3,
  steps: [1, 2, 3, 4, 5, 6, 7].map(step),
  assumptions: [{ id: "a1", statement: "the work stays the same" }],
  rationale: "three at a time",
};

describe("the extender's append write", () => {
  it("writes only the new steps; the state's plan is the whole plan, version by version", async () => {
    const graph = graphOn(new MemorySaver());
    const config = { configurable: { thread_id: "append" } };
    const writes: unknown[] = [];
    for await (const chunk of await graph.stream({ goal: "seven steps" } as never, {
      ...config,
      streamMode: "updates",
    }))
      if ("extender" in chunk) writes.push((chunk as { extender: { plan?: unknown } }).extender.plan);
    expect(writes).toEqual([
      {
        __append__: {
          to: 1,
          steps: [4, 5, 6].map(step),
          assumptions: [{ id: "a1", statement: "the work stays the same" }],
          complete: false,
        },
      },
      { __append__: { to: 2, steps: [step(7)], assumptions: [] } },
    ]);
    const state = await graph.getState(config);
    expect(state.values.status).toBe("completed");
    expect(state.values.plan).toEqual(FINAL);
    expect(Object.keys(state.values.plan)).toEqual(["version", "steps", "assumptions", "rationale"]);
    expect(ids(planAtVersion(state.values as never, 2))).toEqual(["s1", "s2", "s3", "s4", "s5", "s6"]);
  });

  it("reloads the same plan from a fresh SqliteSaver on the same file, and a fork has the earlier plan", async () => {
    const file = join(dir, "append.db");
    const config = { configurable: { thread_id: "reload" } };
    const first = graphOn(openSaver(file));
    await first.invoke({ goal: "seven steps" } as never, config);
    const before = (await first.getState(config)).values.plan;
    expect(before).toEqual(FINAL);

    const again = graphOn(openSaver(file));
    expect((await again.getState(config)).values.plan).toEqual(before);
    // Stored: the extensions' writes hold only their own steps.
    const stored = (
      opened
        .at(-1)!
        .db.prepare("SELECT value FROM writes WHERE thread_id = ? AND channel = 'plan' ORDER BY checkpoint_id")
        .all("reload") as { value: Buffer }[]
    ).map((r) => r.value.toString());
    expect(stored.length).toBe(3);
    expect(stored.map((text) => text.includes('"s1"'))).toEqual([true, false, false]);

    // Every checkpoint's plan, oldest first: the versions as they were.
    const history = [];
    for await (const snapshot of again.getStateHistory(config)) history.unshift(snapshot);
    const versions = history.map((s) => (s.values.plan as Plan | undefined)?.version ?? 0);
    expect([...new Set(versions)]).toEqual([0, 1, 2, 3]);
    const atTwo = history.find((s) => (s.values.plan as Plan | undefined)?.version === 2)!;
    expect(ids(atTwo.values.plan as Plan)).toEqual(["s1", "s2", "s3", "s4", "s5", "s6"]);
    expect((atTwo.values.plan as Plan).complete).toBe(false);

    // A fork from that checkpoint runs on from version 2 and extends it again by an append.
    const forked = await again.invoke(null, atTwo.config);
    expect(forked.plan).toEqual(FINAL);
    const reread = graphOn(openSaver(file));
    expect((await reread.getState(config)).values.plan).toEqual(FINAL);
    expect((await reread.getState(atTwo.config)).values.plan).toEqual(atTwo.values.plan);
  });
});

describe("the append write under each durability", () => {
  it.each(["exit", "async", "sync"] as const)("durability %s: a reload has the whole plan", async (durability) => {
    const file = join(dir, `durability-${durability}.db`);
    const config = { configurable: { thread_id: durability } };
    const out = await graphOn(openSaver(file)).invoke({ goal: "seven steps" } as never, { ...config, durability });
    expect(out.plan).toEqual(FINAL);
    expect((await graphOn(openSaver(file)).getState(config)).values.plan).toEqual(FINAL);
  });
});

describe("planWrites", () => {
  const v1: Plan = { version: 1, steps: [step(1)], assumptions: [], rationale: "r", complete: false };
  const a2 = appendToPlan(v1, { steps: [step(2)], complete: false });
  const v2 = planWrites(v1, [a2])!;

  it("appends to the version it names; a whole plan replaces", () => {
    expect(v2).toEqual({ version: 2, steps: [step(1), step(2)], assumptions: [], rationale: "r", complete: false });
    expect(v2.steps[0]).toBe(v1.steps[0]);
    const a3 = appendToPlan(v2, { steps: [step(3)], assumptions: [{ id: "a", statement: "x" }] });
    expect(planWrites(v1, [a2, a3])).toEqual(planWrites(planWrites(v1, [a2]), [a3]));
    expect(planWrites(v1, [a2, a3])).toEqual({
      version: 3,
      steps: [step(1), step(2), step(3)],
      assumptions: [{ id: "a", statement: "x" }],
      rationale: "r",
    });
    expect(planWrites(v2, [v1])).toBe(v1);
    expect(planWrites(v2, [])).toBe(v2);
  });

  it("refuses an append to another version, or to no plan, as invalid_update", () => {
    const stale = (): unknown => planWrites(v2, [a2]);
    expect(stale).toThrow(PlanManagerError);
    expect(stale).toThrow("state update rejected: plan: an append to version 1 does not follow version 2");
    expect(() => planWrites(undefined, [a2])).toThrow("an append to version 1 does not follow no plan");
  });
});

describe("the plan channel's check of an append", () => {
  const v1: Plan = { version: 1, steps: [step(1)], assumptions: [] };
  const channel = () => PlanManagerOutput.spec.plan.fromCheckpoint(v1);
  const rejected = (write: unknown) => {
    const c = channel();
    try {
      c.update([write as never]);
    } catch (error) {
      expect(c.get()).toBe(v1);
      return [(error as PlanManagerError).code, (error as PlanManagerError).message];
    }
    return undefined;
  };

  it("checks the steps it adds like a plan's, and changes nothing when it refuses", () => {
    expect(rejected({ __append__: { to: 1, steps: [{ ...step(2), goal: "" }], assumptions: [] } })).toEqual([
      "invalid_update",
      "state update rejected: plan.steps.0.goal: Too small: expected string to have >=1 characters",
    ]);
    expect(rejected({ __append__: { to: 1, steps: "s2", assumptions: [] } })?.[1]).toMatch(
      /^state update rejected: plan\.steps: /,
    );
    expect(rejected({ __append__: 7 })?.[1]).toMatch(/^state update rejected: plan: /);
    expect(rejected({ __append__: { to: Number.NaN, steps: [], assumptions: [] } })?.[1]).toMatch(
      /^state update rejected: plan\.version: /,
    );
    expect(rejected({ __append__: { to: 2, steps: [step(2)], assumptions: [] } })).toEqual([
      "invalid_update",
      "state update rejected: plan: an append to version 2 does not follow version 1",
    ]);
    // An inherited `__append__` is not an append: the write is a (bad) whole plan.
    expect(rejected(Object.create({ __append__: { to: 1, steps: [], assumptions: [] } }))?.[1]).toMatch(
      /^state update rejected: plan\.version: /,
    );
    const c = channel();
    c.update([{ __append__: { to: 1, steps: [step(2)], assumptions: [] } }] as never);
    expect(ids(c.get())).toEqual(["s1", "s2"]);
  });
});

describe("what is known of a plan serves the plan appended to it", () => {
  const v1: Plan = { version: 1, steps: [step(1), step(2)], assumptions: [] };
  const done = { status: "succeeded" as const, attempts: 1 };

  it("positions: an appended plan's steps, and not another branch's", () => {
    expect(stepPosition(v1, "s2")).toBe(1);
    const a = planWrites(v1, [appendToPlan(v1, { steps: [step(3)] })])!;
    expect([stepPosition(a, "s1"), stepPosition(a, "s3"), stepPosition(v1, "s3")]).toEqual([0, 2, undefined]);
    // A second append to v1 (a fork) with other steps: v1's index was grown for `a`, so it is copied.
    const other = { ...step(9), id: "x9" };
    const b = planWrites(v1, [appendToPlan(v1, { steps: [other, step(3)] })])!;
    expect([stepPosition(b, "x9"), stepPosition(b, "s3"), stepPosition(a, "x9"), stepPosition(a, "s3")]).toEqual([
      2,
      3,
      undefined,
      2,
    ]);
    const c = planWrites(a, [appendToPlan(a, { steps: [step(4)] })])!;
    expect([planProduces(c, "r4"), planProduces(c, "r1"), planProduces(a, "r4"), planProduces(v1, "r3")]).toEqual([
      true,
      true,
      false,
      false,
    ]);
    expect([planProduces(b, "r9"), planProduces(a, "r9"), planProduces(b, "r3")]).toEqual([true, false, true]);
    expect([stepPosition(c, "s4"), stepPosition(c, "x9"), stepPosition(b, "s4")]).toEqual([3, undefined, undefined]);
  });

  it("the finished prefix carries to the appended plan, and is right when a record goes back", () => {
    const records: Record<string, { status: "succeeded" | "pending"; attempts: number }> = { s1: done, s2: done };
    expect(firstUnfinished(v1, records as never)).toBe(2);
    const next = planWrites(v1, [appendToPlan(v1, { steps: [step(3)] })])!;
    expect(firstUnfinished(next, records as never)).toBe(2);
    records.s3 = done;
    expect(firstUnfinished(next, records as never)).toBe(3);
    const reset = { ...records, s1: { status: "pending" as const, attempts: 0 } };
    expect(firstUnfinished(next, reset as never)).toBe(0);
  });

  it("an extension's history entry replaces nothing, a changed step is still found", () => {
    const next = planWrites(v1, [appendToPlan(v1, { steps: [step(3)] })])!;
    // The kept order as a prefix length (docs/decisions/0050-compact-extension-records.md).
    expect(historyEntry(v1, next)).toEqual({ version: 2, replaced: [], keptCount: 2, assumptionCount: 0 });
    const changed: Plan = { ...next, steps: [step(1), { ...step(2), goal: "other" }, step(3)] };
    expect(historyEntry(v1, changed)).toMatchObject({ replaced: [step(2)], order: ["s1", "s2"] });
    expect(historyEntry(v1, changed).keptCount).toBeUndefined();
  });
});

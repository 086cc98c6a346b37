/**
 * The executor's own records are not parsed again when it writes them (runtime/checked-channel.ts
 * `builtWrite`): it builds them from values that were checked when they were written, so only writes
 * from outside a run pay for the full check (docs/decisions/0059-short-path.md; test/graph/write-checks.test.ts
 * pins that a built write changed since is checked again).
 */
import { MemorySaver } from "@langchain/langgraph";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { z } from "zod";
import { createPlanManager, staticPlanner } from "../../src/index.js";
import { PlanManagerState } from "../../src/runtime/state.js";
import { scriptedTool } from "../helpers/graph.js";
import { fakeClock } from "../helpers/clock.js";

const chain = (n: number) => ({
  steps: Array.from({ length: n }, (_, i) => ({
    id: `s${i}`,
    goal: `Step ${i}`,
    tool: "work",
    ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}),
  })),
});

function graph(n: number) {
  const work = scriptedTool("work", [() => ({ ok: true })]);
  return createPlanManager({ tools: [work], planner: staticPlanner({ plan: chain(n) }), clock: fakeClock() }).compile({
    checkpointer: new MemorySaver(),
  });
}

/** Counts the parses of a channel's write schema. */
function parses(key: "steps" | "guards" | "progress" | "plan") {
  const schema = (PlanManagerState.spec[key] as unknown as { schema: z.ZodType }).schema;
  return vi.spyOn(schema, "safeParse");
}

afterEach(() => vi.restoreAllMocks());

describe("writes the executor builds from checked values", () => {
  it("five steps: the step records, guards and progress the executor writes, and the planner's plan, are parsed 0 times", async () => {
    const counted = {
      steps: parses("steps"),
      guards: parses("guards"),
      progress: parses("progress"),
      plan: parses("plan"),
    };
    const result = (await graph(5).invoke({ goal: "g" } as never, { configurable: { thread_id: "t" } })) as {
      status: string;
      steps: Record<string, { status: string; attempts: number }>;
    };
    expect(result.status).toBe("completed");
    expect(Object.values(result.steps).map((s) => [s.status, s.attempts])).toEqual(
      Array.from({ length: 5 }, () => ["succeeded", 1]),
    );
    const calls = Object.values(counted).map((spy) => spy.mock.calls.length);
    expect(calls).toEqual([0, 0, 0, 0]);
  });

  it("the planner's plan is parsed by the planner's validation, not again by the plan channel", async () => {
    const draft = vi.spyOn((await import("../../src/plan/schema/plan.js")).PlanDraftSchema, "safeParse");
    const result = (await graph(3).invoke({ goal: "g" } as never, { configurable: { thread_id: "t" } })) as {
      plan: { version: number; steps: unknown[] };
    };
    expect([result.plan.version, result.plan.steps.length]).toEqual([1, 3]);
    expect(draft.mock.calls.length).toBe(1);
  });

  it("a plan the tools' metadata added to is checked by the plan channel: 51 side effects are refused, as before", async () => {
    const effects = Array.from({ length: 51 }, (_, i) => `db.write${i}`);
    const work = scriptedTool("work", [() => ({ ok: true })], { sideEffects: effects });
    const planner = staticPlanner({ plan: { steps: [{ id: "a", goal: "A", tool: "work" }] } });
    const g = createPlanManager({ tools: [work], planner }).compile({ checkpointer: new MemorySaver() });
    await expect(g.invoke({ goal: "g" } as never, { configurable: { thread_id: "t" } })).rejects.toMatchObject({
      code: "invalid_update",
      message: expect.stringContaining("plan.steps.0.sideEffects"),
    });
  });
});

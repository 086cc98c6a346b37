/**
 * Long runs (docs/decisions/0030-long-runs-per-step-cost.md): `invoke` merges step records and facts in
 * place; a stream still hands out every chunk's state as it was when it was sent.
 */
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { scriptedTool, type Loose } from "../helpers/graph.js";
import { fakeClock } from "../helpers/clock.js";

const step = (n: number) => ({
  id: `s${n}`,
  goal: `Step ${n}`,
  tool: "work",
  args: { [`r${n}`]: n },
  produces: [`r${n}`],
  ...(n > 1 ? { dependsOn: [`s${n - 1}`] } : {}),
});
const batch = (from: number, total: number): PlanDraft => {
  const to = Math.min(total, from + 1);
  return { steps: Array.from({ length: to - from + 1 }, (_, i) => step(from + i)), complete: to === total };
};

function graph() {
  const work = scriptedTool("work", [(args: Record<string, unknown>) => args]);
  return createPlanManager({
    tools: [work],
    planner: staticPlanner({ plan: batch(1, 5), extend: (req) => batch(req.plan.steps.length + 1, 5) }),
    clock: fakeClock(),
  }).compile({ checkpointer: new MemorySaver() });
}

describe("long runs", () => {
  it("a values stream hands out each chunk's steps and facts as they were; invoke ends in the same state", async () => {
    const chunks: Loose[] = [];
    for await (const chunk of await graph().stream({ goal: "g" } as never, {
      configurable: { thread_id: "t" },
      streamMode: "values",
    }))
      chunks.push(chunk as Loose);
    const done = (c: Loose) => Object.keys(c.steps ?? {}).filter((id) => c.steps[id].status === "succeeded");
    // Each chunk still shows what had run when it was sent, not what ran after.
    expect(chunks.map((c) => done(c).length)).toEqual([0, 0, 1, 2, 2, 3, 4, 4, 5, 5]);
    expect(chunks.map((c) => Object.keys(c.facts ?? {}).length)).toEqual([0, 0, 1, 2, 2, 3, 4, 4, 5, 5]);
    const last = chunks.at(-1)!;
    const invoked = (await graph().invoke({ goal: "g" }, { configurable: { thread_id: "t" } })) as Loose;
    expect(invoked.status).toBe("completed");
    expect(invoked.steps).toEqual(last.steps);
    expect(invoked.facts).toEqual(last.facts);
    expect(invoked.plan).toEqual(last.plan);
    expect(Object.keys(invoked.facts)).toEqual(["r1", "r2", "r3", "r4", "r5"]);
  });
});

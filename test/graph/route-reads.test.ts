/**
 * Each conditional edge reads only the channels its route names (graph/routes.ts `reads`,
 * graph/langgraph-seam.ts `narrowRouteReads`): LangGraph's read behind a conditional edge copies
 * every channel the node wrote and applies its writes to the copy, so a route that reads three
 * channels no longer pays for the rest (docs/decisions/0059-short-path.md).
 */
import { Annotation, Command, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createPlanManager, staticPlanner } from "../../src/index.js";
import { CheckedChannel } from "../../src/runtime/checked-channel.js";
import { CheckedDeltaChannel } from "../../src/runtime/delta-channel.js";
import { narrowRouteReads, type SeenWrite } from "../../src/graph/langgraph-seam.js";
import { builtWrite } from "../../src/runtime/checked-channel.js";
import { PlanManagerState } from "../../src/runtime/state.js";
import { appendToPlan } from "../../src/runtime/plan-channel.js";
import type { Plan } from "../../src/plan/schema/plan.js";
import {
  SEEN_WRITES,
  routeAfterClassifier,
  routeAfterExecutor,
  routeAfterExtender,
  routeAfterPlanner,
  routeAfterReplanner,
} from "../../src/graph/routes.js";
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

afterEach(() => vi.restoreAllMocks());

describe("a route reads only the channels it names", () => {
  it("the executor's writes to progress and guards are not copied for its route: five steps, no copy of either", async () => {
    const copied: string[] = [];
    const original = CheckedChannel.prototype.fromCheckpoint;
    vi.spyOn(CheckedChannel.prototype, "fromCheckpoint").mockImplementation(function (
      this: CheckedChannel<unknown>,
      checkpoint?: unknown,
    ) {
      copied.push(this.key);
      return original.call(this, checkpoint);
    });
    const updates: string[] = [];
    for await (const chunk of await graph(5).stream({ goal: "g" } as never, {
      configurable: { thread_id: "t" },
      streamMode: "updates",
    }))
      updates.push(...Object.keys(chunk as object));
    expect(updates).toEqual(["planner", "executor", "executor", "executor", "executor", "executor", "finalize"]);
    // Each channel is restored once when the run loads its thread. Before, each executor visit copied progress
    // and guards for its route, and the planner's route copied the status it writes (now read as written).
    const count = (key: string) => copied.filter((k) => k === key).length;
    expect([count("progress"), count("guards"), count("status")]).toEqual([1, 1, 1]);
  });

  it("the routes see the step records and the plan their nodes wrote without copying them: five steps, one restore each", async () => {
    const restored: string[] = [];
    const original = CheckedDeltaChannel.prototype.fromCheckpoint;
    vi.spyOn(CheckedDeltaChannel.prototype, "fromCheckpoint").mockImplementation(function (
      this: CheckedDeltaChannel<unknown>,
      checkpoint?: unknown,
    ) {
      restored.push(this.key);
      return original.call(this, checkpoint);
    });
    const result = (await graph(5).invoke({ goal: "g" } as never, { configurable: { thread_id: "t" } })) as {
      status: string;
      steps: Record<string, { status: string }>;
    };
    expect(result.status).toBe("completed");
    expect(Object.keys(result.steps)).toEqual(["s0", "s1", "s2", "s3", "s4"]);
    // Each restored once, when the run loads its thread; before, each executor visit copied the step records
    // for its route, and the planner's route copied the plan it wrote.
    const count = (key: string) => restored.filter((k) => k === key).length;
    expect([count("steps"), count("plan")]).toEqual([1, 1]);
  });

  it("each route names the channels it reads", () => {
    const routes = [
      routeAfterPlanner,
      routeAfterExecutor,
      routeAfterExtender,
      routeAfterClassifier,
      routeAfterReplanner,
    ];
    expect(routes.map((r) => [r.name, [...r.reads]])).toEqual([
      ["routeAfterPlanner", ["status", "plan", "stop"]],
      ["routeAfterExecutor", ["stop", "deviation", "status", "compensations", "plan", "steps"]],
      ["routeAfterExtender", ["status"]],
      ["routeAfterClassifier", ["decisions", "status", "compensations"]],
      ["routeAfterReplanner", ["status"]],
    ]);
  });

  it("the executor's route sees the step records its node just wrote: the run ends after the last step", async () => {
    const result = (await graph(3).invoke({ goal: "g" } as never, { configurable: { thread_id: "t" } })) as {
      status: string;
      steps: Record<string, { status: string }>;
    };
    expect(result.status).toBe("completed");
    expect(Object.values(result.steps).map((s) => s.status)).toEqual(["succeeded", "succeeded", "succeeded"]);
  });
});

const Counter = Annotation.Root({ n: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }) });

/** A node adding 1 to `n` until its route sees 3, through `narrowRouteReads`; how many times the node ran. */
async function runs(output: (n: number) => unknown, seen: Record<string, SeenWrite>): Promise<number> {
  let ran = 0;
  const counter = new StateGraph(Counter)
    .addNode("step", () => {
      ran += 1;
      return output(1) as { n: number };
    })
    .addEdge(START, "step")
    .addConditionalEdges("step", (s: { n: number }) => (s.n < 3 ? "step" : END));
  type Branches = Parameters<typeof narrowRouteReads>[0];
  narrowRouteReads(counter.branches as unknown as Branches, () => ["n"], seen);
  await counter.compile().invoke({});
  return ran;
}

describe("a route sees its node's write", () => {
  // A `seen` that counts a write twice shows that it was used: the route stops one step early.
  const doubled = { n: (before: unknown, write: unknown) => (before as number) + 2 * (write as number) };

  it("through `seen` for a plain update: two runs with a write counted twice, three with the reducer's sum", async () => {
    expect(await runs((n) => ({ n }), doubled)).toBe(2);
    expect(await runs((n) => ({ n }), { n: (before, write) => (before as number) + (write as number) })).toBe(3);
  });

  it("through LangGraph's fresh read for a Command or a channel `seen` does not name: three runs", async () => {
    expect(await runs((n) => new Command({ update: { n } }), doubled)).toBe(3);
    expect(await runs((n) => ({ n }), {})).toBe(3);
  });

  it("what a route sees of a write is what the channel makes of it, for every channel it sees so", () => {
    const v1: Plan = { version: 1, steps: [{ id: "s1", goal: "Step 1", tool: "work" }], assumptions: [] };
    const values: Record<string, [unknown, unknown]> = {
      steps: [
        { s0: { status: "succeeded", attempts: 1 }, s1: { status: "running", attempts: 1 } },
        { s1: { status: "succeeded", attempts: 1 }, s2: { status: "running", attempts: 1 } },
      ],
      status: ["running", "completed"],
      stop: [null, builtWrite({ requestedAt: "2026-01-01T00:00:00.000Z", reason: "operator" })],
      deviation: [null, null],
      compensations: [[], builtWrite([])],
      plan: [v1, appendToPlan(v1, { steps: [{ id: "s2", goal: "Step 2", tool: "work", dependsOn: ["s1"] }] })],
    };
    expect(Object.keys(SEEN_WRITES).sort()).toEqual(["compensations", "deviation", "plan", "status", "steps", "stop"]);
    type Channel = { fromCheckpoint(c?: unknown): Channel; update(v: unknown[]): boolean; get(): unknown };
    for (const [key, [before, write]] of Object.entries(values)) {
      const channel = (
        PlanManagerState.spec[key as keyof typeof PlanManagerState.spec] as unknown as Channel
      ).fromCheckpoint();
      channel.update([before]);
      const seen = SEEN_WRITES[key as keyof typeof SEEN_WRITES]!(channel.get(), write);
      channel.update([write]);
      const plain = (value: unknown): unknown => JSON.parse(JSON.stringify(value) ?? "null");
      expect([key, plain(seen)]).toEqual([key, plain(channel.get())]);
    }
  });
});

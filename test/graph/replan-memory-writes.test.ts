/**
 * The replanner writes to replan memory only once its decision is made, and a write that fails is
 * reported as a `memory` event: the run goes on as it would have.
 */
import {
  InMemoryStore,
  MemorySaver,
  type BaseStore,
  type Operation,
  type OperationResults,
} from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { AssumptionBrokenError, createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { outcomeKey, templateEntry } from "../../src/policy/memory/memory.js";
import { writeMemory } from "../../src/nodes/replanner/memory-read.js";
import { entryScore } from "../../src/runtime/replan-memory.js";
import { fakeClock } from "../helpers/clock.js";
import { scriptedTool, type Loose } from "../helpers/graph.js";

const plan: PlanDraft = {
  assumptions: [{ id: "primary_up", statement: "the primary source answers" }],
  steps: [
    {
      id: "fetch",
      goal: "Fetch",
      tool: "fetch_primary",
      inputs: ["applicant_id"],
      produces: ["data"],
      assumptions: ["primary_up"],
    },
    {
      id: "summarize",
      goal: "Summarize",
      tool: "summarize",
      inputs: ["data"],
      produces: ["summary"],
      dependsOn: ["fetch"],
    },
  ],
};

const mirror: PlanDraft = {
  steps: [
    { id: "fm", goal: "Fetch from the mirror", tool: "fetch_mirror", inputs: ["applicant_id"], produces: ["data"] },
    { id: "sm", goal: "Summarize", tool: "summarize", inputs: ["data"], produces: ["summary"], dependsOn: ["fm"] },
  ],
};

/** A template that fails validation in this run: its step reads a fact no thread has. */
const broken = [{ id: "needs", goal: "Needs a fact no thread has", tool: "fetch_mirror", inputs: ["missing_fact"] }];
const { revision } = templateEntry({ assumption: "primary_up", steps: broken }, "");

/** `log` records, in order, the planner's replan calls and every write that reaches the store. */
function run(store: BaseStore, log: string[]) {
  const graph = createPlanManager({
    tools: [
      scriptedTool("fetch_primary", [new AssumptionBrokenError("primary_up", "primary source is down")]),
      scriptedTool("fetch_mirror", [(a: Record<string, unknown>) => ({ data: `mirror:${a.applicant_id}` })]),
      scriptedTool("summarize", [(a: Record<string, unknown>) => ({ summary: `summary of ${a.data}` })]),
    ],
    planner: staticPlanner({ plan, replan: () => (log.push("planner.replan"), mirror) }),
    clock: fakeClock(),
    replanMemory: { mode: "reuse" },
    replanTemplates: [{ assumption: "primary_up", steps: broken }],
  }).compile({ checkpointer: new MemorySaver(), store });
  return async () => {
    const config = { configurable: { thread_id: "T" }, streamMode: "custom" as const };
    const events: Loose[] = [];
    for await (const e of await graph.stream({ goal: "g", context: { applicant_id: "A-1" } }, config))
      events.push(e as Loose);
    return { events, state: (await graph.getState(config)).values as Loose };
  };
}

/** LangGraph hands nodes a batching wrapper around the store: writes reach it as put operations. */
class LoggingStore extends InMemoryStore {
  constructor(
    private readonly log: string[],
    private readonly failWrites = false,
  ) {
    super();
  }
  override async batch<Op extends readonly Operation[]>(ops: Op): Promise<OperationResults<Op>> {
    for (const op of ops)
      if ("value" in op) {
        const { namespace, key } = op as unknown as { namespace: string[]; key: string };
        this.log.push(`put ${[...namespace.slice(2), key].join("/")}`);
      }
    if (this.failWrites && ops.some((op) => "value" in op)) throw new Error("store is read-only");
    return super.batch(ops);
  }
}

describe("the replanner's writes to replan memory", () => {
  it("a failure count that cannot be written is a memory event naming the entry; the run completes as before", async () => {
    const log: string[] = [];
    const { events, state } = await run(new LoggingStore(log, true), log)();
    expect(state.status).toBe("completed");
    expect(state.replans[0]).toMatchObject({ source: "planner", newSteps: ["fm", "sm"] });
    expect(
      (state.decisions as Loose[]).filter((d) => d.rule === "replan.memory").map((d) => d.reason as string),
    ).toEqual([
      expect.stringMatching(
        /^entry primary_up:template failed validation \(.*missing_fact.*\); discarded, counted as a failure; planner asked$/,
      ),
    ]);
    expect(events.filter((e) => e.type === "memory")).toEqual([
      {
        type: "memory",
        op: "error",
        key: "primary_up:template",
        reason: `the failure of revision ${revision} was not counted: store is read-only`,
      },
      // The branch the planner wrote settles and is not saved either (nodes/replanner/memory-branch.ts).
      { type: "memory", op: "error", key: state.replans[0].memoryKey, reason: "store is read-only" },
    ]);
  });

  it("the failure count is written after the planner answered, once the replan is decided", async () => {
    const log: string[] = [];
    const store = new LoggingStore(log);
    const { state } = await run(store, log)();
    expect(state.status).toBe("completed");
    expect(log).toEqual([
      "planner.replan",
      `put outcomes/${revision}/${outcomeKey("T::1:invalid")}`,
      // The planner's branch, saved once it completed (nodes/replanner/memory-branch.ts).
      `put ${state.replans[0].memoryKey}`,
    ]);
  });

  it("a write that throws something unprintable is still reported, and the writes after it are made", async () => {
    let calls = 0;
    class FlakyStore extends InMemoryStore {
      override async batch<Op extends readonly Operation[]>(ops: Op): Promise<OperationResults<Op>> {
        if (ops.some((op) => "value" in op) && calls++ === 0)
          throw {
            toString() {
              throw new Error("hostile");
            },
          };
        return super.batch(ops);
      }
    }
    const store = new FlakyStore();
    const events: Loose[] = [];
    const writes = [
      { key: "k1", revision: "0000000000000001", outcome: "T::1:invalid", success: false as const },
      { key: "k2", revision: "0000000000000002", outcome: "T::1:rejected", success: false as const },
    ];
    await writeMemory(store, ["ns"], writes, { writer: (e: unknown) => events.push(e as Loose) });
    expect(events).toEqual([
      {
        type: "memory",
        op: "error",
        key: "k1",
        reason: "the failure of revision 0000000000000001 was not counted: unprintable error",
      },
    ]);
    expect(await entryScore(store, ["ns"], "0000000000000001")).toEqual({ uses: 0, successes: 0 });
    expect(await entryScore(store, ["ns"], "0000000000000002")).toEqual({ uses: 1, successes: 0 });
  });

  it("a settled branch whose save throws something unprintable still completes the run, with a memory event", async () => {
    const log: string[] = [];
    class HostileStore extends LoggingStore {
      override async batch<Op extends readonly Operation[]>(ops: Op): Promise<OperationResults<Op>> {
        if (ops.some((op) => "value" in op))
          throw {
            toString() {
              throw new Error("hostile");
            },
          };
        return super.batch(ops);
      }
    }
    const { events, state } = await run(new HostileStore(log), log)();
    expect(state.status).toBe("completed");
    expect(events.filter((e) => e.type === "memory")).toEqual([
      {
        type: "memory",
        op: "error",
        key: "primary_up:template",
        reason: `the failure of revision ${revision} was not counted: unprintable error`,
      },
      { type: "memory", op: "error", key: state.replans[0].memoryKey, reason: "unprintable error" },
    ]);
  });
});

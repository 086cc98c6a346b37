import { Command, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import type { PlanDraft } from "../../src/index.js";
import { researchGraph, supportGraph } from "../../examples/embedding/subgraph.js";
import { scriptedTool } from "../helpers/graph.js";

describe("embedding the plan manager", () => {
  it("works as a subgraph node: its interrupt surfaces in the parent and resume finishes both", async () => {
    const plan: PlanDraft = {
      steps: [
        { id: "lookup", goal: "Look up the order", tool: "lookup_order", inputs: ["ticket"], produces: ["order"] },
        {
          id: "approve",
          goal: "Approve the refund",
          human: { prompt: "Refund this order?" },
          dependsOn: ["lookup"],
          inputs: ["order"],
          produces: ["approved"],
        },
        {
          id: "refund",
          goal: "Refund",
          tool: "refund",
          dependsOn: ["approve"],
          inputs: ["order"],
          produces: ["resolution"],
        },
      ],
    };
    const lookup = scriptedTool("lookup_order", [{ order: "O-1" }]);
    const refund = scriptedTool("refund", [{ resolution: "refunded O-1" }]);
    const graph = supportGraph([lookup, refund], plan).compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "ticket-9" } };
    const paused: Record<string, any> = await graph.invoke({ ticket: "Broken blender, order O-1" }, config);
    expect(paused.__interrupt__[0].value).toMatchObject({
      kind: "human_step",
      stepId: "approve",
      reason: "Refund this order?",
    });
    // The parent sees the manager's keys when the subgraph returns; while it is paused, its
    // own state is read through the subgraph snapshot.
    const snapshot = await graph.getState(config, { subgraphs: true });
    expect(snapshot.next).toEqual(["plan_manager"]);
    const inner = snapshot.tasks[0]?.state as { values: Record<string, any> } | undefined;
    expect(inner?.values.status).toBe("awaiting_human");
    expect(inner?.values.steps.lookup.status).toBe("succeeded");

    const out: Record<string, any> = await graph.invoke(
      new Command({ resume: { action: "complete", output: { approved: true } } }),
      config,
    );
    expect(out.status).toBe("completed");
    expect(out.reply).toBe("Resolved: refunded O-1");
    expect(out.goal).toBe("Resolve ticket: Broken blender, order O-1");
    expect(lookup.calls).toHaveLength(1);
    expect(refund.calls).toEqual([{ order: "O-1" }]);
  });

  it("refuses a second concurrent resume of the parent on one thread: the subgraph's refund runs once", async () => {
    const plan: PlanDraft = {
      steps: [
        { id: "lookup", goal: "Look up the order", tool: "lookup_order", inputs: ["ticket"], produces: ["order"] },
        {
          id: "approve",
          goal: "Approve",
          human: { prompt: "Refund?" },
          dependsOn: ["lookup"],
          inputs: ["order"],
          produces: ["approved"],
        },
        {
          id: "refund",
          goal: "Refund",
          tool: "refund",
          dependsOn: ["approve"],
          inputs: ["order"],
          produces: ["resolution"],
        },
      ],
    };
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const refund = scriptedTool("refund", [async () => (await gate, { resolution: "refunded O-1" })]);
    const graph = supportGraph([scriptedTool("lookup_order", [{ order: "O-1" }]), refund], plan).compile({
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "ticket-busy" } };
    await graph.invoke({ ticket: "Broken blender, order O-1" }, config);
    const answer = { action: "complete", output: { approved: true } };
    // Both resumes start from the parent's same checkpoint, so both schedule the same subgraph task.
    const first = graph.invoke(new Command({ resume: answer }), config);
    const second = await graph.invoke(new Command({ resume: answer }), config).then(
      () => undefined,
      (e: { code?: string }) => e.code,
    );
    release();
    expect(second).toBe("thread_busy");
    expect((await first).reply).toBe("Resolved: refunded O-1");
    expect(refund.calls).toHaveLength(1);
    expect((await graph.getState(config)).values.status).toBe("completed");
  });

  it("keeps the manager's default recursionLimit when embedded: a 30-step plan finishes under a parent's default of 25", async () => {
    const steps: PlanDraft["steps"] = [
      { id: "s0", goal: "Step 0", tool: "work", inputs: ["ticket"], produces: ["f0"] },
    ];
    for (let i = 1; i < 30; i++)
      steps.push({ id: `s${i}`, goal: `Step ${i}`, tool: "work", dependsOn: [`s${i - 1}`], produces: [`f${i}`] });
    steps.push({ id: "close", goal: "Close", tool: "close", dependsOn: ["s29"], produces: ["resolution"] });
    const work = scriptedTool("work", [
      (_: unknown, c: any) => ({ [`f${String(c.configurable.stepId).slice(1)}`]: 1 }),
    ]);
    const graph = supportGraph([work, scriptedTool("close", [{ resolution: "closed" }])], { steps }).compile({
      checkpointer: new MemorySaver(),
    });
    const out = await graph.invoke({ ticket: "T-1" }, { configurable: { thread_id: "long" } });
    expect([out.status, out.reply, work.calls.length]).toEqual(["completed", "Resolved: closed", 30]);
  });

  it("can be called from a wrapper node with a different state", async () => {
    const plan: PlanDraft = {
      steps: [
        { id: "search", goal: "Search", tool: "search", inputs: ["question"], produces: ["sources"] },
        { id: "extra", goal: "Extra source", tool: "extra", optional: true, produces: ["extra"] },
        { id: "write", goal: "Write", tool: "write", dependsOn: ["search"], inputs: ["sources"], produces: ["answer"] },
      ],
    };
    const graph = researchGraph(
      [
        scriptedTool("search", [{ sources: ["a", "b"] }]),
        scriptedTool("extra", [Object.assign(new Error("forbidden"), { status: 403 })]),
        scriptedTool("write", [{ answer: "Two sources agree." }]),
      ],
      plan,
    ).compile({ checkpointer: new MemorySaver() });
    const out = await graph.invoke({ question: "Is Acme SOC 2 compliant?" }, { configurable: { thread_id: "r1" } });
    expect(out).toEqual({
      question: "Is Acme SOC 2 compliant?",
      answer: "Two sources agree.",
      caveats: ['"Extra source" did not run (optional step failed: forbidden); missing: extra'],
    });
  });
});

import { Command, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { supportGraph } from "../../examples/embedding/subgraph.js";
import { isPlanManagerError, type PlanManagerError } from "../../src/errors.js";
import { requestScopeChange } from "../../src/graph/scope-change.js";
import { resumeRun } from "../../src/graph/resume-run.js";
import { staticPlanner } from "../../src/planners/static-planner.js";
import type { PlanDraft } from "../../src/plan/schema/plan.js";
import { brief, harness, scriptedTool, type Loose } from "../helpers/graph.js";

/** lookup (tool) → approve (a person) → refund (tool): the support ticket of examples/embedding. */
const ticketPlan: PlanDraft = {
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

/** The global replan a scope change asks for: notify the customer before the refund. */
const notifyFirst = (): PlanDraft => ({
  steps: [
    {
      id: "notify",
      goal: "Notify the customer",
      tool: "notify",
      dependsOn: ["approve"],
      inputs: ["order"],
      produces: ["notified"],
    },
    { ...ticketPlan.steps[2]!, dependsOn: ["notify"] },
  ],
});

function ticketTools() {
  const lookup = scriptedTool("lookup_order", [{ order: "O-1" }]);
  const notify = scriptedTool("notify", [{ notified: true }]);
  const refund = scriptedTool("refund", [{ resolution: "refunded O-1" }]);
  return { lookup, notify, refund, tools: [lookup, notify, refund] };
}

const approve = { action: "complete", output: { approved: true } } as const;

async function failure(promise: Promise<unknown>): Promise<PlanManagerError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isPlanManagerError(error)) throw new Error(`expected a PlanManagerError, got ${String(error)}`);
  return error;
}

/** The paused manager's own state inside the parent (its checkpoint namespace). */
async function innerState(
  graph: ReturnType<ReturnType<typeof supportGraph>["compile"]>,
  config: object,
): Promise<Loose> {
  const snapshot = await graph.getState(config, { subgraphs: true });
  const inner = snapshot.tasks[0]?.state as { values: Loose } | undefined;
  if (!inner) throw new Error("the parent has no paused subgraph task");
  return inner.values;
}

describe("requestScopeChange on a standalone manager", () => {
  it("keeps the pending human answer, does not re-run finished steps, and replans at the next step boundary", async () => {
    const t = ticketTools();
    const h = harness(staticPlanner({ plan: ticketPlan, replan: notifyFirst }), t.tools, {
      context: { ticket: "T-9" },
    });
    const paused = await h.run();
    expect(paused.__interrupt__[0].value).toMatchObject({ kind: "human_step", stepId: "approve" });

    await requestScopeChange(h.graph, h.config, "also notify the customer");
    const snapshot = await h.graph.getState(h.config);
    expect([snapshot.values.status, snapshot.values.scopeChanges]).toEqual([
      "awaiting_human",
      ["also notify the customer"],
    ]);
    // The same question is still pending on the thread's latest checkpoint.
    expect(snapshot.tasks.flatMap((task) => task.interrupts.map((i) => i.value))).toEqual([
      paused.__interrupt__[0].value,
    ]);

    const out = await h.run(new Command({ resume: approve }));
    expect(out.status).toBe("completed");
    expect([t.lookup.calls.length, t.notify.calls.length, t.refund.calls.length]).toEqual([1, 1, 1]);
    expect(out.steps.approve).toMatchObject({ status: "succeeded", attempts: 1, output: { approved: true } });
    expect(out.plan.steps.map((s: { id: string }) => s.id)).toEqual(["lookup", "approve", "notify", "refund"]);
    expect(brief(out.decisions)).toEqual([
      "approve: person → complete [human.complete]",
      "-: scope_changed → replan_global [scope.replan-global]",
    ]);
    expect(out.replans[0]).toMatchObject({
      scope: "global",
      preservedSteps: ["lookup", "approve"],
      newSteps: ["notify"],
    });
    expect(out.scopeChanges).toEqual([]);
  });

  it("resumeRun still answers the pending question after a scope change", async () => {
    const t = ticketTools();
    const h = harness(staticPlanner({ plan: ticketPlan, replan: notifyFirst }), t.tools, {
      context: { ticket: "T-9" },
    });
    await h.run();
    await requestScopeChange(h.graph, h.config, "also notify the customer");
    const out = (await resumeRun(h.graph, h.config, approve)) as Loose;
    expect(out.status).toBe("completed");
    expect([t.lookup.calls.length, t.notify.calls.length, t.refund.calls.length]).toEqual([1, 1, 1]);
  });

  it("refuses a thread with no manager state, a running thread and a finished thread with invalid_update", async () => {
    const t = ticketTools();
    const h = harness(staticPlanner({ plan: ticketPlan, replan: notifyFirst }), t.tools, {
      context: { ticket: "T-9" },
    });
    const fresh = await failure(requestScopeChange(h.graph, h.config, "also notify"));
    expect([fresh.code, fresh.path]).toEqual(["invalid_update", "scopeChanges"]);
    expect(fresh.message).toBe(
      'thread "t1" has no plan manager state: start a run first (a scope change is taken while a run is paused)',
    );

    await h.run();
    await h.run(new Command({ resume: approve }));
    const done = await failure(requestScopeChange(h.graph, h.config, "also notify"));
    expect(done.code).toBe("invalid_update");
    expect(done.message).toBe(
      'thread "t1" is not paused (status: completed): a scope change is taken while the run waits for a person; ' +
        "this run has finished, so start a new run with the changed goal",
    );
    expect((await h.state()).scopeChanges).toEqual([]);
  });

  it("refuses a thread whose run is in progress", async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const slow = scriptedTool("lookup_order", [async () => (await gate, { order: "O-1" })]);
    const t = ticketTools();
    const h = harness(staticPlanner({ plan: ticketPlan, replan: notifyFirst }), [slow, t.notify, t.refund], {
      context: { ticket: "T-9" },
    });
    const run = h.run();
    await new Promise((r) => setTimeout(r, 30));
    const busy = await failure(requestScopeChange(h.graph, h.config, "also notify"));
    expect(busy.message).toBe(
      'thread "t1" is not paused (status: running): a scope change is taken while the run waits for a person; ' +
        "wait for the run to pause (an interrupt), then request it",
    );
    release();
    expect((await run).status).toBe("awaiting_human");
  });
});

describe("requestScopeChange on a manager embedded as a subgraph node", () => {
  it("README's parent.updateState(config, { scopeChanges }) drops the interrupt and restarts the plan (why the helper exists)", async () => {
    const t = ticketTools();
    const graph = supportGraph(t.tools, ticketPlan, { replan: notifyFirst }).compile({
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "ticket-1" } };
    await graph.invoke({ ticket: "Broken blender, order O-1" }, config);
    await graph.updateState(config, { scopeChanges: ["also notify the customer"] });
    const out: Loose = await graph.invoke(new Command({ resume: approve }), config);
    // The subgraph task was started afresh: the finished lookup ran again and the answer was lost.
    expect(t.lookup.calls).toHaveLength(2);
    expect(out.__interrupt__[0].value).toMatchObject({ kind: "human_step", stepId: "approve" });
  });

  it("updates the paused subgraph's own checkpoint: the answer is honoured, lookup runs once, the replan adds notify", async () => {
    const t = ticketTools();
    const graph = supportGraph(t.tools, ticketPlan, { replan: notifyFirst }).compile({
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "ticket-2" } };
    await graph.invoke({ ticket: "Broken blender, order O-1" }, config);

    const updated = await requestScopeChange(graph, config, "also notify the customer");
    expect(updated.configurable?.checkpoint_ns).toMatch(/^plan_manager:/);
    const inner = await innerState(graph, config);
    expect([inner.status, inner.scopeChanges]).toEqual(["awaiting_human", ["also notify the customer"]]);

    const out: Loose = await graph.invoke(new Command({ resume: approve }), config);
    expect(out.status).toBe("completed");
    expect(out.reply).toBe("Resolved: refunded O-1");
    expect([t.lookup.calls.length, t.notify.calls.length, t.refund.calls.length]).toEqual([1, 1, 1]);
    expect(brief(out.decisions)).toEqual([
      "approve: person → complete [human.complete]",
      "-: scope_changed → replan_global [scope.replan-global]",
    ]);
    expect(out.plan.steps.map((s: { id: string }) => s.id)).toEqual(["lookup", "approve", "notify", "refund"]);
  });

  it("resumeRun on the parent reads the subgraph's pending interrupt and finishes the run", async () => {
    const t = ticketTools();
    const graph = supportGraph(t.tools, ticketPlan, { replan: notifyFirst }).compile({
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "ticket-3" } };
    await graph.invoke({ ticket: "Broken blender, order O-1" }, config);
    await requestScopeChange(graph, config, "also notify the customer");
    const out = (await resumeRun(graph, config, approve)) as Loose;
    expect([out.status, out.reply]).toEqual(["completed", "Resolved: refunded O-1"]);
    expect([t.lookup.calls.length, t.notify.calls.length, t.refund.calls.length]).toEqual([1, 1, 1]);
  });

  it("refuses when the embedded run has finished", async () => {
    const t = ticketTools();
    const graph = supportGraph(t.tools, ticketPlan, { replan: notifyFirst }).compile({
      checkpointer: new MemorySaver(),
    });
    const config = { configurable: { thread_id: "ticket-4" } };
    await graph.invoke({ ticket: "Broken blender, order O-1" }, config);
    await graph.invoke(new Command({ resume: approve }), config);
    const done = await failure(requestScopeChange(graph, config, "also notify"));
    expect(done.message).toBe(
      'thread "ticket-4" is not paused (status: completed): a scope change is taken while the run waits for a person; ' +
        "this run has finished, so start a new run with the changed goal",
    );
  });
});

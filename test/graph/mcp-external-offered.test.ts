/**
 * Several external steps offered at once, over MCP with the official SDK client
 * (docs/decisions/0042-external-steps.md): `plan_next` lists every step offered, `plan_submit` takes
 * any of them in any order, and the task's status message names them all.
 */
import type { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { PlanService } from "../../src/mcp/index.js";
import { scriptedTool } from "../helpers/graph.js";
import { connectInMemory, tempSqlite } from "../helpers/mcp.js";

let saver: SqliteSaver;
let drop: () => void;

beforeEach(() => void ({ saver, drop } = tempSqlite("mcp-offered-")));
afterEach(() => drop());

const PACK = "Pack the parcel; answer with its parcel id";
const LABEL = "Buy postage and print the label; answer with the tracking number";
const TELL = "Email the customer the tracking number";

const draft: PlanDraft = {
  steps: [
    {
      id: "pack",
      goal: "pack the parcel",
      external: { instructions: PACK },
      produces: ["parcel"],
      retry: { maxAttempts: 3, backoff: "none" },
    },
    {
      id: "label",
      goal: "print the label",
      external: { instructions: LABEL },
      produces: ["tracking"],
      sideEffects: ["buys postage"],
      idempotent: false,
    },
    {
      id: "tell",
      goal: "tell the customer",
      external: { instructions: TELL },
      dependsOn: ["label"],
      inputs: ["tracking"],
    },
    { id: "ship", goal: "hand it over", tool: "ship", dependsOn: ["pack", "label"], inputs: ["parcel", "tracking"] },
  ],
};

function served() {
  const ship = scriptedTool("ship", [{ shipped: true }]);
  const graph = createPlanManager({ tools: [ship], planner: staticPlanner({ plan: draft }) }).compile({
    checkpointer: saver,
  });
  const service = new PlanService({
    graphs: { shop: graph },
    saver,
    server: { name: "langgraph-replan", version: "t" },
  });
  return { service, ship };
}

describe("several external steps over MCP", () => {
  it("plan_next lists every step offered; plan_submit takes any, in any order, each on its own ladder", async () => {
    const { service, ship } = served();
    const { client, call, close } = await connectInMemory(service);
    const planId = (await call("plan_create", { goal: "ship an order" })).structuredContent.plan_id as string;
    expect((await call("plan_wait", { plan_id: planId, timeout_s: 300 })).structuredContent.status).toBe(
      "awaiting_human",
    );
    const next = await call("plan_next", { plan_id: planId });
    expect(next.isError).toBeUndefined();
    const [pack, label] = next.structuredContent.steps;
    expect(next.structuredContent.steps).toHaveLength(2);
    // Each as the question of that step alone: its own instructions, key and attempt.
    expect(pack).toEqual({
      kind: "external_step",
      reason: PACK,
      stepId: "pack",
      planVersion: 1,
      options: ["submit", "skip", "abort"],
      context: {
        goal: "ship an order",
        step: { id: "pack", goal: "pack the parcel", instructions: PACK },
        inputs: {},
        produces: ["parcel"],
        attempt: 1,
      },
    });
    // `skip` skips the question's own step (the first): the others' entries do not offer it.
    expect(label).toEqual({
      kind: "external_step",
      reason: LABEL,
      stepId: "label",
      planVersion: 1,
      options: ["submit", "abort"],
      context: {
        goal: "ship an order",
        step: { id: "label", goal: "print the label", instructions: LABEL },
        inputs: {},
        produces: ["tracking"],
        attempt: 1,
        idempotencyKey: label.context.idempotencyKey,
        sideEffects: ["buys postage"],
      },
    });
    expect(label.context.idempotencyKey).toMatch(new RegExp(`^${planId}:[0-9a-f]{16}$`));
    const task = await client.experimental.tasks.getTask(planId);
    expect([task.status, task.statusMessage]).toEqual([
      "input_required",
      `2 external steps are yours to do, in any order (plan_next, then plan_submit each): "pack": ${PACK}; "label": ${LABEL}`,
    ]);

    // The second first: the first stays offered, and the step it made ready joins it.
    const submitted = await call("plan_submit", { plan_id: planId, step_id: "label", output: { tracking: "TRK-7" } });
    expect(submitted.structuredContent).toEqual({ plan_id: planId, status: "running" });
    await call("plan_wait", { plan_id: planId, timeout_s: 300 });
    const ids = async () =>
      (await call("plan_next", { plan_id: planId })).structuredContent.steps.map(
        (s: any) => `${s.stepId}@${s.context.attempt}`,
      );
    expect(await ids()).toEqual(["pack@1", "tell@1"]);
    expect((await call("plan_next", { plan_id: planId })).structuredContent.steps[1].context.inputs).toEqual({
      tracking: "TRK-7",
    });

    // A step not offered (any more) is refused, naming the steps that are.
    const refused = await call("plan_submit", { plan_id: planId, step_id: "label", output: { tracking: "TRK-8" } });
    expect(refused.isError).toBe(true);
    expect(JSON.parse(refused.content[0]!.text)).toEqual({
      error: "invalid_resume",
      message: `plan "${planId}", external_step: submit names step "label", but the steps waiting for the calling agent are "pack", "tell"`,
      path: "answer",
    });

    // A transient error on one: that step is offered again as attempt 2, the other as it was.
    await call("plan_submit", {
      plan_id: planId,
      step_id: "pack",
      error: { message: "the tape ran out", class: "transient" },
    });
    await call("plan_wait", { plan_id: planId, timeout_s: 300 });
    expect(await ids()).toEqual(["pack@2", "tell@1"]);
    const retried = (await call("plan_next", { plan_id: planId })).structuredContent.steps[0];
    expect(retried.context.previousError).toBe("the tape ran out");

    await call("plan_submit", { plan_id: planId, step_id: "tell", output: {} });
    await call("plan_wait", { plan_id: planId, timeout_s: 300 });
    expect(await ids()).toEqual(["pack@2"]);
    await call("plan_submit", { plan_id: planId, step_id: "pack", output: { parcel: "P-1" } });
    const ended = await call("plan_wait", { plan_id: planId, timeout_s: 300 });
    expect(ended.structuredContent.status).toBe("completed");
    expect(ended.structuredContent.steps.map((s: any) => [s.id, s.status, s.attempts])).toEqual([
      ["pack", "succeeded", 2],
      ["label", "succeeded", 1],
      ["tell", "succeeded", 1],
      ["ship", "succeeded", 1],
    ]);
    expect(ship.calls).toEqual([{ parcel: "P-1", tracking: "TRK-7" }]);
    const report = (await call("plan_report", { plan_id: planId, format: "json" })).structuredContent.report;
    // One decision (the retry), five attempts: pack twice, label, tell and ship once each.
    expect([report.metrics.decisions, report.metrics.toolAttempts]).toEqual([1, 5]);
    await close();
  });
});

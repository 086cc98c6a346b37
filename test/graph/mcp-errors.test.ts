/**
 * The plan service's errors as an MCP client reads them: every refusal, the input schemas' own
 * included, is an `isError` result whose text is `{ error, message, path? }`, its `path` naming the
 * tool's own argument; and the refusals that say what to call instead.
 */
import Database from "better-sqlite3";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { PlanService } from "../../src/mcp/index.js";
import { scriptedTool } from "../helpers/graph.js";
import { connectInMemory, tempSqlite } from "../helpers/mcp.js";

let db: Database.Database;
let saver: SqliteSaver;
let drop: () => void;

beforeEach(() => void ({ db, saver, drop } = tempSqlite("mcp-errors-")));
afterEach(() => drop());

function served(draft: PlanDraft, gate?: Promise<void>) {
  const forecast = scriptedTool("forecast", [
    async () => {
      await gate;
      return { forecast: "sunny" };
    },
  ]);
  const planDay = scriptedTool("planDay", [{ day: "picnic" }]);
  const graph = createPlanManager({ tools: [forecast, planDay], planner: staticPlanner({ plan: draft }) }).compile({
    checkpointer: saver,
  });
  return new PlanService({ graphs: { weather: graph }, saver, server: { name: "langgraph-replan", version: "test" } });
}

const twoSteps: PlanDraft = {
  steps: [
    { id: "fetch", goal: "fetch the forecast", tool: "forecast", produces: ["forecast"] },
    { id: "plan", goal: "plan the day", tool: "planDay", dependsOn: ["fetch"], inputs: ["forecast"] },
  ],
};

async function connect(service: PlanService) {
  const { call, close } = await connectInMemory(service);
  /** The error result's payload (and that it is one). */
  const error = async (name: string, args: Record<string, unknown>) => {
    const result = await call(name, args);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    return JSON.parse(result.content[0]!.text) as { error: string; message: string; path?: string };
  };
  return { call, error, close };
}

const checkpoints = () => db.prepare("SELECT count(*) AS n FROM checkpoints").get();

describe("MCP errors name the tool's own arguments", () => {
  it("a malformed plan is reported at plan.…, an unknown parent_plan_id at parent_plan_id; nothing is written", async () => {
    const { error, close } = await connect(served(twoSteps));
    expect(await error("plan_create", { goal: "g", plan: { steps: [{ id: "a" }] } })).toEqual({
      error: "invalid_input",
      message: "input: plan.steps.0.goal: Invalid input: expected string, received undefined",
      path: "plan.steps.0.goal",
    });
    const big = { steps: [{ id: "only", goal: "plan", tool: "planDay", args: { forecast: "x".repeat(70_000) } }] };
    expect(await error("plan_create", { goal: "g", plan: big })).toEqual({
      error: "invalid_input",
      message: "input: plan.steps.0.args is 70015 bytes of JSON, over the 64000-byte fact limit",
      path: "plan.steps.0.args",
    });
    expect(await error("plan_create", { goal: "g", parent_plan_id: "nope--weather" })).toEqual({
      error: "invalid_input",
      message: 'parent_plan_id: no plan "nope--weather" (plan ids come from plan_create or plan_list)',
      path: "parent_plan_id",
    });
    expect(await error("plan_create", { goal: "g", parent_plan_id: "no-graph-suffix" })).toMatchObject({
      path: "parent_plan_id",
    });
    expect(checkpoints()).toEqual({ n: 0 });
    await close();
  });

  it("arguments the input schema refuses come back as { error, message, path }, not as protocol text", async () => {
    const { call, error, close } = await connect(served(twoSteps));
    expect(await error("plan_wait", { plan_id: "nope--weather", timeout_s: 301 })).toEqual({
      error: "invalid_input",
      message: "plan_wait: timeout_s: Too big: expected number to be <=300 (see the tool's inputSchema)",
      path: "timeout_s",
    });
    expect(await error("plan_status", {})).toEqual({
      error: "invalid_input",
      message: "plan_status: plan_id: Invalid input: expected string, received undefined (see the tool's inputSchema)",
      path: "plan_id",
    });
    expect(await error("plan_make", {})).toEqual({
      error: "invalid_input",
      message:
        'no tool "plan_make" (tools: plan_create, plan_answer, plan_stop, plan_resume, plan_status, plan_wait, ' +
        "plan_list, plan_report, plan_archive, plan_delete, plan_next, plan_submit)",
      path: "name",
    });
    expect(await error("plan_list", { archived: "all" })).toMatchObject({ error: "invalid_input", path: "archived" });
    expect(await error("plan_submit", { plan_id: "p--weather", step_id: "s", error: { class: "x" } })).toMatchObject({
      error: "invalid_input",
      path: "error.message",
    });
    expect((await call("plan_list", {})).structuredContent!.plans).toEqual([]);
    await close();
  });

  it("plan_submit with an output lacking a key the step produces is refused up front, naming the keys", async () => {
    const external: PlanDraft = {
      steps: [
        {
          id: "book",
          goal: "book a table",
          external: { instructions: "book it" },
          produces: ["booking", "time"],
        },
      ],
    };
    const { call, error, close } = await connect(served(external));
    const planId = (await call("plan_create", { goal: "dinner" })).structuredContent!.plan_id as string;
    expect((await call("plan_wait", { plan_id: planId, timeout_s: 300 })).structuredContent!.status).toBe(
      "awaiting_human",
    );
    const before = checkpoints();
    expect(await error("plan_submit", { plan_id: planId, step_id: "book", output: { booking: "T-1" } })).toEqual({
      error: "invalid_resume",
      message: `plan "${planId}", external_step: output is missing time, which step "book" must produce`,
      path: "answer",
    });
    expect(checkpoints()).toEqual(before);
    expect((await call("plan_next", { plan_id: planId })).structuredContent!.steps[0].context.attempt).toBe(1);
    await call("plan_submit", { plan_id: planId, step_id: "book", output: { booking: "T-1", time: "19:00" } });
    const done = await call("plan_wait", { plan_id: planId, timeout_s: 300 });
    expect(done.structuredContent).toMatchObject({
      status: "completed",
      steps: [{ status: "succeeded", attempts: 1 }],
    });
    await close();
  });

  it("plan_answer on a stopped plan says to carry it on with plan_resume", async () => {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const service = served(twoSteps, gate);
    const { call, error, close } = await connect(service);
    const planId = (await call("plan_create", { goal: "stop me" })).structuredContent!.plan_id as string;
    const stopping = call("plan_stop", { plan_id: planId });
    open();
    expect((await stopping).structuredContent!.status).toBe("stopped");
    await service.settled();
    expect(await error("plan_answer", { plan_id: planId, answer: { action: "approve" } })).toEqual({
      error: "invalid_resume",
      message: `plan "${planId}" has no pending question (status: stopped): it was stopped; carry it on with plan_resume`,
    });
    await close();
  });
});

import { describe, expect, it } from "vitest";
import { AssumptionBrokenError, staticPlanner } from "../../src/index.js";
import { debugView, operatorView, userView } from "../../src/views/index.js";
import type { PlanDraft } from "../../src/plan/schema/plan.js";
import { requestStop } from "../../src/worker/stop-run.js";
import { harness, scriptedTool } from "../helpers/graph.js";

/** prep → fetch (rests on mirror_up) → build; fetch finds the mirror down and a local replan fetches from a backup. */
const mirrorPlan: PlanDraft = {
  assumptions: [{ id: "mirror_up", statement: "the mirror is up" }],
  steps: [
    { id: "prep", goal: "Prepare", tool: "prep", produces: ["p"] },
    { id: "fetch", goal: "Fetch", tool: "fetch", assumptions: ["mirror_up"], dependsOn: ["prep"], produces: ["data"] },
    { id: "build", goal: "Build", tool: "build", dependsOn: ["fetch"], inputs: ["data"], produces: ["artifact"] },
  ],
};

async function replannedRun() {
  const replan = (): PlanDraft => ({
    steps: [
      { id: "fetch_b", goal: "Fetch from backup", tool: "fetch_b", dependsOn: ["prep"], produces: ["data"] },
      { ...mirrorPlan.steps[2]!, dependsOn: ["fetch_b"] },
    ],
  });
  const tools = [
    scriptedTool("prep", [{ p: 1 }]),
    scriptedTool("fetch", [new AssumptionBrokenError("mirror_up", "mirror down")]),
    scriptedTool("fetch_b", [{ data: 1 }]),
    scriptedTool("build", [{ artifact: 1 }]),
  ];
  return harness(staticPlanner({ plan: mirrorPlan, replan }), tools).run();
}

describe("views of finished, replanned and stopped runs", () => {
  it("the operator view of a finished run shows no current step", async () => {
    const out = await replannedRun();
    expect(out.status).toBe("completed");
    expect(operatorView(out as never, { now: 0 }).slice(0, 2)).toEqual(["step: -", "status: completed"]);
  });

  it("the debug view lists a replaced step once", async () => {
    const out = await replannedRun();
    const lines = debugView(out as never);
    const section = lines.slice(lines.indexOf("steps:") + 1, lines.indexOf("decisions:"));
    const steps = section.filter((l) => /^ {2}\S/.test(l));
    expect(steps.map((l) => l.split(", cost")[0]!.trim())).toEqual([
      "prep: succeeded, 1 attempt",
      "fetch_b: succeeded, 1 attempt",
      "build: succeeded, 1 attempt",
      "fetch (v1): failed → invalidated, 1 attempt",
    ]);
  });

  it("the user view lists steps in the order they run, whatever their order in the plan", () => {
    const step = (id: string, dependsOn: string[] = []) => ({ id, goal: `Do ${id}`, tool: "t", dependsOn });
    const state = {
      plan: {
        version: 2,
        steps: [step("prep"), step("build", ["fetch_b"]), step("fetch_b", ["prep"])],
        assumptions: [],
      },
      steps: {
        prep: { status: "succeeded", attempts: 1 },
        fetch_b: { status: "succeeded", attempts: 1 },
        build: { status: "running", attempts: 1 },
      },
      status: "running",
      outcome: undefined,
    };
    expect(userView(state as never)).toEqual(["✓ Do prep", "✓ Do fetch_b", "… Do build"]);
  });

  it("a stopped thread's user view does not say it waits for a person", async () => {
    const plan: PlanDraft = { steps: [{ id: "ask", goal: "Ask", human: { prompt: "Go?" } }] };
    const h = harness(plan, []);
    await h.run();
    await requestStop(h.graph, h.config, { now: () => 0 });
    const stopped = await h.state();
    expect(stopped.status).toBe("stopped");
    expect(userView(stopped as never)).toEqual(["… Ask", "Stopped by an operator; it can be resumed."]);
  });
});

import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import {
  AssumptionBrokenError,
  createPlanManager,
  staticPlanner,
  type PlanDraft,
  type ReplanRequest,
} from "../../src/index.js";
import { fakeClock } from "../helpers/clock.js";
import { brief, harness, scriptedTool } from "../helpers/graph.js";

/** The issue's plan: `fetch` rests on `mirror_up`; `build` needs `data` and produces `artifact`. */
const mirrorPlan: PlanDraft = {
  steps: [
    { id: "fetch", goal: "fetch the data", tool: "fetch", produces: ["data"], assumptions: ["mirror_up"] },
    {
      id: "build",
      goal: "build the artifact",
      tool: "build",
      dependsOn: ["fetch"],
      inputs: ["data"],
      produces: ["artifact"],
    },
  ],
  assumptions: [{ id: "mirror_up", statement: "the mirror serves the data" }],
};

const backup: PlanDraft = {
  steps: [{ id: "fetch_b", goal: "fetch the data from the backup", tool: "fetch_backup", produces: ["data"] }],
};

function mirrorTools() {
  return [
    scriptedTool("fetch", [new AssumptionBrokenError("mirror_up", "the mirror is down")]),
    scriptedTool("fetch_backup", [{ data: "d" }]),
    scriptedTool("build", [{ artifact: "a" }]),
  ];
}

describe("replan drafts", () => {
  it("sends an invalid replan draft back to the planner once with its typed issues", async () => {
    const requests: ReplanRequest[] = [];
    const wrong: PlanDraft = { steps: [{ id: "fetch_b", goal: "fetch", tool: "ftp_fetch", produces: ["data"] }] };
    const planner = staticPlanner({
      plan: mirrorPlan,
      replan: (r) => (requests.push(r), requests.length === 1 ? wrong : backup),
    });
    const out = await harness(planner, mirrorTools()).run();
    expect(out.status).toBe("completed");
    expect(requests).toHaveLength(2);
    expect(requests[0]!.issues).toBeUndefined();
    expect(requests[1]!.issues).toEqual([
      {
        code: "unknown_tool",
        path: ["steps", 0, "tool"],
        stepId: "fetch_b",
        message:
          'step "fetch_b" names tool "ftp_fetch", which is not in the registry (registered: fetch, fetch_backup, build)',
      },
    ]);
    expect(brief(out.decisions)).toEqual(["fetch: assumption_broken → replan_local [assumption.replan-local]"]);
    expect(out.guards.count).toBe(1);
  });

  it("escalates with replan.invalid-draft when the draft sent back is still invalid", async () => {
    const requests: ReplanRequest[] = [];
    const wrong: PlanDraft = { steps: [{ id: "fetch_b", goal: "fetch", tool: "ftp_fetch", produces: ["data"] }] };
    const planner = staticPlanner({ plan: mirrorPlan, replan: (r) => (requests.push(r), wrong) });
    const out = await harness(planner, mirrorTools()).run();
    expect(out.status).toBe("awaiting_human");
    expect(requests).toHaveLength(2);
    expect(brief(out.decisions)).toEqual([
      "fetch: assumption_broken → replan_local [assumption.replan-local]",
      "fetch: assumption_broken → escalate [replan.invalid-draft]",
    ]);
  });

  it("policy.replanDraftRetries 0 escalates the first invalid draft", async () => {
    const requests: ReplanRequest[] = [];
    const wrong: PlanDraft = { steps: [{ id: "fetch_b", goal: "fetch", tool: "ftp_fetch", produces: ["data"] }] };
    const planner = staticPlanner({ plan: mirrorPlan, replan: (r) => (requests.push(r), wrong) });
    const out = await harness(planner, mirrorTools(), { policy: { replanDraftRetries: 0 } }).run();
    expect(out.status).toBe("awaiting_human");
    expect(requests).toHaveLength(1);
  });

  it("checks policy.replanDraftRetries where it enters, naming the field", () => {
    expect(() => harness(mirrorPlan, mirrorTools(), { policy: { replanDraftRetries: -1 } })).toThrow(
      expect.objectContaining({ code: "invalid_options", path: "policy.replanDraftRetries" }),
    );
  });

  it("keeps an affected step that has not run and does not rest on the broken assumption, re-wired to the replacement", async () => {
    const tools = mirrorTools();
    const planner = staticPlanner({ plan: mirrorPlan, replan: () => backup });
    const out = await harness(planner, tools).run();
    expect(out.status).toBe("completed");
    expect(out.plan.steps.map((s: { id: string; dependsOn?: string[] }) => [s.id, s.dependsOn ?? []])).toEqual([
      ["fetch_b", []],
      ["build", ["fetch_b"]],
    ]);
    expect(out.facts.artifact.value).toBe("a");
    expect(out.outcome.summary).toBe('Completed "test goal": 2 of 2 steps succeeded after 1 replan (plan v2).');
    expect(out.replans[0].invalidatedSteps).toEqual(["fetch"]);
    expect(out.replans[0].newSteps).toEqual(["fetch_b"]);
    expect(out.replans[0].changedSteps).toEqual(["build"]);
    expect(tools[2]!.calls).toEqual([{ data: "d" }]);
  });

  it("keeps the step in a thread that reuses the fix from replan memory", async () => {
    const store = new InMemoryStore();
    const checkpointer = new MemorySaver();
    const requests: ReplanRequest[] = [];
    const planner = staticPlanner({ plan: mirrorPlan, replan: (r) => (requests.push(r), backup) });
    const graph = createPlanManager({
      tools: mirrorTools(),
      planner,
      clock: fakeClock(),
      replanMemory: { mode: "reuse" },
    }).compile({ checkpointer, store });
    const first = await graph.invoke({ goal: "g" }, { configurable: { thread_id: "one" } });
    expect(first.status).toBe("completed");
    const second = (await graph.invoke({ goal: "g" }, { configurable: { thread_id: "two" } })) as Record<string, any>;
    expect(requests).toHaveLength(1);
    expect(second.replans[0].source).toBe("memory");
    expect(second.status).toBe("completed");
    expect(second.plan.steps.map((s: { id: string }) => s.id)).toEqual(["s1", "build"]);
    expect(second.facts.artifact.value).toBe("a");
  });

  it("sends back a draft that leaves a fact of the old version unproduced, with a dropped_fact issue", async () => {
    const requests: ReplanRequest[] = [];
    // `build` is replaced by id with a step that no longer produces `artifact`.
    const lossy: PlanDraft = {
      steps: [
        ...backup.steps,
        { id: "build", goal: "build", tool: "build", dependsOn: ["fetch_b"], inputs: ["data"], produces: [] },
      ],
    };
    const fixed: PlanDraft = {
      steps: [
        ...backup.steps,
        { id: "build", goal: "build", tool: "build", dependsOn: ["fetch_b"], inputs: ["data"], produces: ["artifact"] },
      ],
    };
    const planner = staticPlanner({
      plan: mirrorPlan,
      replan: (r) => (requests.push(r), requests.length === 1 ? lossy : fixed),
    });
    const out = await harness(planner, mirrorTools()).run();
    expect(requests[1]!.issues).toEqual([
      {
        code: "dropped_fact",
        path: ["steps"],
        stepId: "build",
        message:
          'fact "artifact" (produced by step "build" in plan version 1) is produced by no step of the new version: ' +
          "produce it, or keep the step",
      },
    ]);
    expect(out.status).toBe("completed");
    expect(out.facts.artifact.value).toBe("a");
  });

  it("replan memory keeps the id of a step the saved fix kept, where the reusing thread has it", async () => {
    const store = new InMemoryStore();
    const requests: ReplanRequest[] = [];
    // The fix hands `build` back by id (changed): in a reusing thread it is still `build`, not `s2`.
    const fix: PlanDraft = {
      steps: [
        ...backup.steps,
        {
          id: "build",
          goal: "build the artifact",
          tool: "build",
          args: { fast: true },
          dependsOn: ["fetch_b"],
          inputs: ["data"],
          produces: ["artifact"],
        },
      ],
    };
    const planner = staticPlanner({ plan: mirrorPlan, replan: (r) => (requests.push(r), fix) });
    const graph = createPlanManager({
      tools: mirrorTools(),
      planner,
      clock: fakeClock(),
      replanMemory: { mode: "reuse" },
    }).compile({ checkpointer: new MemorySaver(), store });
    expect((await graph.invoke({ goal: "g" }, { configurable: { thread_id: "one" } })).status).toBe("completed");
    const [saved] = await store.search(["langgraph-replan", "replan-memory"]);
    expect((saved!.value as { steps: { id: string }[] }).steps.map((s) => s.id)).toEqual(["s1", "s2"]);
    expect((saved!.value as { kept?: unknown }).kept).toEqual({ s2: 1 });
    const second = (await graph.invoke({ goal: "g" }, { configurable: { thread_id: "two" } })) as Record<string, any>;
    expect(requests).toHaveLength(1);
    expect(second.replans[0].source).toBe("memory");
    expect(second.plan.steps.map((s: { id: string; dependsOn?: string[] }) => [s.id, s.dependsOn ?? []])).toEqual([
      ["s1", []],
      ["build", ["s1"]],
    ]);
    expect(second.status).toBe("completed");
  });
});

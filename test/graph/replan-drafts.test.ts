import { describe, expect, it } from "vitest";
import { AssumptionBrokenError, staticPlanner, type PlanDraft, type ReplanRequest } from "../../src/index.js";
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
});

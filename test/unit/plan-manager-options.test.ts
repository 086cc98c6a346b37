/** Options enter at construction: a key the manager does not know is refused, with the nearest one it does. */
import { describe, expect, it } from "vitest";
import { createPlanManager, staticPlanner } from "../../src/index.js";
import { isPlanManagerError } from "../../src/errors.js";
import { resolvePolicy } from "../../src/policy/options.js";
import { scriptedTool } from "../helpers/graph.js";

const planner = staticPlanner({ plan: { steps: [{ id: "a", goal: "a", tool: "t" }] } });
const tools = [scriptedTool("t", [{}])];

function refusal(build: () => unknown): string {
  try {
    build();
    return "no error";
  } catch (e) {
    return isPlanManagerError(e) ? `${e.code} ${e.path}: ${e.message}` : String(e);
  }
}

describe("createPlanManager refuses option keys it does not know", () => {
  it("a typo is refused naming the key and the option it is nearest to (reviewPlans → reviewPlan)", () => {
    expect(refusal(() => createPlanManager({ tools, planner, reviewPlans: true } as never))).toBe(
      'invalid_options reviewPlans: createPlanManager: "reviewPlans" is not an option; did you mean "reviewPlan"?',
    );
    expect(refusal(() => createPlanManager({ tools, planner, recursionlimit: 50 } as never))).toBe(
      'invalid_options recursionlimit: createPlanManager: "recursionlimit" is not an option; did you mean "recursionLimit"?',
    );
  });

  it("a key near no option is refused with the list of options", () => {
    expect(refusal(() => createPlanManager({ tools, planner, checkpointer: {} } as never))).toBe(
      'invalid_options checkpointer: createPlanManager: "checkpointer" is not an option; the options are: tools, ' +
        "planner, policy, reviewPlan, reviewReplans, classifier, clock, recursionLimit, replanMemory, " +
        "replanTemplates, agents, models, prices, effects, reviewer",
    );
    const own = JSON.parse('{"__proto__": {"reviewPlan": true}}') as object;
    expect(refusal(() => createPlanManager({ ...own, tools, planner } as never))).toMatch(
      /^invalid_options __proto__: createPlanManager: "__proto__" is not an option; the options are: tools, /,
    );
  });

  it("a policy key it does not know is refused with the nearest policy key, for createPlanManager and resolvePolicy", () => {
    expect(refusal(() => createPlanManager({ tools, planner, policy: { maxReplan: 3 } } as never))).toBe(
      'invalid_options policy.maxReplan: policy: Unrecognized key: "maxReplan"; did you mean "maxReplans"?',
    );
    expect(refusal(() => resolvePolicy({ defaultRetry: { maxAttempts: 2 }, plannerTimeout: 5 }))).toBe(
      'invalid_options policy.plannerTimeout: policy: Unrecognized key: "plannerTimeout"; did you mean "plannerTimeoutMs"?',
    );
  });

  it("every documented option is still accepted", () => {
    const graph = createPlanManager({
      tools,
      planner,
      policy: { maxReplans: 1 },
      reviewPlan: true,
      reviewReplans: true,
      recursionLimit: 50,
      replanTemplates: [],
      agents: {},
      prices: {},
    });
    expect(Object.keys(graph.nodes).sort()).toEqual([
      "classifier",
      "executor",
      "extender",
      "finalize",
      "human",
      "planner",
      "replanner",
    ]);
  });
});

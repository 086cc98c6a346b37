import { describe, expect, it } from "vitest";
import {
  createPlanManager,
  isPlanManagerError,
  staticPlanner,
  type PlanDraft,
  type ReplanRequest,
} from "../../src/index.js";
import { planMetrics } from "../../src/views/index.js";
import { codingPlan, codingReplan, createCodingTools } from "../fixtures/coding-agent.js";
import { brief, harness, scriptedTool } from "../helpers/graph.js";

describe("replan triggers and trust re-validation", () => {
  it("several assumptions false at once → a global replan that falsifies both", async () => {
    const plan: PlanDraft = {
      assumptions: [
        { id: "cheap", statement: "prices are low", check: "facts.price < 100" },
        { id: "stock", statement: "items are in stock", check: "facts.stock > 0" },
      ],
      steps: [
        { id: "quote", goal: "Quote", tool: "quote", produces: ["price", "stock"] },
        { id: "buy", goal: "Buy", tool: "buy", dependsOn: ["quote"], assumptions: ["cheap", "stock"] },
      ],
    };
    const requests: ReplanRequest[] = [];
    const replan = (r: ReplanRequest): PlanDraft => (
      requests.push(r),
      { steps: [{ id: "wait", goal: "Wait for restock", tool: "buy" }] }
    );
    const out = await harness(staticPlanner({ plan, replan }), [
      scriptedTool("quote", [{ price: 150, stock: 0 }]),
      scriptedTool("buy", [{}]),
    ]).run();
    expect(brief(out.decisions)).toEqual(["quote: assumption_broken → replan_global [assumption.several-global]"]);
    expect(requests[0]!.scope).toBe("global");
    expect(out.guards.falsified).toEqual(["cheap", "stock"]);
    expect(out.status).toBe("completed");
  });

  it("a precondition on facts from a step that rests on an assumption replans that producer", async () => {
    const plan: PlanDraft = {
      assumptions: [{ id: "fresh_data", statement: "the cached balance is fresh" }],
      steps: [
        {
          id: "balance",
          goal: "Read balance",
          tool: "cached_balance",
          produces: ["balance"],
          assumptions: ["fresh_data"],
        },
        { id: "pay", goal: "Pay", tool: "pay", dependsOn: ["balance"], preconditions: ["facts.balance >= 100"] },
      ],
    };
    const replan = (r: ReplanRequest): PlanDraft => ({
      steps: r.affectedSteps.map((s) =>
        s.id === "balance"
          ? { ...s, id: "live_balance", tool: "live_balance", assumptions: [] }
          : { ...s, dependsOn: ["live_balance"] },
      ),
    });
    const pay = scriptedTool("pay", [{ paid: true }]);
    const out = await harness(staticPlanner({ plan, replan }), [
      scriptedTool("cached_balance", [{ balance: 20 }]),
      scriptedTool("live_balance", [{ balance: 250 }]),
      pay,
    ]).run();
    expect(brief(out.decisions)).toEqual(["pay: precondition_failed → replan_local [precondition.replan-producers]"]);
    expect(out.replans[0]).toMatchObject({
      brokenAssumption: "fresh_data",
      invalidatedSteps: ["balance"],
      newSteps: ["live_balance"],
    });
    expect(out.facts.balance).toMatchObject({ value: 250, label: "trusted", producedBy: "live_balance" });
    expect(pay.calls).toHaveLength(1);
  });

  it("a plan whose steps cannot all fit the budget asks the planner for a cheaper route before any step starts", async () => {
    const plan: PlanDraft = {
      steps: [
        { id: "a", goal: "A", tool: "t", cost: 0.5, produces: ["x"] },
        { id: "b", goal: "B", tool: "premium", cost: 0.8, dependsOn: ["a"] },
      ],
    };
    const requests: ReplanRequest[] = [];
    const replan = (r: ReplanRequest): PlanDraft => (
      requests.push(r),
      { steps: [plan.steps[0]!, { id: "b_lite", goal: "B (lite)", tool: "lite", cost: 0.1, dependsOn: ["a"] }] }
    );
    const premium = scriptedTool("premium", [{}]);
    const out = await harness(
      staticPlanner({ plan, replan }),
      [scriptedTool("t", [{ x: 1 }]), premium, scriptedTool("lite", [{}])],
      { policy: { budget: { maxCost: 1 } } },
    ).run();
    expect(brief(out.decisions)).toEqual(["-: budget_exhausted → replan_global [budget.replan-cheaper]"]);
    expect(requests[0]!.budget).toEqual({ remaining: 1 });
    expect(premium.calls).toEqual([]);
    expect(out.status).toBe("completed");
    expect(out.budget.spent).toBeCloseTo(0.6, 10);
  });

  it("re-validates a suspect fact by re-running its producer when a new step needs it", async () => {
    const plan: PlanDraft = {
      assumptions: [{ id: "eu_customer", statement: "the customer is in the EU" }],
      steps: [
        { id: "profile", goal: "Profile", tool: "profile", produces: ["region"], assumptions: ["eu_customer"] },
        {
          id: "tax",
          goal: "EU VAT",
          tool: "eu_vat",
          dependsOn: ["profile"],
          inputs: ["region"],
          assumptions: ["eu_customer"],
          produces: ["tax"],
        },
      ],
    };
    const profile = scriptedTool("profile", [{ region: "US" }]);
    const replan = (): PlanDraft => ({
      steps: [{ id: "us_tax", goal: "US sales tax", tool: "us_tax", inputs: ["region"], produces: ["tax"] }],
    });
    const out = await harness(staticPlanner({ plan, replan }), [
      profile,
      scriptedTool("eu_vat", [
        new (class extends Error {
          name = "AssumptionBrokenError";
          assumptionId = "eu_customer";
        })("not an EU region"),
      ]),
      scriptedTool("us_tax", [{ tax: 7 }]),
    ]).run();
    expect(brief(out.decisions)).toEqual(["tax: assumption_broken → replan_local [assumption.replan-local]"]);
    expect(out.replans[0]).toMatchObject({
      invalidatedSteps: ["tax"],
      revalidatedSteps: ["profile"],
      newSteps: ["us_tax"],
      facts: { trusted: [], suspect: ["region"], invalidated: [] },
    });
    expect(profile.calls).toHaveLength(2);
    expect(out.facts.region).toMatchObject({ value: "US", label: "trusted", planVersion: 2, assumptions: [] });
    expect(out.plan.steps.map((s: { id: string }) => s.id)).toEqual(["profile", "us_tax"]);
    expect(out.guards.backtracks).toEqual({ profile: 1 });
  });

  it("runs plans longer than LangGraph's default recursion limit", async () => {
    const steps = Array.from({ length: 60 }, (_, i) => ({
      id: `s${i}`,
      goal: `Step ${i}`,
      tool: "noop",
      ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}),
    }));
    const out = await harness({ steps }, [scriptedTool("noop", [{}])]).run();
    expect(out.status).toBe("completed");
    expect(Object.values(out.steps).filter((s: any) => s.status === "succeeded")).toHaveLength(60);
  });
});

describe("metrics", () => {
  it("computes the seeds' metrics from the coding-agent run", async () => {
    const { tools } = createCodingTools();
    const out = await harness(staticPlanner({ plan: codingPlan, replan: codingReplan }), tools).run();
    expect(planMetrics(out as never)).toEqual({
      replans: 1,
      localReplans: 1,
      globalReplans: 0,
      localGlobalRatio: null,
      firstReplanSuccess: true,
      trustedCarryRate: 1 / 3,
      retryExhaustionRate: null,
      doneByPerson: 0,
      extensions: 0,
      stalls: 0,
      decisions: 1,
      toolAttempts: 7,
      // No call was in doubt: each settlement counts 0.
      effectsVerified: 0,
      effectsNotHappened: 0,
      effectsRecalled: 0,
      effectsInDoubt: 0,
      effectsHappened: 0,
      effectsRetried: 0,
    });
  });
});

describe("createPlanManager", () => {
  it("rejects invalid options at construction, naming the field", () => {
    const planner = staticPlanner({ plan: { steps: [{ id: "a", goal: "a", tool: "t" }] } });
    const attempt = (o: unknown) => {
      try {
        createPlanManager(o as never);
        return "no error";
      } catch (e) {
        return isPlanManagerError(e) ? `${e.code} ${e.path}: ${e.message}` : String(e);
      }
    };
    expect(attempt({ tools: [], planner, policy: { maxReplans: "3" } })).toBe(
      "invalid_options policy.maxReplans: policy.maxReplans: Invalid input: expected number, received string",
    );
    expect(attempt({ tools: [{ name: "x" }], planner })).toBe(
      "invalid_options tools[0]: tools[0] is not a LangChain tool (needs name and invoke); create it with tool() from @langchain/core/tools",
    );
    expect(attempt({ tools: [], planner: {} })).toBe(
      "invalid_options planner.plan: planner.plan must be a function: use staticPlanner({ plan }) or llmPlanner({ model })",
    );
    expect(attempt({ tools: [], planner, reviewReplans: true })).toBe(
      "invalid_options reviewReplans: reviewReplans needs reviewPlan: true",
    );
    expect(attempt(null)).toBe(
      "invalid_options undefined: createPlanManager(options): options must be an object with `tools` and `planner`",
    );
  });

  it("draws every rung of the ladder as an edge", async () => {
    const graph = createPlanManager({
      tools: [scriptedTool("t", [{}])],
      planner: staticPlanner({ plan: { steps: [{ id: "a", goal: "a", tool: "t" }] } }),
    }).compile();
    const drawn = (await graph.getGraphAsync()).edges.map((e) => `${e.source}->${e.target}`).sort();
    expect(drawn).toEqual([
      "__start__->planner",
      "classifier->executor",
      "classifier->finalize",
      "classifier->human",
      "classifier->replanner",
      "executor->classifier",
      "executor->executor",
      "executor->extender",
      "executor->finalize",
      "executor->human",
      "extender->executor",
      "extender->human",
      "finalize->__end__",
      "human->executor",
      "human->finalize",
      "human->human",
      "human->replanner",
      "planner->executor",
      "planner->finalize",
      "planner->human",
      "replanner->executor",
      "replanner->human",
    ]);
  });
});

describe("evidence under guardrails", () => {
  it("records a falsified assumption and relabels facts even when a guardrail escalates instead of replanning", async () => {
    const plan: PlanDraft = {
      assumptions: [{ id: "vendor_ok", statement: "the vendor data is right", check: "facts.rows > 0" }],
      steps: [
        { id: "load", goal: "Load", tool: "load", produces: ["rows", "sample"], assumptions: ["vendor_ok"] },
        {
          id: "report",
          goal: "Report",
          tool: "report",
          dependsOn: ["load"],
          inputs: ["sample"],
          assumptions: ["vendor_ok"],
        },
      ],
    };
    const report = scriptedTool("report", [{}]);
    const out = await harness(
      staticPlanner({ plan, replan: () => ({ steps: [] }) }),
      [scriptedTool("load", [{ rows: 0, sample: "x" }]), report],
      { policy: { maxReplans: 0 } },
    ).run();
    expect(brief(out.decisions)).toEqual(["load: assumption_broken → escalate [guard.max-replans]"]);
    expect(out.guards.falsified).toEqual(["vendor_ok"]);
    expect(out.facts.rows.label).toBe("invalidated");
    expect(out.facts.sample.label).toBe("invalidated");
    expect(report.calls).toHaveLength(0);
  });
});

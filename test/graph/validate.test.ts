import { describe, expect, it } from "vitest";
import { type PlanDraft } from "../../src/index.js";
import { DEFAULT_RETRY, validatePlan } from "../../src/policy/index.js";
import type { ValidationContext } from "../../src/plan/validate.js";
import { harness, scriptedTool } from "../helpers/graph.js";

const ctx = { tools: new Set(["search", "fix", "test"]), policy: { defaultRetry: DEFAULT_RETRY } };
const issues = (draft: unknown) => {
  const r = validatePlan(draft, ctx);
  return r.ok ? [] : r.issues.map((i) => `${i.code} ${i.stepId ?? "-"} ${i.path.join(".")}`);
};
const step = (id: string, extra: Record<string, unknown> = {}) => ({
  id,
  goal: `goal ${id}`,
  tool: "search",
  ...extra,
});

describe("the plan validator", () => {
  it("accepts a valid plan", () => {
    expect(
      issues({
        steps: [step("a"), step("b", { dependsOn: ["a"], tool: "fix" })],
        assumptions: [{ id: "root", statement: "s", check: "facts.x > 1" }],
      }),
    ).toEqual([]);
  });
  it("rejects duplicate ids", () => {
    expect(issues({ steps: [step("a"), step("a")] })).toEqual(["duplicate_id a steps.1.id"]);
  });
  it("rejects dangling and self dependencies", () => {
    expect(issues({ steps: [step("a", { dependsOn: ["a", "zzz"] })] })).toEqual([
      "self_dependency a steps.0.dependsOn.0",
      "dangling_dependency a steps.0.dependsOn.1",
    ]);
  });
  it("rejects cycles, naming every step on them", () => {
    expect(
      issues({
        steps: [
          step("a", { dependsOn: ["c"] }),
          step("b", { dependsOn: ["a"] }),
          step("c", { dependsOn: ["b"] }),
          step("d"),
        ],
      }),
    ).toEqual(["cycle a steps.0.dependsOn", "cycle b steps.1.dependsOn", "cycle c steps.2.dependsOn"]);
  });
  it("rejects tools and fallback tools that are not registered", () => {
    const r = validatePlan({ steps: [step("a", { tool: "rm_rf", fallback: { tool: "shell" } })] }, ctx);
    const found = r.ok ? [] : r.issues;
    expect(found.map((i) => i.code)).toEqual(["unknown_tool", "unknown_fallback_tool"]);
    expect(found[0]?.message).toBe(
      'step "a" names tool "rm_rf", which is not in the registry (registered: search, fix, test)',
    );
  });
  it("rejects expressions that do not compile, naming the field", () => {
    const r = validatePlan(
      { steps: [step("a", { preconditions: ["facts.x >"], successSignal: "output.ok &&", when: "nope(1)" })] },
      ctx,
    );
    expect(r.ok ? [] : r.issues.map((i) => `${i.code} ${i.path.join(".")}`)).toEqual([
      "invalid_expression steps.0.preconditions.0",
      "invalid_expression steps.0.successSignal",
      "invalid_expression steps.0.when",
    ]);
  });
  it("rejects `output` outside success signals and computed fact access", () => {
    expect(
      issues({ steps: [step("a", { when: "output.x == 1" }), step("b", { preconditions: ["size(facts) > 0"] })] }),
    ).toEqual(["invalid_expression a steps.0.when", "invalid_expression b steps.1.preconditions.0"]);
  });
  it("rejects impossible retry settings", () => {
    const r = validatePlan(
      {
        steps: [
          step("a", { retry: { initialDelayMs: 5000, maxDelayMs: 100 } }),
          step("b", { retry: { maxAttempts: 0 } }),
        ],
      },
      ctx,
    );
    expect(r.ok ? [] : r.issues.map((i) => `${i.code} ${i.path.join(".")} ${i.message}`)).toEqual([
      "schema steps.1.retry.maxAttempts Too small: expected number to be >=1",
    ]);
    const r2 = validatePlan({ steps: [step("a", { retry: { initialDelayMs: 5000, maxDelayMs: 100 } })] }, ctx);
    expect(r2.ok ? [] : r2.issues.map((i) => i.message)).toEqual([
      'step "a" retry: maxDelayMs (100) cannot be less than initialDelayMs (5000)',
    ]);
  });
  it("rejects a human step with a tool, and a step with neither", () => {
    expect(issues({ steps: [step("a", { human: { prompt: "ok?" } }), { id: "b", goal: "b" }] })).toEqual([
      "human_step_with_tool a steps.0.tool",
      "missing_tool b steps.1.tool",
    ]);
  });
  it("rejects undeclared assumptions and reserved ids", () => {
    expect(issues({ steps: [step("a", { assumptions: ["ghost"] })] })).toEqual([
      "unknown_assumption a steps.0.assumptions.0",
    ]);
    expect(issues({ steps: [step("constructor")] })).toEqual(["schema constructor steps.0.id"]);
  });
  it("rejects schema violations with the step named", () => {
    expect(issues({ steps: [{ id: "a", goal: "g", tool: "search", timeoutMs: -5 }] })).toEqual([
      "schema a steps.0.timeoutMs",
    ]);
    expect(issues({ steps: [] })).toEqual(["schema - steps"]);
    expect(issues("not a plan")).toEqual(["schema - "]);
  });
});

describe("an invalid plan on the graph", () => {
  it("runs no tool and fails with the issues in the outcome", async () => {
    const search = scriptedTool("search", [{}]);
    const draft = { steps: [step("a"), step("b", { dependsOn: ["missing"] })] } as PlanDraft;
    const out = await harness(draft, [search]).run();
    expect(search.calls).toHaveLength(0);
    expect(out.status).toBe("failed");
    expect(out.outcome.failureReason).toBe("invalid_plan");
    expect(out.outcome.issues).toEqual([
      {
        code: "dangling_dependency",
        path: ["steps", 1, "dependsOn", 0],
        stepId: "b",
        message: 'step "b" depends on "missing", which is not a step of the plan',
      },
    ]);
    expect(out.outcome.summary).toBe(
      'Failed: the plan was rejected before any step ran:\n- step "b" depends on "missing", which is not a step of the plan. 0 of 0 steps succeeded.',
    );
    expect(out.plan).toBeUndefined();
  });
  it("fails when the planner throws, without running anything", async () => {
    const out = await harness({ plan: async () => Promise.reject(new Error("model down")) }, [
      scriptedTool("search", [{}]),
    ]).run();
    expect(out.status).toBe("failed");
    expect(out.outcome.failureReason).toBe("planner_error");
    expect(out.outcome.message).toBe("the planner failed: model down");
  });
});

describe("fields and inputs the validator used to let through", () => {
  it("rejects an unknown step field with the nearest known one, instead of stripping it", () => {
    const result = validatePlan({ steps: [{ id: "a", goal: "g", tolo: "search" }] }, ctx);
    expect(result).toEqual({
      ok: false,
      issues: [
        {
          code: "unknown_field",
          path: ["steps", 0, "tolo"],
          stepId: "a",
          message: 'step "a" has unknown field "tolo" (did you mean "tool"?)',
        },
      ],
    });
    const top = validatePlan({ steps: [step("a")], asumptions: [] }, ctx);
    expect(top.ok ? [] : top.issues.map((i) => i.message)).toEqual([
      'the plan has unknown field "asumptions" (did you mean "assumptions"?)',
    ]);
  });

  it("flags inputs no tool argument accepts, and inputs nothing produces", () => {
    const draft = {
      steps: [
        { id: "a", goal: "g", tool: "search", inputs: ["query", "colour"], produces: ["hits"] },
        { id: "b", goal: "g", tool: "fix", dependsOn: ["a"], inputs: ["hits", "ghost"] },
      ],
    };
    const result = validatePlan(draft, {
      ...ctx,
      toolArguments: new Map([
        ["search", ["query"]],
        ["fix", undefined],
      ]),
      availableFacts: ["query", "colour"],
    });
    expect(result.ok ? [] : result.issues).toEqual([
      {
        code: "unknown_input",
        path: ["steps", 0, "inputs", 1],
        stepId: "a",
        message: 'step "a" passes input "colour" to tool "search", which has no such argument (it accepts query)',
      },
      {
        code: "unproduced_input",
        path: ["steps", 1, "inputs", 1],
        stepId: "b",
        message: 'step "b" reads input "ghost", which neither the context nor any step produces',
      },
    ]);
  });

  it("reads the accepted arguments off a real tool's zod schema when the graph validates", async () => {
    const { tool } = await import("@langchain/core/tools");
    const { z } = await import("zod");
    const strict = tool(async () => ({ hits: 1 }), {
      name: "search",
      description: "s",
      schema: z.object({ query: z.string() }),
    });
    const draft = {
      steps: [{ id: "a", goal: "g", tool: "search", inputs: ["query", "colour"], produces: ["hits"] }],
    } as PlanDraft;
    const out = await harness(draft, [strict], { context: { query: "q", colour: "red" } }).run();
    expect(out.status).toBe("failed");
    expect(out.outcome.issues.map((i: { message: string }) => i.message)).toEqual([
      'step "a" passes input "colour" to tool "search", which has no such argument (it accepts query)',
    ]);
  });
});

describe("unknown fields, inputs and producers: messages and bounds", () => {
  const STEP_FIELDS =
    "id, goal, tool, args, inputs, produces, dependsOn, assumptions, preconditions, successSignal, when, retry, " +
    "retryOnUnmet, fallback, sideEffects, idempotent, operation, honoursIdempotencyKey, verify, compensate, freshFor, inputsFreshForMs, timeoutMs, estimateMs, cost, optional, human, external, agent, tier, complexity, validate";
  const withInputs = {
    ...ctx,
    toolArguments: new Map<string, readonly string[] | undefined>([
      ["search", ["query", "limit"]],
      ["fix", ["patch"]],
      ["test", undefined],
    ]),
    availableFacts: ["applicant_id"],
  };
  const messages = (draft: unknown, context: ValidationContext = withInputs) => {
    const r = validatePlan(draft, context);
    return r.ok ? [] : r.issues.map((i) => `${i.code} ${i.path.join(".")}: ${i.message}`);
  };

  it("names assumptions by id and nested objects by their step, each with the nearest field", () => {
    const draft = {
      steps: [step("a", { fallback: { tol: "fix" }, retry: { maxAttempt: 2 } })],
      assumptions: [
        { id: "root", statment: "s" },
        { statement: "no id", chek: "facts.x" },
      ],
    };
    expect(messages(draft)).toEqual([
      'unknown_field steps.0.fallback.tol: step "a" fallback has unknown field "tol" (did you mean "tool"?)',
      'unknown_field steps.0.retry.maxAttempt: step "a" retry has unknown field "maxAttempt" (did you mean "maxAttempts"?)',
      'unknown_field assumptions.0.statment: assumption "root" has unknown field "statment" (did you mean "statement"?)',
      'unknown_field assumptions.1.chek: assumption 1 has unknown field "chek" (did you mean "check"?)',
    ]);
  });

  it("lists the known fields when no field is close, and shows a key as JSON", () => {
    expect(messages({ steps: [step("a", { 'say "hi"': 1 })] })).toEqual([
      `unknown_field steps.0.say "hi": step "a" has unknown field "say \\"hi\\""; known fields: ${STEP_FIELDS}`,
    ]);
  });

  it("stays fast and bounded on a plan flooded with huge unknown keys", () => {
    const flooded: Record<string, unknown> = step("a");
    for (let i = 0; i < 200; i++) flooded[`${"k".repeat(20_000)}${i}`] = 1;
    const started = performance.now();
    const r = validatePlan({ steps: [flooded] }, ctx);
    // Before the bound: 68 s, fifty 20,000-character messages.
    expect(performance.now() - started).toBeLessThan(2_000);
    const found = r.ok ? [] : r.issues;
    expect(found).toHaveLength(50);
    expect(found[0]!.path).toEqual(["steps", 0, `${"k".repeat(20_000)}0`]);
    expect(found[0]!.message).toBe(`step "a" has unknown field "${"k".repeat(61)}..."; known fields: ${STEP_FIELDS}`);
  });

  it("suggests the nearest argument for an input its tool has no argument for, primary and fallback", () => {
    const draft = {
      steps: [step("a", { inputs: ["applicant_id", "qeury"], fallback: { tool: "fix" }, produces: ["qeury"] })],
    };
    expect(messages(draft)).toEqual([
      'unknown_input steps.0.inputs.0: step "a" passes input "applicant_id" to tool "search", which has no such argument (it accepts query, limit)',
      'unknown_input steps.0.inputs.0: step "a" passes input "applicant_id" to tool "fix", which has no such argument (it accepts patch)',
      'unknown_input steps.0.inputs.1: step "a" passes input "qeury" to tool "search", which has no such argument (did you mean "query"? it accepts query, limit)',
      'unknown_input steps.0.inputs.1: step "a" passes input "qeury" to tool "fix", which has no such argument (it accepts patch)',
    ]);
  });

  it("does not check a human step's inputs against tools, nor a tool whose schema accepts any key", () => {
    const draft = {
      steps: [
        { id: "h", goal: "ask", human: { prompt: "ok?" }, inputs: ["applicant_id"] },
        step("t", { tool: "test", inputs: ["applicant_id"] }),
      ],
    };
    expect(messages(draft)).toEqual([]);
  });

  it("suggests the nearest available fact for an input nothing produces", () => {
    const draft = {
      steps: [
        step("a", { tool: "test", inputs: ["aplicant_id", "score"] }),
        step("b", { tool: "test", inputs: ["scroe"], produces: ["score"] }),
      ],
    };
    expect(messages(draft)).toEqual([
      'unproduced_input steps.0.inputs.0: step "a" reads input "aplicant_id", which neither the context nor any step produces (did you mean "applicant_id"?)',
      'unproduced_input steps.1.inputs.0: step "b" reads input "scroe", which neither the context nor any step produces (did you mean "score"?)',
    ]);
  });

  it("counts facts already in state and the kept steps' facts as available to a replan", () => {
    const replan = { steps: [step("b2", { tool: "test", dependsOn: ["a"], inputs: ["hits", "applicant_id"] })] };
    const context = { ...withInputs, externalSteps: ["a"], availableFacts: ["applicant_id", "hits"] };
    expect(messages(replan, context)).toEqual([]);
    expect(messages(replan, { ...context, availableFacts: ["applicant_id"] })).toEqual([
      'unproduced_input steps.0.inputs.0: step "b2" reads input "hits", which neither the context nor any step produces',
    ]);
  });

  it("keeps today's behaviour for callers that pass neither tool arguments nor available facts", () => {
    expect(messages({ steps: [step("a", { inputs: ["ghost"] })] }, ctx)).toEqual([]);
  });
});

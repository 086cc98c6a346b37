import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { describe, expect, it, onTestFinished } from "vitest";
import { llmPlanner, type LlmPlannerOptions } from "../../src/index.js";
import { LlmPlanDraftSchema } from "../../src/planners/llm-schema.js";
import { fakeClock } from "../helpers/clock.js";
import { instantBackoff, ScriptedChatModel } from "../helpers/fake-model.js";
import { brief, harness, httpError, scriptedTool } from "../helpers/graph.js";
import { llmAnswer, llmStep } from "../helpers/llm-answers.js";

const answer = llmAnswer;

const goodPlan = answer([
  llmStep("lookup", {
    tool: "lookup",
    argsJson: '{"q":"acme"}',
    produces: ["company"],
    successSignal: "has(output.company)",
  }),
  llmStep("notify", { tool: "notify", dependsOn: ["lookup"], inputs: ["company"] }),
]);

function tools() {
  return [
    scriptedTool("lookup", [{ company: "Acme" }]),
    scriptedTool("notify", [{ sent: true }], { sideEffects: ["send an email"], successSignal: "output.sent == true" }),
  ];
}

function planner(model: ScriptedChatModel, extra: Partial<LlmPlannerOptions> = {}) {
  const clock = fakeClock();
  const prices = { "fake-planner-1": { input: 2, output: 8 } };
  return { clock, planner: llmPlanner({ model, prices, calls: { now: clock.now }, ...extra }) };
}

/** OpenAI strict mode: every object closed, every property required, no open-ended records. */
function strictProblems(schema: unknown, path = "$"): string[] {
  if (!schema || typeof schema !== "object") return [];
  const s = schema as Record<string, unknown>;
  const problems: string[] = [];
  if (s.type === "object" || (Array.isArray(s.type) && s.type.includes("object"))) {
    const props = Object.keys((s.properties as object) ?? {});
    if (s.additionalProperties !== false) problems.push(`${path}: additionalProperties is not false`);
    const required = (s.required as string[]) ?? [];
    for (const p of props) if (!required.includes(p)) problems.push(`${path}.${p}: not required`);
    if (props.length === 0) problems.push(`${path}: open-ended object`);
  }
  if ("patternProperties" in s || "propertyNames" in s) problems.push(`${path}: record`);
  for (const [k, v] of Object.entries(s)) {
    if (k === "properties")
      for (const [p, sub] of Object.entries(v as object)) problems.push(...strictProblems(sub, `${path}.${p}`));
    else if (k === "items" || k === "additionalProperties") problems.push(...strictProblems(v, `${path}[]`));
    else if (k === "anyOf" && Array.isArray(v))
      v.forEach((sub, i) => problems.push(...strictProblems(sub, `${path}|${i}`)));
  }
  return problems;
}

describe("llmPlanner", () => {
  it("sends a schema that OpenAI's strict mode accepts", () => {
    const schema = toJsonSchema(LlmPlanDraftSchema);
    expect(strictProblems(schema)).toEqual([]);
    expect(strictProblems({ type: "object", properties: { a: { type: "string" } } })).toEqual([
      "$: additionalProperties is not false",
      "$.a: not required",
    ]);
  });

  it("plans from the model's structured output, enriches it, and records usage and cost", async () => {
    const model = new ScriptedChatModel([goodPlan]);
    const { planner: p } = planner(model);
    const [lookup, notify] = tools();
    const out = await harness(p, [lookup!, notify!]).run();
    expect(out.status).toBe("completed");
    expect(lookup!.calls).toEqual([{ q: "acme" }]);
    expect(out.plan.steps[1]).toEqual({
      id: "notify",
      goal: "goal notify",
      tool: "notify",
      dependsOn: ["lookup"],
      inputs: ["company"],
      sideEffects: ["send an email"],
      idempotent: false,
      successSignal: "output.sent == true",
    });
    expect(out.usage).toEqual([
      {
        model: "fake-planner-1",
        inputTokens: 1000,
        outputTokens: 200,
        latencyMs: 0,
        cost: 0.0036,
        purpose: "plan",
        at: "2026-01-01T00:00:00.000Z",
      },
    ]);
    expect(out.budget.spent).toBeCloseTo(0.0036, 10);
    const prompt = String(model.received[0]![1]!.content);
    expect(prompt).toContain("Goal: test goal");
    expect(prompt).toContain('"name": "notify"');
    expect(prompt).toMatch(/"sideEffects": \[\s*"send an email"\s*\]/);
    expect(String(model.received[0]![0]!.content)).toContain('when: facts.compliance_flag == "review"');
  });

  it("feeds validation issues back to the model and uses the corrected draft", async () => {
    const cyclic = answer([
      llmStep("a", { tool: "lookup", dependsOn: ["b"] }),
      llmStep("b", { tool: "rm_rf", dependsOn: ["a"] }),
    ]);
    const model = new ScriptedChatModel([cyclic, goodPlan]);
    const out = await harness(planner(model).planner, tools()).run();
    expect(out.status).toBe("completed");
    expect(model.received).toHaveLength(2);
    const feedback = String(model.received[1]!.at(-1)!.content);
    expect(feedback).toContain('step "b" names tool "rm_rf", which is not in the registry');
    expect(feedback).toContain('step "a" is part of a dependency cycle');
    expect(out.usage).toHaveLength(2);
  });

  it("re-asks a reply that is not JSON with the parse error, within maxValidationRetries", async () => {
    const model = new ScriptedChatModel(["Sure! Here is the plan: steps lookup then notify", goodPlan]);
    const out = await harness(planner(model, { maxValidationRetries: 1 }).planner, tools()).run();
    expect(out.status).toBe("completed");
    expect(model.received).toHaveLength(2);
    expect(String(model.received[1]!.at(-2)!.content)).toBe("Sure! Here is the plan: steps lookup then notify");
    expect(String(model.received[1]!.at(-1)!.content)).toMatch(
      /^That plan was rejected\. Fix these problems and return the whole corrected answer:\n- the reply is not valid JSON: Unexpected token/,
    );
    expect(out.usage).toHaveLength(2);
  });

  it("a reply that never parses fails with invalid_plan after maxValidationRetries, naming the parse error", async () => {
    const model = new ScriptedChatModel(["not json", "still not json"]);
    const out = await harness(planner(model, { maxValidationRetries: 1 }).planner, tools()).run();
    expect(out.status).toBe("failed");
    expect(out.outcome.failureReason).toBe("invalid_plan");
    expect(out.outcome.issues).toHaveLength(1);
    expect(out.outcome.issues[0].message).toMatch(/^the reply is not valid JSON: Unexpected token/);
    expect(model.received).toHaveLength(2);
  });

  it("gives up after maxValidationRetries with status failed and the issues", async () => {
    const model = new ScriptedChatModel([
      { steps: "not a list" },
      answer([llmStep("a", { tool: "lookup", argsJson: "{oops" })]),
    ]);
    const out = await harness(planner(model, { maxValidationRetries: 1 }).planner, tools()).run();
    expect(out.status).toBe("failed");
    expect(out.outcome.failureReason).toBe("invalid_plan");
    expect(out.outcome.issues).toEqual([{ message: "steps.0.argsJson: argsJson is not valid JSON" }]);
    expect(model.received).toHaveLength(2);
  });

  it("retries rate limits and 5xx through LangChain's withRetry, and does not retry auth or quota errors", async () => {
    const backoff = instantBackoff();
    onTestFinished(backoff.restore);
    const flaky = new ScriptedChatModel([httpError(429, "rate limited"), httpError(503, "overloaded"), goodPlan]);
    const out = await harness(planner(flaky).planner, tools()).run();
    expect(out.status).toBe("completed");
    expect(flaky.received).toHaveLength(3);
    // p-retry's exponential backoff from 1 s (jitter pinned by instantBackoff).
    expect(backoff.delays).toEqual([1000, 2000]);
    const failedCall = {
      model: "fake-planner-1",
      inputTokens: 0,
      outputTokens: 0,
      latencyMs: 0,
      cost: 0,
      purpose: "plan",
      at: "2026-01-01T00:00:00.000Z",
    };
    expect(out.usage).toEqual([
      { ...failedCall, errorId: expect.stringMatching(/^err_[0-9a-f]{8}$/) },
      { ...failedCall, errorId: expect.stringMatching(/^err_[0-9a-f]{8}$/) },
      { ...failedCall, inputTokens: 1000, outputTokens: 200, cost: 0.0036 },
    ]);
    expect(out.usage[0].errorId).not.toBe(out.usage[1].errorId);

    const auth = new ScriptedChatModel([httpError(401, "invalid api key"), goodPlan]);
    const failed = await harness(planner(auth).planner, tools()).run();
    expect(auth.received).toHaveLength(1);
    expect(failed.status).toBe("failed");
    expect(failed.outcome.message).toBe(
      `the planner failed: model call authentication failed (401): invalid api key [${failed.usage[0].errorId}]`,
    );

    const quota = new ScriptedChatModel([
      Object.assign(httpError(429, "You exceeded your current quota"), { code: "insufficient_quota" }),
    ]);
    const q = await harness(planner(quota).planner, tools()).run();
    expect(quota.received).toHaveLength(1);
    expect(q.outcome.message).toBe(
      `the planner failed: model call quota exhausted (429): You exceeded your current quota [${q.usage[0].errorId}]`,
    );
    expect(backoff.delays).toEqual([1000, 2000]);
  });

  it("stops after calls.maxRetries and says how many attempts were made", async () => {
    const backoff = instantBackoff();
    onTestFinished(backoff.restore);
    const down = new ScriptedChatModel([httpError(502, "bad gateway")]);
    const out = await harness(planner(down, { calls: { maxRetries: 2 } }).planner, tools()).run();
    expect(down.received).toHaveLength(3);
    expect(backoff.delays).toEqual([1000, 2000]);
    expect(out.status).toBe("failed");
    expect(out.outcome.message).toBe(
      `the planner failed: model call failed after 3 attempts (502): bad gateway [${out.usage[2].errorId}]`,
    );
    expect(out.usage.map((u: { errorId?: string }) => u.errorId)).toEqual([
      expect.stringMatching(/^err_[0-9a-f]{8}$/),
      expect.stringMatching(/^err_[0-9a-f]{8}$/),
      expect.stringMatching(/^err_[0-9a-f]{8}$/),
    ]);
  });

  it("checks calls where it enters, naming the field", () => {
    const model = new ScriptedChatModel([goodPlan]);
    const attempt = (calls: unknown) => {
      try {
        llmPlanner({ model, calls: calls as LlmPlannerOptions["calls"] });
        return "ok";
      } catch (error) {
        return `${(error as { code: string }).code} ${(error as { path: string }).path}: ${(error as Error).message}`;
      }
    };
    expect(attempt({ maxRetries: 0 })).toBe("ok");
    const field = "invalid_options calls.maxRetries: llmPlanner: calls.maxRetries";
    expect(attempt({ maxRetries: -1 })).toBe(`${field} Too small: expected number to be >=0`);
    expect(attempt({ maxRetries: 1.5 })).toBe(`${field} Invalid input: expected int, received number`);
    // The hand-written loop's knobs are gone: the wait is LangChain's.
    const gone = "is not an option; `calls` takes maxRetries and now";
    expect(attempt({ sleep: () => undefined })).toBe(`invalid_options calls.sleep: llmPlanner: calls.sleep ${gone}`);
    expect(attempt({ initialDelayMs: 10 })).toBe(
      `invalid_options calls.initialDelayMs: llmPlanner: calls.initialDelayMs ${gone}`,
    );
  });

  it("replans with the scope, trigger, broken assumption, affected steps, suspect facts and approaches tried", async () => {
    const first = answer(
      [
        llmStep("search", { tool: "lookup", produces: ["company"] }),
        llmStep("portal", {
          tool: "portal",
          dependsOn: ["search"],
          inputs: ["company"],
          produces: ["report"],
          assumptions: ["portal_up"],
        }),
      ],
      [{ id: "portal_up", statement: "the portal serves reports", check: null }],
    );
    const replacement = answer([llmStep("mirror", { tool: "mirror", inputs: ["company"], produces: ["report"] })]);
    const model = new ScriptedChatModel([first, replacement]);
    const mirror = scriptedTool("mirror", [{ report: "r" }]);
    const out = await harness(planner(model).planner, [
      scriptedTool("lookup", [{ company: "Acme" }]),
      scriptedTool("portal", [httpError(404)]),
      mirror,
    ]).run();
    expect(out.status).toBe("completed");
    expect(brief(out.decisions)).toEqual(["portal: deterministic → replan_local [deterministic.replan-local]"]);
    const prompt = String(model.received[1]![1]!.content);
    expect(prompt).toContain("This is a local replan of plan version 1.");
    expect(prompt).toContain("Broken assumption: portal_up");
    expect(prompt).toContain(
      'Steps to replace (return replacement steps for these only):\n<untrusted-data name="steps_to_replace">\n[{"id":"portal"',
    );
    expect(prompt).toContain(
      'Trusted facts:\n<untrusted-data name="trusted_facts">\n{"company":"Acme"}\n</untrusted-data>',
    );
    expect(prompt).toContain('<untrusted-data name="excluded">\n["portal {}"]\n</untrusted-data>');
    expect(out.usage.map((u: { purpose: string }) => u.purpose)).toEqual(["plan", "replan"]);
    expect(out.budget.replanSpent).toBeCloseTo(0.0036, 10);
  });

  it("an invalid replan draft escalates and counts against maxReplans", async () => {
    const first = answer(
      [llmStep("w", { tool: "lookup", successSignal: "output.ok", assumptions: ["a"] })],
      [{ id: "a", statement: "s", check: null }],
    );
    const model = new ScriptedChatModel([first, answer([llmStep("x", { tool: "nope" })])]);
    const out = await harness(planner(model, { maxValidationRetries: 0 }).planner, [
      scriptedTool("lookup", [{ ok: false }]),
    ]).run();
    expect(brief(out.decisions)).toEqual([
      "w: success_signal_unmet → replan_local [unmet.replan-local]",
      "w: success_signal_unmet → escalate [replan.invalid-draft]",
    ]);
    expect(out.guards.count).toBe(1);
    // Sent back once (policy.replanDraftRetries, default 1): the model sees what was wrong.
    expect(model.received).toHaveLength(3);
    expect(String(model.received[2]![1]!.content)).toContain(
      'Your previous replacement was rejected; fix these problems:\n<untrusted-data name="previous_draft_issues">\n' +
        '["step \\"x\\" names tool \\"nope\\", which is not in the registry (registered: lookup)"]',
    );
  });
});

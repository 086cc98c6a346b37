import { describe, expect, it } from "vitest";
import { stepPrompt } from "../../src/steps/prompt.js";
import { resolveAgents, resolveModels } from "../../src/steps/handle.js";
import { answerSchema } from "../../src/steps/run-step.js";
import { isPlanManagerError } from "../../src/errors.js";
import type { Fact } from "../../src/plan/schema/run.js";
import type { Step } from "../../src/plan/schema/step.js";
import { agentRoute } from "../../src/policy/ladder/agent-routing.js";
import { validationFailure } from "../../src/policy/attempt/agent-validation.js";
import { DEFAULT_RETRY, validatePlan } from "../../src/policy/index.js";
import { resolvePolicy } from "../../src/policy/options.js";
import { describeApproach, fingerprint } from "../../src/policy/replan/scope.js";
import { ScriptedChatModel } from "../helpers/fake-model.js";

const fact = (value: unknown, label: Fact["label"] = "trusted"): Fact => ({
  value,
  label,
  producedBy: "x",
  planVersion: 1,
  assumptions: [],
  derivedFrom: [],
});

const step: Step = {
  id: "fix",
  goal: "Fix the bug",
  agent: "coder",
  tier: "fast",
  inputs: ["issue", "old_trace", "bad_guess"],
  produces: ["patch"],
};

describe("agent steps (pure)", () => {
  it("the prompt holds trusted inputs only: suspect and invalidated facts never reach the model", () => {
    const facts = {
      issue: fact("off by one"),
      old_trace: fact("SECRET-SUSPECT", "suspect"),
      bad_guess: fact("SECRET-INVALID", "invalidated"),
      unrelated: fact("not an input"),
    };
    const text = stepPrompt({
      goal: "g",
      plan: { version: 1, steps: [step], assumptions: [] },
      step,
      steps: {},
      facts,
    });
    expect(text).toContain('<untrusted-data name="inputs">\n{"issue":"off by one"}\n</untrusted-data>');
    expect(text).not.toContain("SECRET");
    expect(text).not.toContain("not an input");
  });

  it("routes a wrong answer: one tier up once, then feedback retries, then the ladder (same input, same route)", () => {
    const policy = resolvePolicy({ defaultRetry: { maxAttempts: 3 } });
    const deviation = { kind: "signal_unmet" as const, attempt: 1, message: "fix: tests failed" };
    const base = {
      deviation,
      step,
      policy,
      failureClass: "success_signal_unmet" as const,
      tiers: ["fast", "default"] as const,
    };
    const first = agentRoute({ ...base, run: { status: "failed", attempts: 1 } });
    expect(first).toEqual({
      rule: "route.escalate-tier",
      tier: "default",
      reason:
        "fix: tests failed; attempt 2/3 runs one tier up (fast → default) with its previous answer and why it failed",
    });
    expect(agentRoute({ ...base, run: { status: "failed", attempts: 1 } })).toEqual(first);
    expect(agentRoute({ ...base, run: { status: "failed", attempts: 2, tier: "default" } })).toEqual({
      rule: "agent.retry-with-feedback",
      reason: "fix: tests failed; attempt 3/3 with its previous answer and why it failed",
    });
    expect(agentRoute({ ...base, run: { status: "failed", attempts: 3, tier: "default" } })).toBeUndefined();
    // Transient failures are the ladder's (transient.retry), not a reason to change tier.
    expect(agentRoute({ ...base, failureClass: "transient", run: { status: "failed", attempts: 1 } })).toBeUndefined();
    // No tier above the strongest configured: feedback only.
    expect(agentRoute({ ...base, tiers: ["fast"], run: { status: "failed", attempts: 1 } })?.rule).toBe(
      "agent.retry-with-feedback",
    );
  });

  it("a validation tool fails by throwing or by an unmet validate.successSignal", () => {
    const checked: Step = { ...step, validate: { tool: "run_tests", successSignal: "output.failed == 0" } };
    expect(validationFailure(checked, { ok: true, output: { failed: 0 } }, {})).toBeUndefined();
    expect(validationFailure(checked, { ok: true, output: { failed: 2 } }, {})).toEqual({
      deviation: {
        kind: "signal_unmet",
        message: 'fix: validation tool "run_tests" failed: {"failed":2} (output.failed == 0 is not true)',
      },
      error: {
        name: "ValidationFailed",
        message: 'validation tool "run_tests" failed: {"failed":2} (output.failed == 0 is not true)',
      },
    });
    expect(validationFailure(checked, { ok: false, message: "pytest crashed" }, {})?.error.message).toBe(
      'validation tool "run_tests" failed: pytest crashed',
    );
  });

  it("asks chat models for the produced keys only, every one required (OpenAI strict mode)", () => {
    expect(answerSchema(["patch", "tests_pass"])).toEqual({
      type: "object",
      properties: {
        patch: { anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }, { type: "null" }] },
        tests_pass: { anyOf: [{ type: "string" }, { type: "number" }, { type: "boolean" }, { type: "null" }] },
      },
      required: ["patch", "tests_pass"],
      additionalProperties: false,
    });
  });

  it("plan validation knows agents like tools: an unknown agent is a typed issue naming the nearest one", () => {
    const ctx = {
      tools: new Set(["run_tests"]),
      agents: new Set(["coder", "reviewer"]),
      policy: { defaultRetry: DEFAULT_RETRY },
    };
    const r = validatePlan({ steps: [{ ...step, agent: "codr", validate: { tool: "run_test" } }] }, ctx);
    expect(r.ok ? [] : r.issues).toEqual([
      {
        code: "unknown_agent",
        path: ["steps", 0, "agent"],
        stepId: "fix",
        message:
          'step "fix" names agent "codr", which is not registered (agents: coder, reviewer); did you mean "coder"?',
      },
      {
        code: "unknown_tool",
        path: ["steps", 0, "validate", "tool"],
        stepId: "fix",
        message: 'step "fix" validate names tool "run_test", which is not in the registry (registered: run_tests)',
      },
    ]);
    const both = validatePlan({ steps: [{ ...step, tool: "run_tests" }] }, ctx);
    expect(both.ok ? [] : both.issues.map((i) => i.code)).toEqual(["several_executors"]);
  });

  it("tells a chat model from an agent graph by what it can do, and refuses anything else, naming the field", () => {
    const model = new ScriptedChatModel([{}]);
    const graph = { invoke: async () => ({ messages: [] }), getGraphAsync: async () => ({}) };
    const agents = resolveAgents({ coder: model, helper: graph });
    expect([...agents.values()].map((a) => `${a.name}:${a.kind}`)).toEqual(["coder:chat", "helper:graph"]);
    let caught: unknown;
    try {
      resolveAgents({ coder: { invoke: async () => 1 } });
    } catch (e) {
      caught = e;
    }
    expect(isPlanManagerError(caught) && [caught.code, caught.path]).toEqual(["invalid_options", "agents.coder"]);
    expect(() => resolveModels({ fast: model })).toThrow("models.default is required when models is given");
    expect(() => resolveModels({ default: model, turbo: model })).toThrow("models.turbo is not a tier");
  });

  it("a replan's no-progress fingerprint tells agents apart, and a typo in validate is an unknown field", () => {
    const other = { ...step, agent: "reviewer" };
    expect(fingerprint([step], "a")).not.toBe(fingerprint([other], "a"));
    expect(describeApproach(step)).toBe("agent:coder {}");
    const ctx = { tools: new Set(["run_tests"]), agents: new Set(["coder"]), policy: { defaultRetry: DEFAULT_RETRY } };
    const r = validatePlan({ steps: [{ ...step, validate: { tol: "run_tests" } }] }, ctx);
    expect(r.ok ? [] : r.issues.map((i) => i.message)).toEqual([
      'step "fix" validate has unknown field "tol" (did you mean "tool"?)',
    ]);
  });
});

/**
 * How the LLM planner reads answers: strict-mode answers as before, and the natural shape of a
 * provider that does not enforce the schema (nullable fields left out, `args` as an object).
 */
import { describe, expect, it } from "vitest";
import { LlmPlanAnswerSchema, toPlanDraft } from "../../src/planners/llm-schema.js";

const read = (answer: unknown) => {
  const parsed = LlmPlanAnswerSchema.safeParse(answer);
  if (parsed.success) return toPlanDraft(parsed.data);
  return { issues: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`) };
};
const retry = { maxAttempts: 2, backoff: "fixed", initialDelayMs: 10, maxDelayMs: 10 };
const pay = { id: "pay", goal: "Pay", tool: "pay", args: { amount: 3 }, dependsOn: ["ask"] };

describe("LlmPlanAnswerSchema", () => {
  it("reads a natural answer: missing nullable fields are null, args and fallback args are objects", () => {
    expect(
      read({
        steps: [
          { id: "ask", goal: "Ask", human: { prompt: "Approve?" } },
          { ...pay, fallback: { tool: "pay_later", args: { days: 2 } } },
          { id: "log", goal: "Log", tool: "log", argsJson: { level: "info" }, retry },
        ],
        assumptions: [{ id: "funds", statement: "the account has funds" }],
      }),
    ).toEqual({
      draft: {
        steps: [
          { id: "ask", goal: "Ask", human: { prompt: "Approve?" } },
          { ...pay, fallback: { tool: "pay_later", args: { days: 2 } } },
          { id: "log", goal: "Log", tool: "log", args: { level: "info" }, retry },
        ],
        assumptions: [{ id: "funds", statement: "the account has funds" }],
      },
      issues: [],
    });
  });

  it("reads a plan whose assumptions are left out or null as one without assumptions", () => {
    const steps = [{ id: "a", goal: "A", tool: "t" }];
    expect(read({ steps })).toEqual({ draft: { steps, assumptions: [] }, issues: [] });
    expect(read({ steps, assumptions: null, rationale: null })).toEqual({
      draft: { steps, assumptions: [] },
      issues: [],
    });
  });

  it("reads a strict-mode answer as before, JSON string args included", () => {
    const keys = ["tool", "argsJson", "inputs", "produces", "dependsOn", "assumptions", "preconditions"];
    const more = ["successSignal", "when", "retry", "retryOnUnmet", "fallback", "sideEffects", "idempotent"];
    const rest = ["timeoutMs", "cost", "optional", "human"];
    const nulls = Object.fromEntries([...keys, ...more, ...rest].map((k) => [k, null]));
    expect(
      read({
        steps: [
          {
            ...nulls,
            id: "pay",
            goal: "Pay",
            tool: "pay",
            argsJson: '{"amount":3}',
            fallback: { tool: "pay_later", argsJson: null },
          },
        ],
        assumptions: [{ id: "funds", statement: "s", check: "facts.balance > 0" }],
        rationale: "why",
      }),
    ).toEqual({
      draft: {
        steps: [{ id: "pay", goal: "Pay", tool: "pay", args: { amount: 3 }, fallback: { tool: "pay_later" } }],
        assumptions: [{ id: "funds", statement: "s", check: "facts.balance > 0" }],
        rationale: "why",
      },
      issues: [],
    });
  });

  it("still rejects what no shape allows: unknown keys, both args and argsJson, args that are not an object", () => {
    const step = { id: "a", goal: "A", tool: "t" };
    // A typo must not pass as a missing nullable field: the dependency would vanish.
    expect(read({ steps: [{ ...step, dependson: ["b"] }] })).toEqual({
      issues: ['steps.0: Unrecognized key: "dependson"'],
    });
    expect(read({ steps: [{ ...step, args: { x: 1 }, argsJson: '{"x":1}' }] })).toEqual({
      issues: ['steps.0: Unrecognized key: "args"'],
    });
    expect(read({ steps: [{ ...step, args: [1, 2] }] })).toEqual({
      issues: ["steps.0.argsJson: Invalid input"],
    });
    expect(read({ steps: [{ ...step, args: "[1]" }] })).toEqual({
      draft: { steps: [{ id: "a", goal: "A", tool: "t" }], assumptions: [] },
      issues: [{ path: ["steps", 0, "argsJson"], message: "argsJson must be a JSON object" }],
    });
    expect(read({ plan: [] })).toEqual({
      issues: ["steps: Invalid input: expected array, received undefined", ': Unrecognized key: "plan"'],
    });
  });
});

/**
 * A step's `compensate` is checked like its fallback, counts as a side-effecting capability, is known
 * to the LLM planner, and compensations show in the views (docs/decisions/0039-compensation.md).
 */
import { describe, expect, it } from "vitest";
import { validatePlan } from "../../src/plan/validate.js";
import { DEFAULT_RETRY } from "../../src/plan/retry.js";
import type { Step } from "../../src/plan/schema/step.js";
import type { CompensationRecord } from "../../src/plan/schema/run.js";
import { capabilityBaseline, capabilityGuard } from "../../src/policy/capability/guard.js";
import { toPlanDraft, LlmStepSchema } from "../../src/planners/llm-schema.js";
import { PLANNER_SYSTEM_PROMPT } from "../../src/planners/prompts.js";
import { debugView, htmlReport, operatorView, planMetrics, userView } from "../../src/views/index.js";
import { llmAnswer, llmStep } from "../helpers/llm-answers.js";

const ctx = {
  tools: new Set(["book", "cancel"]),
  policy: { defaultRetry: DEFAULT_RETRY },
  toolArguments: new Map<string, readonly string[] | undefined>([["cancel", ["booking_id"]]]),
  availableFacts: [],
};
const book = { id: "book", goal: "Book", tool: "book", produces: ["booking_id"] };

describe("compensate in a plan", () => {
  it("names a registered tool: otherwise a typed issue naming the step and the field", () => {
    const r = validatePlan({ steps: [{ ...book, compensate: { tool: "cancl", inputs: ["booking_id"] } }] }, ctx);
    expect(r.ok ? [] : r.issues).toEqual([
      {
        code: "unknown_compensate_tool",
        path: ["steps", 0, "compensate", "tool"],
        stepId: "book",
        message: 'step "book" compensate names tool "cancl", which is not in the registry (registered: book, cancel)',
      },
    ]);
  });

  it("reads fact keys some step produces and its tool accepts; a typo in its fields is named", () => {
    const ok = validatePlan({ steps: [{ ...book, compensate: { tool: "cancel", inputs: ["booking_id"] } }] }, ctx);
    expect(ok.ok).toBe(true);
    const bad = validatePlan(
      { steps: [{ ...book, compensate: { tool: "cancel", inputs: ["bookingid"], tolo: "x" } }] },
      ctx,
    );
    expect(bad.ok ? [] : bad.issues.map((i) => [i.code, i.path.join(".")])).toEqual([
      ["unknown_field", "steps.0.compensate.tolo"],
    ]);
    const unproduced = validatePlan({ steps: [{ ...book, compensate: { tool: "cancel", inputs: ["ref"] } }] }, ctx);
    expect(unproduced.ok ? [] : unproduced.issues.map((i) => [i.code, i.path.join(".")])).toEqual([
      ["unproduced_input", "steps.0.compensate.inputs.0"],
      ["unknown_input", "steps.0.compensate.inputs.0"],
    ]);
  });

  it("a replan adding a compensation with a tool no earlier version used is held like a new side-effecting tool", () => {
    const v1: Step[] = [{ ...book, sideEffects: ["booking"] }];
    const withUndo: Step = { ...v1[0]!, id: "book2", compensate: { tool: "refund" } };
    const hit = capabilityGuard({
      replacement: [withUndo],
      previous: v1,
      proposed: [withUndo],
      baseline: capabilityBaseline([v1], []),
      facts: {},
      replanTools: "read-only",
      sideEffectsOf: () => [],
    });
    expect(hit?.rule).toBe("guard.new-capability");
    expect(hit?.findings.map((f) => f.detail)).toEqual([
      'step "book2" would call refund as a compensation (side effects: undo of booking), a tool no earlier plan version used',
    ]);
  });
});

describe("the LLM planner knows compensate", () => {
  it("its schema has the field and the conversion keeps it; the prompt says what it is for", () => {
    expect(Object.keys(LlmStepSchema.shape)).toContain("compensate");
    const answer = llmAnswer([
      llmStep("book", {
        tool: "book",
        produces: ["booking_id"],
        compensate: { tool: "cancel", argsJson: '{"reason":"replanned"}', inputs: ["booking_id"] },
      }),
    ]);
    const { draft, issues } = toPlanDraft(answer as never);
    expect(issues).toEqual([]);
    expect(draft.steps[0]!.compensate).toEqual({
      tool: "cancel",
      args: { reason: "replanned" },
      inputs: ["booking_id"],
    });
    expect(PLANNER_SYSTEM_PROMPT).toContain("may name its undo in compensate");
  });
});

describe("views show compensations", () => {
  const records: CompensationRecord[] = [
    {
      stepId: "hotel",
      idempotencyKey: "t:h",
      compensationKey: "t:h:compensate",
      status: "done",
      at: "2026-01-01T00:00:00.000Z",
      tool: "cancel",
      attempts: 1,
    },
    {
      stepId: "flight",
      idempotencyKey: "t:f",
      compensationKey: "t:f:compensate",
      status: "failed",
      at: "2026-01-01T00:00:00.000Z",
      tool: "cancel",
      attempts: 3,
      error: { name: "HttpError", message: "HTTP 503", status: 503 },
    },
  ];
  const state = {
    goal: "trip",
    status: "awaiting_human" as const,
    plan: { version: 1, steps: [], assumptions: [] },
    planHistory: [],
    steps: {},
    facts: {},
    decisions: [],
    replans: [],
    budget: { spent: 0, replanSpent: 0 },
    sideEffects: [],
    compensations: records,
    outcome: undefined,
  };

  it("planMetrics counts them per status; a run without any has no such field", () => {
    expect(planMetrics(state).compensations).toEqual({ done: 1, failed: 1, pending: 0, waived: 0 });
    expect("compensations" in planMetrics({ ...state, compensations: undefined })).toBe(false);
  });

  it("the user, operator and debug views and the report name them", () => {
    expect(userView(state)).toContain("Abandoned side effects: 1 undone, 1 could not be undone.");
    expect(operatorView(state, { now: 0 })).toContain("compensations: 1 done, 1 failed");
    const debug = debugView(state);
    expect(debug.slice(debug.indexOf("compensations:"), debug.indexOf("compensations:") + 3)).toEqual([
      "compensations:",
      "  hotel: done (cancel, 1 attempt(s)) t:h → t:h:compensate",
      "  flight: failed (cancel, 3 attempt(s)) t:f → t:f:compensate: HttpError: HTTP 503",
    ]);
    expect(htmlReport(state)).toContain("<li>hotel: done (cancel, 1 attempt(s)) t:h → t:h:compensate</li>");
  });
});

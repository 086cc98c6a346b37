/** The steps one external_step question offers (src/plan/external-offers.ts), and which step an answer is about. */
import { describe, expect, it } from "vitest";
import { answeredStepId, offeredStepIds, offerOf, offersOf } from "../../src/plan/external-offers.js";
import type { InterruptPayload } from "../../src/plan/schema/interrupts.js";

const offer = (id: string, attempt = 1) => ({
  step: { id, goal: `goal ${id}`, instructions: `do ${id}` },
  inputs: {},
  produces: [],
  attempt,
});

function question(offered?: ReturnType<typeof offer>[]): InterruptPayload {
  const own = offered?.[0] ?? offer("pack");
  return {
    kind: "external_step",
    reason: own.step.instructions,
    stepId: own.step.id,
    planVersion: 1,
    options: ["submit", "skip", "abort"],
    context: { goal: "g", ...own, ...(offered ? { offered } : {}) },
  };
}

describe("offersOf", () => {
  it("lists the question's offers, in its order", () => {
    const q = question([offer("pack", 2), offer("label"), offer("book")]);
    expect(offeredStepIds(q)).toEqual(["pack", "label", "book"]);
    expect(offerOf(q, "label")).toEqual(offer("label"));
    expect(offerOf(q, "ship")).toBeUndefined();
  });

  it("a question checkpointed before it listed its offers offers its own step", () => {
    expect(offersOf(question())).toEqual([offer("pack")]);
  });

  it("a question of another kind offers nothing", () => {
    const review = { kind: "plan_review", reason: "r", planVersion: 1, options: ["approve"], context: {} };
    expect(offersOf(review as unknown as InterruptPayload)).toEqual([]);
  });
});

describe("answeredStepId", () => {
  const q = question([offer("pack"), offer("label")]);

  it("a submission is about the offered step it names", () => {
    expect(answeredStepId(q, { action: "submit", stepId: "label", output: {} })).toBe("label");
  });

  it("a submission naming a step not offered, and any other answer, are about the question's own step", () => {
    expect(answeredStepId(q, { action: "submit", stepId: "ship", output: {} })).toBe("pack");
    expect(answeredStepId(q, { action: "skip" })).toBe("pack");
    expect(answeredStepId(q, "not an answer")).toBe("pack");
  });
});

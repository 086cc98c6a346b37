/** A plan's status as an MCP task's (src/mcp/task-status.ts): every plan status, and the question as the message. */
import { describe, expect, it } from "vitest";
import type { InterruptPayload } from "../../src/plan/schema/interrupts.js";
import { taskOf } from "../../src/mcp/task-status.js";

describe("taskOf", () => {
  it.each([
    ["planning", "working"],
    ["running", "working"],
    ["awaiting_review", "input_required"],
    ["awaiting_human", "input_required"],
    ["completed", "completed"],
    ["partial", "completed"],
    ["failed", "failed"],
    ["stopped", "cancelled"],
    ["aborted", "cancelled"],
  ])("maps %s to %s", (status, task) => {
    expect(taskOf({ status })).toEqual({ status: task });
  });

  it("a waiting external step is input_required, its instructions the message", () => {
    const question = {
      kind: "external_step",
      reason: "external step",
      planVersion: 1,
      options: ["submit"],
      context: { goal: "g", step: { id: "write", goal: "write it", instructions: "Write the report." } },
    } as unknown as InterruptPayload;
    expect(taskOf({ status: "awaiting_human", question })).toEqual({
      status: "input_required",
      statusMessage: 'external step "write" is yours to do (plan_next, then plan_submit): Write the report.',
    });
  });

  it("several offered external steps: the message names each, in the order offered", () => {
    const step = (id: string, instructions: string) => ({ step: { id, goal: id, instructions }, attempt: 1 });
    const offered = [step("pack", "Pack it."), step("label", "Print the label."), step("book", "Book the pickup.")];
    const question = {
      kind: "external_step",
      reason: "Pack it.",
      stepId: "pack",
      planVersion: 1,
      options: ["submit"],
      context: { goal: "g", ...offered[0], offered },
    } as unknown as InterruptPayload;
    expect(taskOf({ status: "awaiting_human", question })).toEqual({
      status: "input_required",
      statusMessage:
        '3 external steps are yours to do, in any order (plan_next, then plan_submit each): "pack": Pack it.; ' +
        '"label": Print the label.; "book": Book the pickup.',
    });
    const one = { ...question, context: { goal: "g", ...offered[0], offered: [offered[0]] } } as InterruptPayload;
    expect(taskOf({ status: "awaiting_human", question: one }).statusMessage).toBe(
      'external step "pack" is yours to do (plan_next, then plan_submit): Pack it.',
    );
  });
});

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
});

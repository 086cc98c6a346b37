/**
 * A plan's question as a flat elicitation form, and the form's answer as plan_answer's
 * (docs/decisions/0061-questions-elicited-from-the-client.md): pure, one question kind at a time.
 */
import { describe, expect, it } from "vitest";
import { answerFrom, asksAboutUndo, elicitable, elicitForm, valueFields } from "../../src/mcp/elicit-form.js";
import type { InterruptPayload } from "../../src/plan/schema/interrupts.js";

const inDoubt: InterruptPayload = {
  kind: "escalation",
  reason: 'the call to "charge" may have happened: its outcome is unknown',
  stepId: "pay",
  planVersion: 1,
  options: ["happened", "retry", "abort"],
  context: {
    goal: "buy a ticket",
    rule: "effect.in-doubt",
    failureClass: "transient",
    step: { id: "pay", goal: "pay for it", tool: "charge", produces: ["receipt"] },
    attempts: 1,
    inDoubt: { key: "op-1", tool: "charge" },
  },
};

const undoFailed: InterruptPayload = {
  kind: "escalation",
  reason: "the undo of step pay failed",
  stepId: "pay",
  planVersion: 2,
  options: ["retry", "skip", "happened", "abort"],
  context: {
    goal: "buy a ticket",
    rule: "compensate.failed",
    compensation: {
      failed: { stepId: "pay", idempotencyKey: "op-1", compensationKey: "undo-1", tool: "refund", error: "503" },
    },
  },
};

const external: InterruptPayload = {
  kind: "external_step",
  reason: "yours",
  stepId: "x",
  planVersion: 1,
  options: ["submit", "skip", "change_scope", "abort"],
  context: {
    goal: "g",
    step: { id: "x", goal: "do x", instructions: "do it" },
    inputs: {},
    produces: ["y"],
    attempt: 1,
  },
};

describe("elicitForm", () => {
  it("an in-doubt call: happened with one field per fact the step produces, the call's key in the message", () => {
    const form = elicitForm(inDoubt, ["receipt"]);
    expect(form.requestedSchema).toEqual({
      type: "object",
      properties: {
        action: {
          type: "string",
          title: "Answer",
          oneOf: [
            { const: "happened", title: "It happened: give its output" },
            { const: "retry", title: "Retry" },
            { const: "abort", title: "Abort the plan" },
          ],
        },
        reason: { type: "string", title: "Reason", description: "Why (abort, reject); optional." },
        receipt: {
          type: "string",
          title: "receipt",
          description: 'Fact "receipt" (complete, provide, happened): JSON, or plain text.',
        },
      },
      required: ["action"],
    });
    expect(form.message.split("\n")).toEqual([
      'escalation: the call to "charge" may have happened: its outcome is unknown',
      "Goal: buy a ticket",
      "Rule: effect.in-doubt (transient)",
      "Step pay: pay for it (tool charge)",
      "Attempts: 1",
      "Call in doubt: tool charge, key op-1",
    ]);
  });

  it("a failed undo: its output is the undo tool's (one output field), the undo's key and error in the message", () => {
    const form = elicitForm(undoFailed, ["receipt"]);
    expect(Object.keys(form.requestedSchema.properties)).toEqual(["action", "reason", "receipt"]);
    expect(asksAboutUndo(undoFailed)).toBe(true);
    expect(form.message).toContain("Undo failed: step pay, key op-1, error 503");
    expect(answerFrom({ action: "happened", output: '{"refunded":true}', receipt: "r" }, ["receipt"], true)).toEqual({
      action: "happened",
      output: { refunded: true },
    });
  });

  it("a refused answer is said at the end of the message asked once more; a long message is cut", () => {
    const form = elicitForm(inDoubt, ["receipt"], "output is missing receipt");
    expect(form.message.split("\n").at(-1)).toBe(
      "Your answer was refused: output is missing receipt. Answer once more, or later with plan_answer.",
    );
    const long = {
      ...inDoubt,
      context: { ...inDoubt.context, tried: Array.from({ length: 200 }, (_, i) => "x".repeat(40) + i) },
    };
    expect(elicitForm(long as InterruptPayload, undefined).message).toHaveLength(4_000);
  });

  it("an external step is not a person's to answer; a fact key that is a field's name is renamed", () => {
    expect([elicitable(external), elicitable(inDoubt), elicitable(undoFailed)]).toEqual([false, true, true]);
    expect([...valueFields(["action", "day", "output"])]).toEqual([
      ["fact.action", "action"],
      ["day", "day"],
      ["fact.output", "output"],
    ]);
  });
});

describe("answerFrom", () => {
  it("reads each fact as JSON, or as text when it is not JSON; empty fields are left out", () => {
    expect(answerFrom({ action: "happened", receipt: '{"id":7}' }, ["receipt"])).toEqual({
      action: "happened",
      output: { receipt: { id: 7 } },
    });
    expect(answerFrom({ action: "provide", a: "plain words", b: "" }, ["a", "b"])).toEqual({
      action: "provide",
      facts: { a: "plain words" },
    });
    expect(answerFrom({ action: "abort", reason: "", constraint: "ignored" }, undefined)).toEqual({ action: "abort" });
    expect(answerFrom({ action: "replan", constraint: "no trains" }, undefined)).toEqual({
      action: "replan",
      constraint: "no trains",
    });
    expect(answerFrom({ action: "complete", output: "42" }, undefined)).toEqual({ action: "complete", output: 42 });
  });
});

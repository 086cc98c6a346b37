/**
 * External steps (docs/decisions/0042-external-steps.md): a step the calling agent does itself.
 * The run pauses with an `external_step` question; the agent's submission is judged by the one
 * attempt function and answered by the ladder with the same rules as a tool's result.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import {
  createPlanManager,
  isPlanManagerError,
  pendingQuestion,
  resumeRun,
  staticPlanner,
  type PlanDraft,
} from "../../src/index.js";
import { effectKey } from "../../src/policy/attempt/attempt.js";
import { externalCall } from "../../src/policy/attempt/external.js";
import { fakeClock } from "../helpers/clock.js";
import { harness, scriptedTool, type Loose } from "../helpers/graph.js";

const INSTRUCTIONS = "Order the part on the vendor portal at the quoted price; answer with the order id";

function draft(order: Record<string, unknown> = {}): PlanDraft {
  return {
    assumptions: [{ id: "portal-open", statement: "the vendor portal takes orders" }],
    steps: [
      { id: "quote", goal: "get a quote", tool: "quote", produces: ["price"] },
      {
        id: "order",
        goal: "order the part",
        external: { instructions: INSTRUCTIONS },
        dependsOn: ["quote"],
        inputs: ["price"],
        produces: ["orderId"],
        successSignal: 'output.orderId != ""',
        assumptions: ["portal-open"],
        retry: { maxAttempts: 3, backoff: "none" },
        ...order,
      },
      { id: "notify", goal: "tell the team", tool: "notify", dependsOn: ["order"], inputs: ["orderId"] },
    ],
  } as PlanDraft;
}

function setup(order: Record<string, unknown> = {}, options: Record<string, unknown> = {}) {
  const quote = scriptedTool("quote", [{ price: 42 }]);
  const notify = scriptedTool("notify", [{ sent: true }]);
  const phone = scriptedTool("phoneOrder", [{ orderId: "PHONE-1" }]);
  const h = harness(draft(order), [quote, notify, phone], options);
  return { ...h, quote, notify, phone };
}

const rules = (state: Loose) => state.decisions.map((d: Loose) => `${d.stepId ?? "-"} ${d.rule}`);

describe("external steps: the question", () => {
  it("pauses with kind external_step carrying the goal, instructions, trusted inputs and success signal", async () => {
    const h = setup();
    const paused = await h.run();
    expect(paused.status).toBe("awaiting_human");
    const question = await pendingQuestion(h.graph, h.config);
    expect(question).toEqual({
      kind: "external_step",
      reason: INSTRUCTIONS,
      stepId: "order",
      planVersion: 1,
      options: ["submit", "skip", "abort"],
      context: {
        goal: "test goal",
        step: { id: "order", goal: "order the part", instructions: INSTRUCTIONS },
        inputs: { price: 42 },
        produces: ["orderId"],
        successSignal: 'output.orderId != ""',
        attempt: 1,
      },
    });
    expect(paused.__interrupt__[0].value).toEqual(question);
    expect(paused.steps.order).toEqual({ status: "running", attempts: 1, startedAt: "2026-01-01T00:00:00.000Z" });
  });
});

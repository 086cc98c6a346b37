/**
 * Termination bounds (README): a planner or classifier that never answers cannot hold a run.
 * `policy.plannerTimeoutMs` bounds every plan, replan, extend and LLM-classifier call; a call past
 * it is a planner failure, handled as a thrown one is, and the invoke returns.
 */
import { describe, expect, it } from "vitest";
import { createPlanManager, isPlanManagerError, type PlanDraft, type Planner } from "../../src/index.js";
import { brief, harness, scriptedTool } from "../helpers/graph.js";
import { ScriptedChatModel } from "../helpers/fake-model.js";
import { llmPlanner } from "../../src/index.js";
import type { BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";

/** A chat model that never answers; it records the signal each call was given. */
class SilentModel extends ScriptedChatModel {
  readonly signals: (AbortSignal | undefined)[] = [];
  override async _generate(_: BaseMessage[], options?: { signal?: AbortSignal }): Promise<ChatResult> {
    this.signals.push(options?.signal);
    return new Promise<never>(() => undefined);
  }
}

/** A call that never settles, and the signal it was given (aborted at the deadline). */
function hanging() {
  const signals: (AbortSignal | undefined)[] = [];
  const call = (req: { signal?: AbortSignal }) => {
    signals.push(req.signal);
    return new Promise<never>(() => undefined);
  };
  return { signals, call };
}

const policy = { plannerTimeoutMs: 20 };
const work = () => scriptedTool("work", [{ ok: true }]);

describe("planner timeout", () => {
  it("fails the run when the first plan does not come in time, with nothing run", async () => {
    const hang = hanging();
    const tool = work();
    const out = await harness({ plan: hang.call } as Planner, [tool], { policy }).run();
    expect(out.status).toBe("failed");
    expect(out.outcome).toMatchObject({
      failureReason: "planner_error",
      message: "the planner failed: planner.plan did not answer within 20 ms (policy.plannerTimeoutMs)",
    });
    expect(tool.calls).toEqual([]);
    expect(hang.signals[0]?.aborted).toBe(true);
  });

  it("aborts llmPlanner's model call at the deadline", async () => {
    const model = new SilentModel([]);
    const out = await harness(llmPlanner({ model, calls: { maxRetries: 0 } }), [work()], { policy }).run();
    expect([out.status, out.outcome.failureReason]).toEqual(["failed", "planner_error"]);
    expect(model.signals.map((s) => s?.aborted)).toEqual([true]);
  });

  it("escalates a replan that does not come in time (replan.planner-error)", async () => {
    const hang = hanging();
    const plan: PlanDraft = {
      assumptions: [{ id: "a", statement: "s" }],
      steps: [{ id: "w", goal: "W", tool: "work", successSignal: "output.ok", assumptions: ["a"] }],
    };
    const tool = scriptedTool("work", [{ ok: false }]);
    const planner: Planner = { plan: async () => structuredClone(plan), replan: hang.call };
    const out = await harness(planner, [tool], { policy }).run();
    expect(out.status).toBe("awaiting_human");
    expect(brief(out.decisions)).toEqual([
      "w: success_signal_unmet → replan_local [unmet.replan-local]",
      "w: success_signal_unmet → escalate [replan.planner-error]",
    ]);
    expect(out.decisions[1].reason).toBe(
      "the planner failed to replan: planner.replan did not answer within 20 ms (policy.plannerTimeoutMs)",
    );
    expect(hang.signals[0]?.aborted).toBe(true);
  });

  it("escalates an extension that does not come in time", async () => {
    const hang = hanging();
    const planner: Planner = {
      plan: async () => ({ steps: [{ id: "s1", goal: "S1", tool: "work" }], complete: false }),
      extend: hang.call,
    };
    const out = await harness(planner, [work()], { policy }).run();
    expect(out.status).toBe("awaiting_human");
    expect(out.decisions.map((d: { rule: string; reason: string }) => [d.rule, d.reason])).toEqual([
      [
        "replan.planner-error",
        "the planner failed to extend the plan: planner.extend did not answer within 20 ms (policy.plannerTimeoutMs)",
      ],
    ]);
  });

  it("lets the rule's verdict stand when the LLM classifier does not answer in time", async () => {
    const hang = hanging();
    const tool = scriptedTool("work", [new Error("stream ended unexpectedly")]);
    const classifier = { classify: (input: object) => hang.call(input) };
    const h = harness({ steps: [{ id: "w", goal: "W", tool: "work" }] }, [tool], { policy, classifier });
    const out = await h.run();
    expect(brief(out.decisions)).toEqual(["w: unknown → escalate [unknown.escalate]"]);
    expect(out.decisions[0].reason).toBe(
      "w: Error: stream ended unexpectedly; no rule recognised this failure; " +
        "the LLM classifier failed: classifier.classify did not answer within 20 ms (policy.plannerTimeoutMs)",
    );
    expect(hang.signals[0]?.aborted).toBe(true);
  });

  it("lets the rule's verdict stand when the LLM classifier throws", async () => {
    const tool = scriptedTool("work", [new Error("stream ended unexpectedly")]);
    const classifier = {
      classify: async () => {
        throw new Error("socket hang up");
      },
    };
    const out = await harness({ steps: [{ id: "w", goal: "W", tool: "work" }] }, [tool], { classifier }).run();
    expect(out.decisions[0].reason).toBe(
      "w: Error: stream ended unexpectedly; no rule recognised this failure; the LLM classifier failed: socket hang up",
    );
  });

  it.each([0, -1, 1.5, Number.NaN, 86_400_001])("refuses policy.plannerTimeoutMs = %s at construction", (value) => {
    let thrown: unknown;
    try {
      createPlanManager({
        tools: [],
        planner: { plan: async () => ({ steps: [] }) },
        policy: { plannerTimeoutMs: value },
      });
    } catch (error) {
      thrown = error;
    }
    expect(isPlanManagerError(thrown) && [thrown.code, thrown.path]).toEqual([
      "invalid_options",
      "policy.plannerTimeoutMs",
    ]);
  });
});

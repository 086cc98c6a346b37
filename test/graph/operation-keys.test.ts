/**
 * Idempotency keys name the operation, not the step (docs/decisions/0006-idempotency-keys-name-the-operation.md):
 * a replan that hands the same call back under another step id reuses the committed effect instead
 * of charging again; a step's `operation` label makes the same call a second operation on purpose.
 */
import { tool } from "@langchain/core/tools";
import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { AssumptionBrokenError, staticPlanner, type PlanDraft } from "../../src/index.js";
import { operationKey } from "../../src/plan/operation.js";
import { brief, harness, scriptedTool, type Loose } from "../helpers/graph.js";

/** A card processor that honours keys: a charge per new key, the old receipt for a known one. */
function processor() {
  const receipts = new Map<string, string>();
  const calls: { amount: number; key: string }[] = [];
  const charge = tool(
    async ({ amount }, config) => {
      const key = String(config?.configurable?.idempotencyKey ?? "");
      calls.push({ amount, key });
      if (!receipts.has(key)) receipts.set(key, `R-${receipts.size + 1}`);
      return { receipt: receipts.get(key)! };
    },
    {
      name: "charge",
      description: "Charge the card",
      schema: z.object({ amount: z.number(), to: z.string() }),
      metadata: { sideEffects: ["card charge"] },
    },
  );
  return { charge, calls, charges: () => receipts.size };
}

const payPlan: PlanDraft = {
  assumptions: [{ id: "vendor_ok", statement: "the vendor accepts the order" }],
  steps: [
    {
      id: "pay",
      goal: "Pay the vendor",
      tool: "charge",
      args: { amount: 100, to: "ACME" },
      produces: ["receipt"],
      assumptions: ["vendor_ok"],
    },
    { id: "confirm", goal: "Confirm the order", tool: "confirm", dependsOn: ["pay"], produces: ["confirmed"] },
  ],
};

/**
 * The replan hands the payment back under new ids, with the same amount or (`amount`) another, and
 * confirms by phone this time (a replan that changed nothing would be no progress).
 */
const renamed = (amount: number) => (req: { affectedSteps: PlanDraft["steps"] }) => ({
  steps: req.affectedSteps.map((s) =>
    s.id === "pay"
      ? { ...s, id: "pay_again", args: { amount, to: "ACME" }, assumptions: [] }
      : { ...s, id: "confirm_again", args: { channel: "phone" }, dependsOn: ["pay_again"], assumptions: [] },
  ),
});

function shop(amount: number) {
  const p = processor();
  const confirm = scriptedTool("confirm", [
    new AssumptionBrokenError("vendor_ok", "the vendor asks for the order again"),
    { confirmed: true },
  ]);
  const h = harness(staticPlanner({ plan: payPlan, replan: renamed(amount) }), [p.charge, confirm], {
    threadId: "order-7",
  });
  return { ...h, ...p, confirm };
}

const keysOf = (out: Loose): string[] => out.sideEffects.map((e: { idempotencyKey: string }) => e.idempotencyKey);

describe("idempotency keys name the operation, not the step", () => {
  it("a replan that hands the same charge back under a new step id reuses it: one call, one key", async () => {
    const s = shop(100);
    const out = await s.run();
    const key = operationKey("order-7", "charge", { amount: 100, to: "ACME" });
    expect(key).toBe("order-7:009d9262571d6a3a");
    expect(out.status).toBe("completed");
    expect([s.calls, s.charges()]).toEqual([[{ amount: 100, key }], 1]);
    expect(keysOf(out)).toEqual([key]);
    expect(brief(out.decisions)).toEqual([
      "confirm: assumption_broken → replan_local [assumption.replan-local]",
      "pay_again: none → reuse [effect.reused]",
    ]);
    expect(out.decisions[1].reason).toBe(
      `charge: the same operation was committed by step "pay" under key ${key}; ` +
        "its output is reused and the tool is not called again",
    );
    expect([out.steps.pay_again.status, out.steps.pay_again.output, out.facts.receipt.value]).toEqual([
      "succeeded",
      { receipt: "R-1" },
      "R-1",
    ]);
    expect(out.facts.receipt.producedBy).toBe("pay_again");
  });

  it("a changed amount under a new step id is a new operation: a second call under a new key", async () => {
    const s = shop(120);
    // The first charge is abandoned and has no compensate: a person is asked before the version
    // commits (docs/decisions/0039-compensation.md), and keeps it.
    const asked = await s.run();
    expect([asked.status, asked.decisions.at(-1).rule, s.calls.length]).toEqual([
      "awaiting_human",
      "compensate.missing",
      1,
    ]);
    const out = await s.run(new Command({ resume: { action: "approve" } }));
    const first = operationKey("order-7", "charge", { amount: 100, to: "ACME" });
    const second = operationKey("order-7", "charge", { amount: 120, to: "ACME" });
    expect(out.status).toBe("completed");
    expect(s.calls).toEqual([
      { amount: 100, key: first },
      { amount: 120, key: second },
    ]);
    expect(keysOf(out)).toEqual([first, second]);
    expect(out.decisions.map((d: { rule: string }) => d.rule)).not.toContain("effect.reused");
  });

  it("an operation label makes the same call a second operation on purpose: two calls, two keys", async () => {
    const p = processor();
    const installment = (id: string, operation: string) => ({
      id,
      goal: `Pay installment ${operation}`,
      tool: "charge",
      args: { amount: 50, to: "ACME" },
      operation,
    });
    const plan: PlanDraft = {
      steps: [installment("first", "1"), { ...installment("second", "2"), dependsOn: ["first"] }],
    };
    const h = harness(plan, [p.charge], { threadId: "order-8" });
    const out = await h.run();
    const args = { amount: 50, to: "ACME" };
    const keys = [operationKey("order-8", "charge", args, "1"), operationKey("order-8", "charge", args, "2")];
    expect(out.status).toBe("completed");
    expect(p.calls).toEqual(keys.map((key) => ({ amount: 50, key })));
    expect(keysOf(out)).toEqual(keys);
    expect(new Set([...keys, operationKey("order-8", "charge", args)]).size).toBe(3);
  });

  it("two steps of one version making the same side-effecting call without a label: an invalid plan, nothing charged", async () => {
    const p = processor();
    const pay = { goal: "Pay", tool: "charge", args: { amount: 50, to: "ACME" } };
    const plan: PlanDraft = {
      steps: [
        { id: "pay", ...pay, produces: ["receipt"] },
        { id: "pay_twice", ...pay, dependsOn: ["pay"], produces: ["receipt_2"] },
      ],
    };
    const h = harness(plan, [p.charge], { threadId: "order-9" });
    const out = await h.run();
    expect([out.status, out.outcome.failureReason, p.calls.length]).toEqual(["failed", "invalid_plan", 0]);
    expect(out.outcome.message).toContain(
      'steps "pay" and "pay_twice" make the same side-effecting call (charge with the same arguments and inputs): ' +
        "the second would reuse the first's effect; give each an `operation` label if the call is meant twice",
    );
  });
});

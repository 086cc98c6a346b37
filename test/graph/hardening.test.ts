/**
 * Defects found by trying the library as a new user would (issue [hardening]). Each test
 * failed before its fix.
 */
import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { managerWrite } from "../../src/graph/boundary.js";
import { operationKey } from "../../src/plan/operation.js";
import {
  AssumptionBrokenError,
  createPlanManager,
  isPlanManagerError,
  staticPlanner,
  type PlanDraft,
} from "../../src/index.js";
import { userView } from "../../src/views/index.js";
import { createLoanTools, loanPlan } from "../../examples/loan/workflow.js";
import { fakeClock } from "../helpers/clock.js";
import { brief, harness, httpError, scriptedTool, type Loose } from "../helpers/graph.js";

/** A seat-hold API that honours idempotency keys the way payment APIs do. */
function seatApi() {
  const holds = new Map<string, { flight: string; hold: string }>();
  const calls: { flight: string; key: string }[] = [];
  const holdSeat = tool(
    async ({ flight }, config) => {
      const key = String(config?.configurable?.idempotencyKey ?? "");
      calls.push({ flight, key });
      const known = holds.get(key);
      if (known && known.flight !== flight) throw httpError(422, `key ${key} reused with other parameters`);
      if (!known) holds.set(key, { flight, hold: `H-${flight}` });
      return { hold_id: holds.get(key)!.hold };
    },
    {
      name: "hold_seat",
      description: "Hold a seat",
      schema: z.object({ flight: z.string() }),
      metadata: { sideEffects: ["seat hold"] },
    },
  );
  return { holdSeat, holds, calls };
}

const travelPlan: PlanDraft = {
  assumptions: [{ id: "fare_ok", statement: "the first airline's fare stays under budget" }],
  steps: [
    {
      id: "search",
      goal: "Search flights",
      tool: "search",
      args: { airline: "AA" },
      produces: ["flight"],
      assumptions: ["fare_ok"],
    },
    {
      id: "hold_seat",
      goal: "Hold a seat",
      tool: "hold_seat",
      dependsOn: ["search"],
      inputs: ["flight"],
      produces: ["hold_id"],
    },
    {
      id: "price_check",
      goal: "Check the price",
      tool: "price_check",
      dependsOn: ["hold_seat"],
      inputs: ["flight"],
      produces: ["price"],
    },
  ],
};

/**
 * The replan keeps the step ids and changes the airline, or (`same`) only the cabin class, which
 * finds the same flight: then the hold's operation is unchanged.
 */
const travelReplan = (same: boolean) => (req: { affectedSteps: PlanDraft["steps"] }) => ({
  steps: req.affectedSteps.map((s) => {
    if (s.id !== "search") return { ...s, assumptions: [] };
    return { ...s, args: same ? { airline: "AA", cabin: "economy" } : { airline: "BA" }, assumptions: [] };
  }),
});

function travel(same: boolean) {
  const api = seatApi();
  let priceChecks = 0;
  const search = scriptedTool("search", [
    (args: Record<string, unknown>) => ({ flight: args.airline === "BA" ? "BA117" : "AA100" }),
  ]);
  const price = scriptedTool("price_check", [
    () => {
      priceChecks += 1;
      if (priceChecks === 1) throw new AssumptionBrokenError("fare_ok", "fare rose to 900");
      return { price: 450 };
    },
  ]);
  const planner = staticPlanner({ plan: travelPlan, replan: travelReplan(same) });
  const h = harness(planner, [search, api.holdSeat, price], { threadId: "trip-1" });
  return { ...h, api, search, price };
}

describe("idempotency keys name the operation", () => {
  it("escalates instead of running a changed operation under the committed step's old key", async () => {
    const t = travel(false);
    const paused = await t.run();
    const oldKey = operationKey("trip-1", "hold_seat", { flight: "AA100" });
    const newKey = operationKey("trip-1", "hold_seat", { flight: "BA117" });
    expect(oldKey).toBe("trip-1:34148f341ae8ac84");
    expect(newKey).not.toBe(oldKey);
    expect(brief(paused.decisions)).toEqual([
      "price_check: assumption_broken → replan_local [assumption.replan-local]",
      "hold_seat: deterministic → escalate [guard.committed-side-effect]",
    ]);
    expect(paused.__interrupt__[0].value).toMatchObject({
      kind: "escalation",
      stepId: "hold_seat",
      context: { sideEffect: { committedKey: oldKey, proposedKey: newKey } },
    });
    expect(t.api.calls).toEqual([{ flight: "AA100", key: oldKey }]);

    // The person allows the new hold: it runs under its own key, and each key is listed once.
    const done = await t.run(new Command({ resume: { action: "retry" } }));
    expect(done.status).toBe("completed");
    expect(t.api.calls).toEqual([
      { flight: "AA100", key: oldKey },
      { flight: "BA117", key: newKey },
    ]);
    expect(done.facts.hold_id.value).toBe("H-BA117");
    expect(done.sideEffects.map((e: { idempotencyKey: string }) => e.idempotencyKey)).toEqual([oldKey, newKey]);
  });

  it("reuses the committed hold, and lists its key once, when a backtrack leaves the operation unchanged", async () => {
    const t = travel(true);
    const out = await t.run();
    const key = operationKey("trip-1", "hold_seat", { flight: "AA100" });
    expect(out.status).toBe("completed");
    expect(t.api.calls).toEqual([{ flight: "AA100", key }]);
    expect(out.sideEffects.map((e: { idempotencyKey: string }) => e.idempotencyKey)).toEqual([key]);
    expect(brief(out.decisions)).toEqual([
      "price_check: assumption_broken → replan_local [assumption.replan-local]",
      "hold_seat: none → reuse [effect.reused]",
    ]);
    expect(out.facts.hold_id.value).toBe("H-AA100");
  });

  it("gives a fork from an earlier checkpoint with a changed input a new key, which a person must allow", async () => {
    const api = seatApi();
    const plan: PlanDraft = {
      steps: [{ id: "hold_seat", goal: "Hold", tool: "hold_seat", inputs: ["flight"], produces: ["hold_id"] }],
    };
    const h = harness(plan, [api.holdSeat], { threadId: "fork", context: { flight: "AA100" } });
    await h.run();
    const history = [];
    for await (const snapshot of h.graph.getStateHistory(h.config)) history.push(snapshot);
    const beforeHold = history.find((s) => s.next.includes("executor"))!;
    // The manager's own write (a user forks with a new thread and input): facts are not writable from outside.
    const changed = await h.graph.updateState(
      beforeHold.config,
      managerWrite({
        facts: {
          flight: {
            value: "BA117",
            label: "trusted",
            producedBy: "input",
            planVersion: 0,
            assumptions: [],
            derivedFrom: [],
          },
        },
      }),
    );
    // The fork carries the hold committed since: the same step holding another flight is a second hold.
    const keys = [
      operationKey("fork", "hold_seat", { flight: "AA100" }),
      operationKey("fork", "hold_seat", { flight: "BA117" }),
    ];
    const forked: Loose = await h.graph.invoke(null, changed);
    expect(forked.__interrupt__[0].value.context.sideEffect).toEqual({ committedKey: keys[0], proposedKey: keys[1] });
    expect(api.calls.map((c) => c.key)).toEqual([keys[0]]);
    const allowed: Loose = await h.graph.invoke(new Command({ resume: { action: "retry" } }), h.config);
    expect(api.calls.map((c) => c.key)).toEqual(keys);
    expect(allowed.facts.hold_id.value).toBe("H-BA117");
  });
});

describe("tool outputs are JSON at the boundary", () => {
  it("stores a Date as its ISO string, so a resumed run sees what an uninterrupted one saw", async () => {
    const plan: PlanDraft = {
      steps: [
        { id: "when", goal: "When", tool: "when", produces: ["at"] },
        { id: "ask", goal: "Ask", human: { prompt: "ok?" }, dependsOn: ["when"], produces: ["ok"] },
        { id: "use", goal: "Use", tool: "use", dependsOn: ["ask"], inputs: ["at"], produces: ["seen"] },
      ],
    };
    const use = scriptedTool("use", [(args: Record<string, unknown>) => ({ seen: typeof args.at })]);
    const h = harness(plan, [scriptedTool("when", [{ at: new Date("2026-03-01T10:00:00Z") }]), use]);
    const paused = await h.run();
    expect(paused.facts.at.value).toBe("2026-03-01T10:00:00.000Z");
    const out = await h.run(new Command({ resume: { action: "complete", output: { ok: true } } }));
    expect(use.calls).toEqual([{ at: "2026-03-01T10:00:00.000Z" }]);
    expect(out.facts.seen.value).toBe("string");
  });

  it("rejects a value that is not JSON with a message naming its type, and records no fact", async () => {
    const plan: PlanDraft = { steps: [{ id: "a", goal: "A", tool: "a", produces: ["n"], retry: { maxAttempts: 1 } }] };
    const out = await harness(plan, [scriptedTool("a", [{ n: 10n }])]).run();
    expect(out.facts.n).toBeUndefined();
    expect(out.steps.a.error).toEqual({
      name: "OutputRejected",
      message:
        "output.n is a BigInt; tools must return JSON values (plain objects, arrays, strings, numbers, booleans, null)",
    });
    expect(brief(out.decisions)).toEqual(["a: deterministic → escalate [deterministic.escalate]"]);
  });
});

describe("provide", () => {
  const plan: PlanDraft = {
    steps: [
      { id: "quote", goal: "Get a quote", tool: "quote", produces: ["amount"] },
      {
        id: "pay",
        goal: "Pay",
        tool: "pay",
        dependsOn: ["quote"],
        inputs: ["amount"],
        produces: ["receipt"],
        sideEffects: ["charge card"],
      },
    ],
  };

  it("accepts only the escalated step's facts, within the fact limits", async () => {
    const h = harness(plan, [
      scriptedTool("quote", [{ amount: 40 }]),
      scriptedTool("pay", [httpError(400, "card declined")]),
    ]);
    const paused = await h.run();
    expect(paused.__interrupt__[0].value.stepId).toBe("pay");
    const foreign = await h.run(new Command({ resume: { action: "provide", facts: { amount: 5 } } }));
    expect(foreign.__interrupt__[0].value.error).toBe(
      'cannot provide amount: step "pay" produces receipt; provide only those',
    );
    expect((await h.state()).facts.amount).toMatchObject({ value: 40, producedBy: "quote", label: "trusted" });
    const huge = await h.run(new Command({ resume: { action: "provide", facts: { receipt: "x".repeat(200_000) } } }));
    expect(huge.__interrupt__[0].value.error).toBe(
      "facts.receipt is 200002 bytes of JSON, over the 64000-byte fact limit",
    );
    const none = await h.run(new Command({ resume: { action: "provide", facts: {} } }));
    expect(none.__interrupt__[0].value.error).toBe('provide receipt too: step "pay" produces receipt');
  });

  it("records a provided side-effecting step as done by a person, never as a tool success", async () => {
    const h = harness(plan, [
      scriptedTool("quote", [{ amount: 40 }]),
      scriptedTool("pay", [httpError(400, "card declined")]),
    ]);
    await h.run();
    const out = await h.run(new Command({ resume: { action: "provide", facts: { receipt: "paid at the desk" } } }));
    expect(out.status).toBe("completed");
    expect(out.steps.pay).toMatchObject({
      status: "succeeded",
      doneBy: "person",
      attempts: 1,
      output: { receipt: "paid at the desk" },
    });
    expect(out.sideEffects).toEqual([]);
    expect(out.outcome.summary).toBe('Completed "test goal": 1 of 2 steps succeeded, 1 done by a person (plan v1).');
    expect(out.outcome.uncertainty).toEqual([
      '"Pay" was done by a person, not by its tool (its side effects did not happen: charge card)',
    ]);
    expect(userView(out as never)).toEqual(["✓ Get a quote", "✓ Pay (done by a person)", "Done."]);
    expect(out.decisions.at(-1)).toMatchObject({
      action: "provide",
      rule: "human.provide",
      by: "person",
      failureClass: "deterministic",
    });
  });
});

describe("required work undone", () => {
  it("ends partial, naming what was not done, when a person skips required steps (the demo's skip, skip)", async () => {
    const loan = createLoanTools({ bureauFailures: 0 });
    const graph = createPlanManager({
      tools: loan.tools,
      planner: staticPlanner({ plan: loanPlan }),
      clock: fakeClock(),
    }).compile({ checkpointer: new MemorySaver() });
    const config = { configurable: { thread_id: "loan-skip" } };
    await graph.invoke({ goal: "Process loan application A-7291", context: { applicant_id: "A-7291" } }, config);
    await graph.invoke(new Command({ resume: { action: "skip" } }), config);
    const out: Loose = await graph.invoke(new Command({ resume: { action: "skip" } }), config);
    expect(out.status).toBe("partial");
    expect(loan.calls).not.toContain("issue_decision");
    expect(out.outcome.summary).toBe(
      'Partly done "Process loan application A-7291" (not done: human_review, issue_decision): 3 of 5 steps succeeded, 2 skipped (plan v1).',
    );
    expect(out.outcome.missing.map((m: { stepId: string }) => m.stepId)).toEqual(["human_review", "issue_decision"]);
    expect(userView(out as never).at(-1)).toBe(
      "Partly done. Not done: Compliance review by an underwriter; Issuing the decision.",
    );
    expect(brief(out.decisions)).toEqual([
      "human_review: person → skip [human.skip]",
      "issue_decision: precondition_failed → escalate [precondition.escalate]",
      "issue_decision: person → skip [human.skip]",
    ]);
  });
});

describe("updateState is validated", () => {
  const plan: PlanDraft = {
    steps: [
      { id: "ask", goal: "Ask", human: { prompt: "Go?" }, produces: ["ok"] },
      { id: "act", goal: "Act", tool: "act", dependsOn: ["ask"], inputs: ["amount"], produces: ["done"] },
    ],
  };

  it.each([
    [
      { plan: { version: "x", steps: "nope" } },
      'updateState: "plan" cannot be written from outside a run (the manager owns it); the keys you may write are: scopeChanges',
      "plan",
    ],
    [
      { status: "bogus" },
      'updateState: "status" cannot be written from outside a run (the manager owns it); the keys you may write are: scopeChanges',
      "status",
    ],
    [
      { scopeChanges: "x" },
      "state update rejected: scopeChanges: Invalid input: expected array, received string",
      "scopeChanges",
    ],
    [
      { facts: { amount: 5 } },
      'updateState: "facts" cannot be written from outside a run (the manager owns it); the keys you may write are: scopeChanges',
      "facts",
    ],
  ])("rejects %j with a typed error naming the field, and changes nothing", async (update, message, path) => {
    const act = scriptedTool("act", [{ done: true }]);
    const h = harness(plan, [act], { context: { amount: 12 } });
    await h.run();
    const before = await h.graph.getState(h.config);
    const error = await h.graph.updateState(h.config, update).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isPlanManagerError(error)).toBe(true);
    expect(error).toMatchObject({ code: "invalid_update", message, path });
    const after = await h.graph.getState(h.config);
    expect(after.config.configurable?.checkpoint_id).toBe(before.config.configurable?.checkpoint_id);
    const out = await h.run(new Command({ resume: { action: "complete", output: { ok: true } } }));
    expect(out.status).toBe("completed");
    expect(act.calls).toEqual([{ amount: 12 }]);
  });
});

describe("options offered are options that can work", () => {
  it("offers no replan at a plan review when the planner cannot replan", async () => {
    const plan: PlanDraft = { steps: [{ id: "a", goal: "A", tool: "a" }] };
    const h = harness(plan, [scriptedTool("a", [{}])], { reviewPlan: true });
    const paused = await h.run();
    expect(paused.__interrupt__[0].value.options).toEqual(["approve", "abort"]);
    const again = await h.run(new Command({ resume: { action: "replan", constraint: "cheaper" } }));
    expect(again.__interrupt__[0].value.error).toBe(
      'action "replan" is not available here; choose one of: approve, abort',
    );
    const out = await h.run(new Command({ resume: { action: "approve" } }));
    expect(out.status).toBe("completed");
  });
});

describe("a person's decision says so", () => {
  it("records an abort as the person's, with the class of the failure it answers", async () => {
    const plan: PlanDraft = { steps: [{ id: "a", goal: "A", tool: "a", retry: { maxAttempts: 1 } }] };
    const h = harness(plan, [scriptedTool("a", [httpError(503)])]);
    await h.run();
    const out = await h.run(new Command({ resume: { action: "abort", reason: "enough" } }));
    expect(out.decisions.map((d: Loose) => [d.failureClass, d.action, d.rule, d.by ?? "rules"])).toEqual([
      ["deterministic", "escalate", "exhausted.escalate", "rules"],
      ["deterministic", "abort", "human.abort", "person"],
    ]);
  });

  it("records an answer at a plan review with no failure class", async () => {
    const plan: PlanDraft = { steps: [{ id: "a", goal: "A", tool: "a" }] };
    const h = harness(plan, [scriptedTool("a", [{}])], { reviewPlan: true });
    await h.run();
    const out = await h.run(new Command({ resume: { action: "abort" } }));
    expect(out.decisions).toEqual([
      expect.objectContaining({ failureClass: "none", action: "abort", rule: "human.abort", by: "person" }),
    ]);
  });
});

describe("records after a replan that keeps ids", () => {
  it("names the changed steps and keeps every version's attempts", async () => {
    const t = travel(false);
    await t.run();
    const done = await t.run(new Command({ resume: { action: "retry" } }));
    // The replan also dropped the broken assumption from every step (assumptions: []), so all three changed.
    expect(done.replans[0]).toMatchObject({
      invalidatedSteps: [],
      newSteps: [],
      changedSteps: ["search", "hold_seat", "price_check"],
    });
    const { debugView, htmlReport } = await import("../../src/views/index.js");
    const { runsAtVersion } = await import("../../src/plan/history.js");
    expect(runsAtVersion(done as never, 1)).toMatchObject({
      search: { status: "succeeded", attempts: 1 },
      hold_seat: { status: "succeeded", attempts: 1 },
      price_check: { status: "failed", attempts: 1 },
    });
    const steps = debugView(done as never).slice(4, 11);
    expect(steps.map((l: string) => l.replace(/ 2026-.*$/, ""))).toEqual([
      "  search (v1): succeeded, 1 attempt, cost 0",
      "  search: succeeded, 1 attempt, cost 0",
      "  hold_seat (v1): succeeded, 1 attempt, cost 0",
      "  hold_seat: succeeded, 1 attempt, cost 0",
      "  price_check (v1): failed, 1 attempt, cost 0",
      "    error: AssumptionBrokenError: fare rose to 900",
      "  price_check: succeeded, 1 attempt, cost 0",
    ]);
    const html = htmlReport(done as never);
    // Timeline rows (started, ended, plan, step): v1's three attempts are still there beside v2's.
    const rows = [...html.matchAll(/Z<\/td><td>[^<]*Z<\/td><td>(v\d)<\/td><td>([a-z_]+)<\/td>/g)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    expect(rows).toEqual([
      "v1 search",
      "v1 hold_seat",
      "v1 price_check",
      "v2 search",
      "v2 hold_seat",
      "v2 price_check",
    ]);
    expect(html).toContain("grid-template-columns:repeat(auto-fill,minmax(380px,1fr))");
  });
});

/**
 * The plan quality gate in the graph (docs/decisions/0040-plan-quality-gate.md): every plan version
 * is checked before its first step; findings at or above policy.quality.hold wait for a person at
 * plan review; the reviewer model's failures are findings, never crashes; outcome.quality says how
 * well a finished run went.
 */
import { Command } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AssumptionBrokenError, PermanentError, llmPlanner, staticPlanner, type PlanDraft } from "../../src/index.js";
import { llmAnswer, llmStep } from "../helpers/llm-answers.js";
import { brief, harness, scriptedTool, type Loose } from "../helpers/graph.js";
import { ScriptedChatModel } from "../helpers/scripted-chat-model.js";
import { htmlReport, operatorView, userView } from "../../src/views/index.js";
import { threadLine } from "../../src/cli/thread-line.js";
import { planStatus } from "../../src/mcp/status.js";

/** A quote whose price estimate spans 0.5 to 5000 (10,000×), then an order that rests on it. */
const wide: PlanDraft = {
  steps: [
    { id: "quote", goal: "Get a quote", tool: "quote", produces: ["price"], assumptions: ["cheap"] },
    {
      id: "order",
      goal: "Order at the quoted price",
      tool: "order",
      inputs: ["price"],
      dependsOn: ["quote"],
      produces: ["orderId"],
      successSignal: "output.ok == true",
    },
  ],
  assumptions: [{ id: "cheap", statement: "the price is low", estimate: { low: 0.5, high: 5000, unit: "USD" } }],
};

const tools = () => [scriptedTool("quote", [{ price: 12 }]), scriptedTool("order", [{ ok: true, orderId: "o-1" }])];

const findingsOf = (list: Loose[]) => list.map((f) => `${f.rule} ${f.severity} ${f.assumptionId ?? f.stepId ?? "-"}`);

describe("the plan quality gate", () => {
  it("holds a first plan whose estimate is too wide at plan_review, through a SqliteSaver round trip; approve runs it", async () => {
    const dir = mkdtempSync(join(tmpdir(), "quality-"));
    const file = join(dir, "run.db");
    const build = () => {
      const [quote, order] = tools();
      const h = harness(wide, [quote!, order!], { checkpointer: SqliteSaver.fromConnString(file), threadId: "q-1" });
      return { h, quote: quote!, order: order! };
    };
    const first = build();
    const held = await first.h.run();
    expect(held.status).toBe("awaiting_review");
    expect(first.quote.calls).toHaveLength(0);
    const payload = held.__interrupt__[0].value;
    expect([payload.kind, payload.planVersion, payload.options]).toEqual(["plan_review", 1, ["approve", "abort"]]);
    expect(payload.reason).toBe(
      "the plan quality gate holds the plan: 1 finding at or above high (quality.estimate-bounds); " +
        "approve the plan before any step runs",
    );
    expect(payload.context.findings).toEqual([
      {
        rule: "quality.estimate-bounds",
        severity: "high",
        assumptionId: "cheap",
        message:
          'the estimate of assumption "cheap" (USD) is 10000× wide (0.5 to 5000), over policy.quality.maxSpan 100',
        planVersion: 1,
      },
    ]);
    expect(brief(held.decisions)).toEqual(["-: none → escalate [quality.hold]"]);
    expect(findingsOf(held.quality.findings)).toEqual(["quality.estimate-bounds high cheap"]);

    // Another process picks the thread up from the file and approves.
    const second = build();
    const out = await second.h.run(new Command({ resume: { action: "approve" } }));
    expect(out.status).toBe("completed");
    expect([second.quote.calls.length, second.order.calls.length]).toEqual([1, 1]);
    expect(brief(out.decisions)).toEqual([
      "-: none → escalate [quality.hold]",
      "-: person → approve [human.approve-plan]",
    ]);
    expect(out.outcome.quality).toEqual({
      degraded: false,
      fallbacksUsed: 0,
      optionalSkipped: 0,
      suspectFactsUsed: 0,
      findings: 1,
      staleRefreshes: 0,
    });
    rmSync(dir, { recursive: true, force: true });
  });

  it("records medium findings without holding; policy.quality false checks nothing", async () => {
    const loose: PlanDraft = {
      steps: [
        { id: "ping", goal: "Ping the service", tool: "quote" },
        { id: "send", goal: "Send it", tool: "order", dependsOn: ["ping"], sideEffects: ["email"] },
      ],
      assumptions: [{ id: "up", statement: "the service is up", estimate: { low: 1, high: 2, confidence: "low" } }],
    };
    const on = await harness(loose, tools()).run();
    expect(on.status).toBe("completed");
    expect(findingsOf(on.quality.findings)).toEqual([
      "quality.estimate-evidence medium up",
      "quality.structure medium ping",
      "quality.structure medium send",
    ]);
    expect(on.outcome.quality.findings).toBe(3);
    const off = await harness(loose, tools(), { policy: { quality: false } }).run();
    expect([off.status, off.quality, off.outcome.quality.findings]).toEqual(["completed", undefined, 0]);
  });

  it("a reviewer that throws is a high finding of its own: the plan is held, never a crash", async () => {
    const reviewer = new ScriptedChatModel([new Error("reviewer exploded")]);
    const ok: PlanDraft = { steps: [{ id: "quote", goal: "Get a quote", tool: "quote", produces: ["price"] }] };
    const out = await harness(ok, tools(), { reviewer }).run();
    expect(out.status).toBe("awaiting_review");
    const [finding] = out.__interrupt__[0].value.context.findings;
    expect([finding.rule, finding.severity, finding.planVersion]).toEqual(["quality.reviewer-failed", "high", 1]);
    expect(finding.message).toMatch(
      /^the reviewer did not review plan version 1: model call failed: reviewer exploded \[err_[0-9a-f]{8}\]$/,
    );
  });

  it("a reviewer answering garbage is a finding; its well-formed findings are recorded with the step they name", async () => {
    const ok: PlanDraft = { steps: [{ id: "quote", goal: "Get a quote", tool: "quote", produces: ["price"] }] };
    const garbage = await harness(ok, tools(), { reviewer: new ScriptedChatModel([{ verdict: "fine" }]) }).run();
    expect(garbage.__interrupt__[0].value.context.findings.map((f: Loose) => [f.rule, f.message])).toEqual([
      [
        "quality.reviewer-failed",
        "the reviewer did not review plan version 1: its answer is not findings (Invalid input: expected array, received undefined at findings)",
      ],
    ]);
    const answer = {
      findings: [
        { severity: "medium", stepId: "quote", message: "one source only" },
        { severity: "low", stepId: "nope", message: "style" },
      ],
    };
    const reviewer = new ScriptedChatModel([answer]);
    const reviewed = await harness(ok, tools(), { reviewer }).run();
    expect(reviewed.status).toBe("completed");
    expect(reviewed.quality.findings).toEqual([
      { rule: "quality.reviewer", severity: "medium", stepId: "quote", message: "one source only", planVersion: 1 },
      { rule: "quality.reviewer", severity: "low", message: "style", planVersion: 1 },
    ]);
    expect(reviewer.received).toHaveLength(1);
  });

  it("a replan draft the gate would hold goes back with its findings as issues, then its version is held at plan_review", async () => {
    const v1: PlanDraft = {
      steps: [
        { id: "quote", goal: "Get a quote", tool: "quote", produces: ["price"], assumptions: ["stock"] },
        { id: "order", goal: "Order", tool: "order", inputs: ["price"], dependsOn: ["quote"], produces: ["orderId"] },
      ],
      assumptions: [{ id: "stock", statement: "the item is in stock" }],
    };
    const asked: Loose[] = [];
    const replan = (r: Loose): PlanDraft => {
      asked.push(r.issues ?? []);
      return {
        steps: [
          { id: "quote2", goal: "Quote elsewhere", tool: "quote_b", produces: ["price"], assumptions: ["supplier"] },
        ],
        // Low above high: out of order.
        assumptions: [{ id: "supplier", statement: "the supplier is cheap", estimate: { low: 9, high: 3 } }],
      };
    };
    const quote = scriptedTool("quote", [new AssumptionBrokenError("stock", "sold out"), { price: 12 }]);
    const order = scriptedTool("order", [{ ok: true, orderId: "o-1" }]);
    const quoteB = scriptedTool("quote_b", [{ price: 14 }]);
    const h = harness(staticPlanner({ plan: v1, replan: replan as never }), [quote, order, quoteB]);
    const held = await h.run();
    expect(asked.map((issues) => issues.map((i: Loose) => `${i.code} ${i.path.join(".")}: ${i.message}`))).toEqual([
      [],
      [
        'quality assumptions.supplier.estimate: quality.estimate-bounds (high): the estimate of assumption "supplier" ' +
          "has its bounds out of order (low 9 > high 3)",
      ],
    ]);
    expect(held.status).toBe("awaiting_review");
    expect(held.plan.version).toBe(2);
    expect([quote.calls.length, quoteB.calls.length]).toEqual([1, 0]);
    const payload = held.__interrupt__[0].value;
    expect([payload.kind, payload.planVersion]).toEqual(["plan_review", 2]);
    expect(payload.reason).toBe(
      "the plan quality gate holds the plan: 1 finding at or above high (quality.estimate-bounds); " +
        'approve plan version 2 (local replan: assumption.replan-local: assumption "stock" is false: quote: ' +
        "AssumptionBrokenError: sold out)",
    );
    expect(findingsOf(payload.context.findings)).toEqual(["quality.estimate-bounds high supplier"]);
    expect(brief(held.decisions).slice(-2)).toEqual([
      "quote: assumption_broken → replan_local [assumption.replan-local]",
      "-: none → escalate [quality.hold]",
    ]);
    const out = await h.run(new Command({ resume: { action: "approve" } }));
    expect([out.status, quote.calls.length, quoteB.calls.length, order.calls.length]).toEqual(["completed", 1, 1, 1]);
    expect(out.quality.findings.map((f: Loose) => f.planVersion)).toEqual([2]);
  });

  it("an extension with a held finding waits at plan_review before its first step", async () => {
    const first: PlanDraft = {
      steps: [{ id: "quote", goal: "Get a quote", tool: "quote", produces: ["price"] }],
      complete: false,
    };
    const extend = (): PlanDraft => ({
      steps: [
        { id: "order", goal: "Order", tool: "order", inputs: ["price"], produces: ["orderId"], assumptions: ["qty"] },
      ],
      assumptions: [{ id: "qty", statement: "we need a few", estimate: { low: 0, high: 10 } }],
    });
    const [quote, order] = tools();
    const h = harness(staticPlanner({ plan: first, extend }), [quote!, order!]);
    const held = await h.run();
    expect([held.status, held.plan.version, order!.calls.length]).toEqual(["awaiting_review", 2, 0]);
    expect(held.__interrupt__[0].value.context.findings.map((f: Loose) => f.message)).toEqual([
      'the estimate of assumption "qty" spans zero (0 to 10): its ratio is unbounded; give a range on one side of zero',
    ]);
    const out = await h.run(new Command({ resume: { action: "approve" } }));
    expect([out.status, order!.calls.length]).toEqual(["completed", 1]);
  });

  it("a completed run that used a fallback says completed (degraded: …) in the summary, the views, the report, the CLI and plan_status", async () => {
    const plan: PlanDraft = {
      steps: [
        {
          id: "fetch",
          goal: "Fetch the rates",
          tool: "primary",
          produces: ["rates"],
          fallback: { tool: "backup" },
          retry: { maxAttempts: 1 },
        },
      ],
    };
    const primary = scriptedTool("primary", [new PermanentError("primary is gone")]);
    const backup = scriptedTool("backup", [{ rates: [1, 2] }]);
    const h = harness(plan, [primary, backup]);
    const out = await h.run({ goal: "get the rates" });
    expect(out.status).toBe("completed");
    expect(out.outcome.summary).toBe(
      'Completed (degraded: 1 fallback used) "get the rates": 1 of 1 steps succeeded (plan v1).',
    );
    expect(out.outcome.quality).toMatchObject({ degraded: true, fallbacksUsed: 1, optionalSkipped: 0 });
    expect(userView(out as never).at(-1)).toBe("Completed (degraded: 1 fallback used).");
    expect(operatorView(out as never, { now: Date.parse("2026-01-01T00:00:00Z") })[1]).toBe(
      "status: completed (degraded: 1 fallback used)",
    );
    expect(htmlReport(out as never)).toContain("<strong>Status:</strong> completed (degraded: 1 fallback used) — ");
    expect(threadLine("t1", out as never, Date.parse("2026-01-01T00:00:00Z")).split("  ")[1]).toBe(
      "completed (degraded: 1 fallback used)",
    );
    const status = planStatus("p1", "g", (await h.graph.getState(h.config)) as never, { running: false });
    expect(status.quality).toEqual(out.outcome.quality);
    // A clean run: the same lines as before.
    const clean = await harness(plan, [scriptedTool("primary", [{ rates: [1] }]), backup]).run({
      goal: "get the rates",
    });
    expect([clean.outcome.summary, userView(clean as never).at(-1)]).toEqual([
      'Completed "get the rates": 1 of 1 steps succeeded (plan v1).',
      "Done.",
    ]);
  });

  it("llmPlanner asks for an estimate on numeric assumptions and carries it into the plan, where the gate checks it", async () => {
    const answer = llmAnswer(
      [llmStep("quote", { tool: "quote", produces: ["price"], assumptions: ["price_range"] })],
      [
        {
          id: "price_range",
          statement: "the price is between 10 and 20 USD",
          check: null,
          // Natural shape: unit and evidence left out.
          estimate: { low: 10, high: 20000, confidence: "low" },
        },
      ],
    );
    const model = new ScriptedChatModel([answer]);
    const out = await harness(llmPlanner({ model }), tools()).run();
    expect(out.plan.assumptions).toEqual([
      {
        id: "price_range",
        statement: "the price is between 10 and 20 USD",
        estimate: { low: 10, high: 20000, confidence: "low" },
      },
    ]);
    expect(findingsOf(out.__interrupt__[0].value.context.findings)).toEqual([
      "quality.estimate-bounds high price_range",
      "quality.estimate-evidence medium price_range",
    ]);
    const system = String(model.received[0]![0]!.content);
    expect(system).toContain("A numeric assumption (a price, a count, a duration, a rate) gets an estimate");
  });
});

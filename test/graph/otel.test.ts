/**
 * OpenTelemetry, the graph's face: a run with a retry, a fallback, a local replan and a wait for a
 * person gives a run span, a span per plan version, a span per step attempt below its version, every
 * decision an event on the attempt it judges, and the counters (docs/decisions/0052-opentelemetry.md).
 */
import { Command } from "@langchain/langgraph";
import { afterAll, beforeEach, describe, expect, it, vi } from "vitest";
import {
  AssumptionBrokenError,
  PermanentError,
  TransientError,
  llmPlanner,
  staticPlanner,
  type PlanDraft,
} from "../../src/index.js";
import { harness, scriptedTool } from "../helpers/graph.js";
import { ScriptedChatModel } from "../helpers/fake-model.js";
import { llmAnswer, llmStep } from "../helpers/llm-answers.js";
import { registerTelemetry, spanTree } from "../helpers/otel.js";

const telemetry = registerTelemetry();
afterAll(() => telemetry.shutdown());
beforeEach(() => telemetry.reset());

const SHOWN = [
  "gen_ai.operation.name",
  "gen_ai.conversation.id",
  "langgraph_replan.goal",
  "langgraph_replan.run.status",
  "langgraph_replan.plan.kind",
  "langgraph_replan.replan.broken_assumption",
  "langgraph_replan.step.id",
  "langgraph_replan.attempt",
  "langgraph_replan.plan.version",
  "langgraph_replan.attempt.outcome",
  "error.type",
  "langgraph_replan.rule",
  "langgraph_replan.action",
];

const first: PlanDraft = {
  assumptions: [{ id: "rates_ok", statement: "the rate table is current" }],
  steps: [
    { id: "fetch", goal: "Fetch the order", tool: "flaky", retry: { maxAttempts: 2, backoff: "none" } },
    { id: "lookup", goal: "Look the customer up", tool: "primary", fallback: { tool: "backup" }, dependsOn: ["fetch"] },
    { id: "price", goal: "Price the order", tool: "quote", assumptions: ["rates_ok"], dependsOn: ["lookup"] },
  ],
};
/** The local replan's branch, in place of `price`. */
const second: PlanDraft = { steps: [{ id: "price_by_hand", goal: "Price the order by hand", tool: "manual" }] };

function tools() {
  return [
    scriptedTool("flaky", [new TransientError("busy"), { order: 1 }]),
    scriptedTool("primary", [new PermanentError("no such customer")]),
    scriptedTool("backup", [{ customer: "c" }]),
    scriptedTool("quote", [new AssumptionBrokenError("rates_ok", "the rate table is stale")]),
    scriptedTool("manual", [new PermanentError("needs a person")]),
  ];
}

const TREE = [
  "invoke_workflow LangGraph [gen_ai.operation.name=invoke_workflow gen_ai.conversation.id=order-7 goal=Price order 7 run.status=waiting]",
  "  · langgraph_replan.human.wait",
  "  plan_version 1 [plan.kind=initial plan.version=1]",
  "    execute_tool flaky [gen_ai.operation.name=execute_tool step.id=fetch attempt=1 plan.version=1 attempt.outcome=failed error.type=transient] ERROR",
  "      · langgraph_replan.decision [step.id=fetch attempt=1 plan.version=1 rule=transient.retry action=retry]",
  "    execute_tool flaky [gen_ai.operation.name=execute_tool step.id=fetch attempt=2 plan.version=1 attempt.outcome=succeeded]",
  "    execute_tool primary [gen_ai.operation.name=execute_tool step.id=lookup attempt=1 plan.version=1 attempt.outcome=failed error.type=deterministic] ERROR",
  "      · langgraph_replan.decision [step.id=lookup attempt=1 plan.version=1 rule=deterministic.fallback action=fallback]",
  "    execute_tool backup [gen_ai.operation.name=execute_tool step.id=lookup attempt=2 plan.version=1 attempt.outcome=succeeded]",
  "    execute_tool quote [gen_ai.operation.name=execute_tool step.id=price attempt=1 plan.version=1 attempt.outcome=failed error.type=assumption_broken] ERROR",
  "      · langgraph_replan.decision [replan.broken_assumption=rates_ok step.id=price attempt=1 plan.version=1 rule=assumption.replan-local action=replan_local]",
  "  plan_version 2 [plan.kind=replan_local replan.broken_assumption=rates_ok plan.version=2]",
  "    execute_tool manual [gen_ai.operation.name=execute_tool step.id=price_by_hand attempt=1 plan.version=2 attempt.outcome=failed error.type=deterministic] ERROR",
  "      · langgraph_replan.human.wait [step.id=price_by_hand attempt=1 plan.version=2 rule=deterministic.escalate action=escalate]",
];

const COUNTS = [
  "langgraph_replan.attempts{gen_ai.tool.name=backup,langgraph_replan.attempt.outcome=succeeded} = 1",
  "langgraph_replan.attempts{gen_ai.tool.name=flaky,langgraph_replan.attempt.outcome=failed} = 1",
  "langgraph_replan.attempts{gen_ai.tool.name=flaky,langgraph_replan.attempt.outcome=succeeded} = 1",
  "langgraph_replan.attempts{gen_ai.tool.name=manual,langgraph_replan.attempt.outcome=failed} = 1",
  "langgraph_replan.attempts{gen_ai.tool.name=primary,langgraph_replan.attempt.outcome=failed} = 1",
  "langgraph_replan.attempts{gen_ai.tool.name=quote,langgraph_replan.attempt.outcome=failed} = 1",
  "langgraph_replan.decisions{langgraph_replan.action=escalate,langgraph_replan.failure_class=deterministic,langgraph_replan.rule=deterministic.escalate} = 1",
  "langgraph_replan.decisions{langgraph_replan.action=fallback,langgraph_replan.failure_class=deterministic,langgraph_replan.rule=deterministic.fallback} = 1",
  "langgraph_replan.decisions{langgraph_replan.action=replan_local,langgraph_replan.failure_class=assumption_broken,langgraph_replan.rule=assumption.replan-local} = 1",
  "langgraph_replan.decisions{langgraph_replan.action=retry,langgraph_replan.failure_class=transient,langgraph_replan.rule=transient.retry} = 1",
  "langgraph_replan.plan_versions{langgraph_replan.plan.kind=initial} = 1",
  "langgraph_replan.plan_versions{langgraph_replan.plan.kind=replan_local} = 1",
];

describe("OpenTelemetry: the graph", () => {
  it("a retry, a fallback, a local replan and a wait for a person: the span tree, its events and the counters", async () => {
    const planner = staticPlanner({ plan: first, replan: () => second });
    const h = harness(planner, tools(), { threadId: "order-7" });
    const out = await h.run({ goal: "Price order 7" });
    expect(out.status).toBe("awaiting_human");
    expect(spanTree(telemetry.spans(), SHOWN)).toEqual(TREE);
    expect(await telemetry.counts()).toEqual(COUNTS);
    telemetry.reset();
    // The answer is a run of its own, on the same conversation.
    const resumed = await h.run(new Command({ resume: { action: "skip" } }));
    expect(resumed.status).toBe("partial");
    expect(spanTree(telemetry.spans(), SHOWN)).toEqual([
      "invoke_workflow LangGraph [gen_ai.operation.name=invoke_workflow gen_ai.conversation.id=order-7 run.status=partial]",
      "  · langgraph_replan.human.answer [step.id=price_by_hand attempt=1 plan.version=2 rule=human.skip action=skip]",
    ]);
  });

  it("a planner's model call is a chat span below the run, with its model, purpose and tokens", async () => {
    const model = new ScriptedChatModel([llmAnswer([llmStep("lookup", { tool: "lookup", argsJson: "{}" })])]);
    const planner = llmPlanner({ model });
    const h = harness(planner, [scriptedTool("lookup", [{ ok: 1 }])], { threadId: "planned" });
    expect((await h.run({ goal: "Look it up" })).status).toBe("completed");
    const shown = [...SHOWN, "gen_ai.request.model", "langgraph_replan.purpose", "gen_ai.usage.input_tokens"];
    expect(spanTree(telemetry.spans(), shown)).toEqual([
      "invoke_workflow LangGraph [gen_ai.operation.name=invoke_workflow gen_ai.conversation.id=planned goal=Look it up run.status=completed]",
      "  chat fake-planner-1 [gen_ai.operation.name=chat gen_ai.request.model=fake-planner-1 purpose=plan gen_ai.usage.input_tokens=1000]",
      "  plan_version 1 [plan.kind=initial plan.version=1]",
      "    execute_tool lookup [gen_ai.operation.name=execute_tool step.id=lookup attempt=1 plan.version=1 attempt.outcome=succeeded]",
    ]);
  });

  it("a side-effecting step's attempt span carries its idempotency key, and the committed effect is counted", async () => {
    const keys: (string | undefined)[] = [];
    const pay = scriptedTool("pay", [
      (_args: unknown, config?: { configurable?: { idempotencyKey?: string } }) => {
        keys.push(config?.configurable?.idempotencyKey);
        return { receipt: "R-1" };
      },
    ]);
    const plan: PlanDraft = {
      steps: [{ id: "pay", goal: "Pay the invoice", tool: "pay", sideEffects: ["payment"], idempotent: false }],
    };
    const h = harness(plan, [pay], { threadId: "paid" });
    expect((await h.run({ goal: "Pay it" })).status).toBe("completed");
    expect(keys).toHaveLength(1);
    const attempt = telemetry.spans().find((s) => s.name === "execute_tool pay");
    expect(attempt?.attributes["langgraph_replan.idempotency_key"]).toBe(keys[0]);
    expect(await telemetry.counts()).toContain(
      "langgraph_replan.effects{langgraph_replan.effect.outcome=committed} = 1",
    );
  });

  it("a run stopped by its caller ends its span as stopped, with the attempt in flight ended", async () => {
    const stop = new AbortController();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const slow = scriptedTool("slow", [
      async () => {
        stop.abort();
        await gate;
        return { ok: 1 };
      },
    ]);
    const plan: PlanDraft = {
      steps: [
        { id: "one", goal: "One", tool: "slow" },
        { id: "two", goal: "Two", tool: "slow", dependsOn: ["one"] },
      ],
    };
    const h = harness(plan, [slow], { threadId: "stopped" });
    const run = h.graph
      .invoke({ goal: "Stop me" } as never, { ...h.config, signal: stop.signal })
      .catch((e: unknown) => e);
    // The caller's promise rejects at once; the run ends at the next step boundary, in the background.
    expect(await run).toMatchObject({ name: "AbortError" });
    release();
    await vi.waitFor(() => expect(telemetry.spans().map((s) => s.name)).toContain("invoke_workflow LangGraph"));
    expect(spanTree(telemetry.spans(), SHOWN)).toEqual([
      "invoke_workflow LangGraph [gen_ai.operation.name=invoke_workflow gen_ai.conversation.id=stopped goal=Stop me run.status=stopped]",
      "  plan_version 1 [plan.kind=initial plan.version=1]",
      "    execute_tool slow [gen_ai.operation.name=execute_tool step.id=one attempt=1 plan.version=1 attempt.outcome=unfinished]",
    ]);
    // Every span the run opened has ended: none is left recording.
    expect(telemetry.spans().every((s) => s.ended)).toBe(true);
  });
});

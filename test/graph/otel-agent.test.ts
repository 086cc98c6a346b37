/**
 * OpenTelemetry, the agent's face: the same run as test/graph/otel.test.ts — a retry, a fallback, a
 * local replan (the model writes the new plan version) and a wait for a person — inside createAgent
 * with planMiddleware gives the same tree of run, plan versions and attempts, the agent's model calls
 * as `chat` spans, and the counters (docs/decisions/0052-opentelemetry.md).
 */
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { AssumptionBrokenError, PermanentError, TransientError } from "../../src/index.js";
import { planMiddleware } from "../../src/middleware/index.js";
import { scriptedAgentModel, type Turn } from "../helpers/agent-model.js";
import { countedTool, ledger } from "../helpers/agent-tools.js";
import { registerTelemetry, spanTree } from "../helpers/otel.js";

const telemetry = registerTelemetry();
afterAll(() => telemetry.shutdown());
beforeEach(() => telemetry.reset());

const SHOWN = [
  "gen_ai.operation.name",
  "gen_ai.conversation.id",
  "gen_ai.agent.name",
  "langgraph_replan.run.status",
  "langgraph_replan.plan.kind",
  "langgraph_replan.replan.broken_assumption",
  "langgraph_replan.step.id",
  "langgraph_replan.attempt",
  "langgraph_replan.plan.version",
  "langgraph_replan.attempt.outcome",
  "langgraph_replan.idempotency_key",
  "error.type",
  "langgraph_replan.rule",
  "langgraph_replan.action",
];

const steps = [
  { id: "fetch", goal: "Fetch the order", tool: "flaky", retry: { maxAttempts: 2, backoff: "none" } },
  { id: "lookup", goal: "Look the customer up", tool: "primary", fallback: { tool: "backup" }, dependsOn: ["fetch"] },
  { id: "price", goal: "Price the order", tool: "quote", assumptions: ["rates_ok"], dependsOn: ["lookup"] },
];
const first = { assumptions: [{ id: "rates_ok", statement: "the rate table is current" }], steps };
const byHand = { id: "price_by_hand", goal: "Price the order by hand", tool: "manual", dependsOn: ["lookup"] };
const second = { steps: [steps[0], steps[1], byHand] };

function tools() {
  const l = ledger();
  return [
    countedTool(l, "flaky", (n) => {
      if (n === 1) throw new TransientError("busy");
      return { order: 1 };
    }),
    countedTool(l, "primary", () => {
      throw new PermanentError("no such customer");
    }),
    countedTool(l, "backup", () => ({ customer: "c" })),
    countedTool(l, "quote", () => {
      throw new AssumptionBrokenError("rates_ok", "the rate table is stale");
    }),
    countedTool(l, "manual", () => {
      throw new PermanentError("needs a person");
    }),
  ];
}

const TREE = [
  "invoke_agent orders [gen_ai.operation.name=invoke_agent gen_ai.conversation.id=order-7 gen_ai.agent.name=orders run.status=waiting]",
  "  · langgraph_replan.human.wait",
  "  chat fake-planner-1 [gen_ai.operation.name=chat]",
  "  plan_version 1 [plan.kind=initial plan.version=1]",
  "    chat fake-planner-1 [gen_ai.operation.name=chat]",
  "    execute_tool flaky [gen_ai.operation.name=execute_tool step.id=fetch attempt=1 plan.version=1 attempt.outcome=failed error.type=transient] ERROR",
  "      · langgraph_replan.decision [step.id=fetch attempt=1 plan.version=1 rule=transient.retry action=retry]",
  "    execute_tool flaky [gen_ai.operation.name=execute_tool step.id=fetch attempt=2 plan.version=1 attempt.outcome=succeeded idempotency_key=order-7:ed00aa50e0d12132]",
  "    chat fake-planner-1 [gen_ai.operation.name=chat]",
  "    execute_tool primary [gen_ai.operation.name=execute_tool step.id=lookup attempt=1 plan.version=1 attempt.outcome=failed error.type=deterministic] ERROR",
  "      · langgraph_replan.decision [step.id=lookup attempt=1 plan.version=1 rule=deterministic.fallback action=fallback]",
  "    execute_tool backup [gen_ai.operation.name=execute_tool step.id=lookup attempt=2 plan.version=1 attempt.outcome=succeeded]",
  "    chat fake-planner-1 [gen_ai.operation.name=chat]",
  "    execute_tool quote [gen_ai.operation.name=execute_tool step.id=price attempt=1 plan.version=1 attempt.outcome=failed error.type=assumption_broken] ERROR",
  "      · langgraph_replan.decision [replan.broken_assumption=rates_ok step.id=price attempt=1 plan.version=1 rule=assumption.replan-local action=replan_local]",
  "    chat fake-planner-1 [gen_ai.operation.name=chat]",
  "  plan_version 2 [plan.kind=replan_local replan.broken_assumption=rates_ok plan.version=2]",
  "    chat fake-planner-1 [gen_ai.operation.name=chat]",
  "    execute_tool manual [gen_ai.operation.name=execute_tool step.id=price_by_hand attempt=1 plan.version=2 attempt.outcome=failed error.type=deterministic] ERROR",
  "      · langgraph_replan.human.wait [step.id=price_by_hand attempt=1 plan.version=2 rule=deterministic.escalate action=escalate]",
];

describe("OpenTelemetry: createAgent + planMiddleware", () => {
  it("a retry, a fallback, a local replan and a wait for a person: the span tree, its events and the counters", async () => {
    const manual = { name: "manual", args: {} };
    const turns: Turn[] = [
      [{ name: "write_plan", args: first }],
      [{ name: "flaky", args: {} }],
      [{ name: "primary", args: {} }],
      [{ name: "quote", args: {} }],
      [{ name: "write_plan", args: second }],
      [manual],
      [manual],
      "done",
    ];
    const agent = createAgent({
      model: scriptedAgentModel(turns),
      tools: tools(),
      middleware: [planMiddleware({ sleep: async () => {}, now: () => 0, sideEffectTools: ["flaky"] })],
      checkpointer: new MemorySaver(),
      name: "orders",
    });
    const out = await agent.invoke(
      { messages: [{ role: "user", content: "Price order 7" }] },
      { configurable: { thread_id: "order-7" } },
    );
    expect(out.__interrupt__).toHaveLength(1);
    expect(spanTree(telemetry.spans(), SHOWN)).toEqual(TREE);
    // The graph's counts (test/graph/otel.test.ts), and the effect `flaky` committed under its key.
    expect(await telemetry.counts()).toEqual([
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
      "langgraph_replan.effects{langgraph_replan.effect.outcome=committed} = 1",
      "langgraph_replan.plan_versions{langgraph_replan.plan.kind=initial} = 1",
      "langgraph_replan.plan_versions{langgraph_replan.plan.kind=replan_local} = 1",
    ]);
  });
});

/**
 * Callbacks given to `invoke` (LangSmith's tracer, any BaseCallbackHandler) see every model call
 * the run makes — the planner's, the classifier's, agent steps' — and every tool run, each with the
 * step, attempt and plan version it belongs to.
 */
import { BaseCallbackHandler } from "@langchain/core/callbacks/base";
import type { Serialized } from "@langchain/core/load/serializable";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { z } from "zod";
import { describe, expect, it } from "vitest";
import { createPlanManager, llmClassifier, llmPlanner, PermanentError, staticPlanner } from "../../src/index.js";
import { scriptedAgentModel } from "../helpers/agent-model.js";
import { fakeClock } from "../helpers/clock.js";
import { ScriptedChatModel } from "../helpers/fake-model.js";
import { scriptedTool } from "../helpers/graph.js";
import { llmAnswer, llmStep } from "../helpers/llm-answers.js";

/** One line per run start: what started, the run's step metadata, and the tags this library adds. */
class Recorder extends BaseCallbackHandler {
  name = "recorder";
  readonly seen: string[] = [];

  constructor() {
    super({ _awaitHandler: true });
  }

  private record(kind: string, name: string | undefined, tags?: string[], metadata?: Record<string, unknown>) {
    const m = metadata ?? {};
    const ours = ["purpose", "stepId", "attempt", "planVersion"]
      .filter((k) => k in m)
      .map((k) => `${k}=${String(m[k])}`);
    const tagged = (tags ?? []).filter((t) => t.startsWith("langgraph-replan"));
    this.seen.push(`${kind} ${name}: ${ours.join(" ")} [${tagged.join(" ")}]`);
  }

  override handleChatModelStart(
    llm: Serialized,
    _messages: unknown,
    _runId: string,
    _parent?: string,
    _extra?: Record<string, unknown>,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ) {
    this.record("chat", runName ?? llm.id.at(-1), tags, metadata);
  }

  override handleLLMStart(
    _llm: Serialized,
    _prompts: string[],
    _runId: string,
    _parent?: string,
    _extra?: Record<string, unknown>,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ) {
    this.record("llm", runName, tags, metadata);
  }

  override handleToolStart(
    _tool: Serialized,
    _input: string,
    _runId: string,
    _parent?: string,
    tags?: string[],
    metadata?: Record<string, unknown>,
    runName?: string,
  ) {
    this.record("tool", runName, tags, metadata);
  }
}

function runTests() {
  return scriptedTool("run_tests", [
    (args: Record<string, unknown>) => {
      if (args.patch !== "good") throw new PermanentError("1 of 12 tests failed");
      return { passed: 12 };
    },
  ]);
}

describe("tracing through the run's callbacks", () => {
  it("sees the planner's and an agent step's model calls and the tool runs, each with its step, attempt and plan version", async () => {
    const plannerModel = new ScriptedChatModel(
      [
        llmAnswer([
          llmStep("fix", {
            agent: "coder",
            produces: ["patch"],
            validate: { tool: "run_tests", argsJson: null, successSignal: null },
          }),
          llmStep("ship", { tool: "noop", dependsOn: ["fix"] }),
        ]),
      ],
      { model: "fake-planner" },
    );
    const coder = new ScriptedChatModel([{ patch: "wrong" }, { patch: "good" }], { model: "fake-coder" });
    const graph = createPlanManager({
      tools: [runTests(), scriptedTool("noop", [{}])],
      agents: { coder },
      planner: llmPlanner({ model: plannerModel }),
      clock: fakeClock(),
    }).compile({ checkpointer: new MemorySaver() });
    const recorder = new Recorder();
    const out = await graph.invoke(
      { goal: "fix the parser" },
      { configurable: { thread_id: "traced" }, callbacks: [recorder] },
    );
    expect(out.status).toBe("completed");
    expect(recorder.seen).toEqual([
      "chat ScriptedChatModel: purpose=plan [langgraph-replan:planner]",
      "chat ScriptedChatModel: stepId=fix attempt=1 planVersion=1 [langgraph-replan:step]",
      "tool run_tests: stepId=fix attempt=1 planVersion=1 [langgraph-replan:step]",
      "chat ScriptedChatModel: stepId=fix attempt=2 planVersion=1 [langgraph-replan:step]",
      "tool run_tests: stepId=fix attempt=2 planVersion=1 [langgraph-replan:step]",
      "tool noop: stepId=ship attempt=1 planVersion=1 [langgraph-replan:step]",
    ]);
  });

  it("sees an agent graph's own model and tool calls under the step that runs it", async () => {
    const model = scriptedAgentModel([[{ name: "lookup", args: { q: "rate" } }], '{"rate": 3}']);
    const lookup = tool(async () => "3", {
      name: "lookup",
      description: "Look up a value",
      schema: z.object({ q: z.string() }),
    });
    const analyst = createAgent({ model, tools: [lookup] });
    const graph = createPlanManager({
      tools: [],
      agents: { analyst },
      planner: staticPlanner({
        plan: { steps: [{ id: "rate", goal: "Find the rate", agent: "analyst", produces: ["rate"] }] },
      }),
      clock: fakeClock(),
    }).compile({ checkpointer: new MemorySaver() });
    const recorder = new Recorder();
    const out = await graph.invoke({ goal: "rate" }, { configurable: { thread_id: "agent" }, callbacks: [recorder] });
    expect(out.status).toBe("completed");
    expect(recorder.seen).toEqual([
      "chat ScriptedChatModel: stepId=rate attempt=1 planVersion=1 [langgraph-replan:step]",
      "tool lookup: stepId=rate attempt=1 planVersion=1 [langgraph-replan:step]",
      "chat ScriptedChatModel: stepId=rate attempt=1 planVersion=1 [langgraph-replan:step]",
    ]);
  });

  it("sees a replan's model call with the plan version it revises", async () => {
    const first = llmAnswer(
      [llmStep("portal", { tool: "portal", produces: ["report"], assumptions: ["portal_up"] })],
      [{ id: "portal_up", statement: "the portal serves reports", check: null }],
    );
    const replacement = llmAnswer([llmStep("mirror", { tool: "mirror", produces: ["report"] })]);
    const graph = createPlanManager({
      tools: [scriptedTool("portal", [new PermanentError("gone")]), scriptedTool("mirror", [{ report: "r" }])],
      planner: llmPlanner({ model: new ScriptedChatModel([first, replacement]) }),
      clock: fakeClock(),
    }).compile({ checkpointer: new MemorySaver() });
    const recorder = new Recorder();
    const out = await graph.invoke(
      { goal: "report" },
      { configurable: { thread_id: "replanned" }, callbacks: [recorder] },
    );
    expect(out.status).toBe("completed");
    expect(recorder.seen).toEqual([
      "chat ScriptedChatModel: purpose=plan [langgraph-replan:planner]",
      "tool portal: stepId=portal attempt=1 planVersion=1 [langgraph-replan:step]",
      "chat ScriptedChatModel: purpose=replan planVersion=1 [langgraph-replan:planner]",
      "tool mirror: stepId=mirror attempt=1 planVersion=2 [langgraph-replan:step]",
    ]);
  });

  it("sees an extension's model call with the plan version it extends", async () => {
    const part = (n: number) => llmStep(`s${n}`, { tool: "survey", argsJson: JSON.stringify({ part: n }) });
    const first = { ...llmAnswer([part(1)]), complete: false };
    const rest = { ...llmAnswer([part(2)]), complete: true };
    const graph = createPlanManager({
      tools: [scriptedTool("survey", [{ done: 1 }, { done: 2 }])],
      planner: llmPlanner({ model: new ScriptedChatModel([first, rest]), horizon: 1 }),
      clock: fakeClock(),
    }).compile({ checkpointer: new MemorySaver() });
    const recorder = new Recorder();
    const out = await graph.invoke(
      { goal: "survey" },
      { configurable: { thread_id: "extended" }, callbacks: [recorder] },
    );
    expect(out.status).toBe("completed");
    expect(recorder.seen).toEqual([
      "chat ScriptedChatModel: purpose=plan [langgraph-replan:planner]",
      "tool survey: stepId=s1 attempt=1 planVersion=1 [langgraph-replan:step]",
      "chat ScriptedChatModel: purpose=extend planVersion=1 [langgraph-replan:planner]",
      "tool survey: stepId=s2 attempt=1 planVersion=2 [langgraph-replan:step]",
    ]);
  });

  it("sees the LLM classifier's model call with the step it classifies", async () => {
    const classifierModel = new ScriptedChatModel(
      [{ failureClass: "deterministic", action: "escalate", reason: "a person should look" }],
      { model: "fake-classifier" },
    );
    const graph = createPlanManager({
      tools: [scriptedTool("fetch", [new Error("something odd")])],
      planner: staticPlanner({ plan: { steps: [{ id: "get", goal: "Fetch", tool: "fetch" }] } }),
      classifier: llmClassifier({ model: classifierModel }),
      clock: fakeClock(),
    }).compile({ checkpointer: new MemorySaver() });
    const recorder = new Recorder();
    await graph.invoke({ goal: "fetch" }, { configurable: { thread_id: "classified" }, callbacks: [recorder] });
    expect(recorder.seen).toEqual([
      "tool fetch: stepId=get attempt=1 planVersion=1 [langgraph-replan:step]",
      "chat ScriptedChatModel: purpose=classify stepId=get attempt=1 planVersion=1 [langgraph-replan:classifier]",
    ]);
  });
});

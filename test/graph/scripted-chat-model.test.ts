/** `langgraph-replan/testing`'s ScriptedChatModel as a whole chat model: tool calls, bindTools, streaming, errors. */
import { AIMessage, AIMessageChunk, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { describe, expect, it } from "vitest";
import { isPlanManagerError } from "../../src/errors.js";
import { planMiddleware } from "../../src/middleware/index.js";
import { ScriptedChatModel } from "../../src/testing/index.js";
import { countedTool, ledger } from "../helpers/agent-tools.js";

const quoteStep = { id: "quote", goal: "Get the quote", tool: "quote", produces: ["amount"] };
const script = () => [
  new AIMessage({ content: "", tool_calls: [{ name: "write_plan", args: { steps: [quoteStep] } }] }),
  new AIMessage({ content: "", tool_calls: [{ name: "quote", args: { item: "desk" }, id: "q1" }] }),
  "The desk costs 40.",
];
const start = { messages: [{ role: "user", content: "Quote the desk" }] };
const text = (m: BaseMessage) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));

async function planningAgent(model: ScriptedChatModel) {
  const l = ledger();
  const agent = createAgent({
    model,
    tools: [countedTool(l, "quote", (_n, args) => ({ amount: args.item === "desk" ? 40 : 0 }))],
    middleware: [planMiddleware({ sleep: async () => {}, now: () => 0 })],
    checkpointer: new MemorySaver(),
  });
  return { agent, l };
}

describe("ScriptedChatModel drives createAgent", () => {
  it("plans, calls the step's tool and answers, with planMiddleware", async () => {
    const model = new ScriptedChatModel(script(), { model: "m-1", usage: { input: 10, output: 2 } });
    const { agent, l } = await planningAgent(model);
    const out = await agent.invoke(start, { configurable: { thread_id: "t" } });
    expect(l.calls).toEqual({ quote: 1 });
    expect(out.status).toBe("completed");
    expect(out.plan!.steps.map((s) => s.id)).toEqual(["quote"]);
    expect(out.steps.quote).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(out.facts.amount).toMatchObject({ value: 40, label: "trusted", producedBy: "quote" });
    const ai = out.messages.filter((m) => AIMessage.isInstance(m)) as AIMessage[];
    expect(ai.map((m) => m.tool_calls?.map((c) => `${c.name}#${c.id}`))).toEqual([
      ["write_plan#call-1-1"],
      ["quote#q1"],
      [],
    ]);
    expect(text(ai[2]!)).toBe("The desk costs 40.");
    expect(ai.map((m) => m.usage_metadata?.total_tokens)).toEqual([12, 12, 12]);
    expect(ai[0]!.response_metadata.model_name).toBe("m-1");
    // One script position for every call, although createAgent binds its tools before each one.
    expect(model.received).toHaveLength(3);
    expect(model.received[2]!.map((m) => m.getType())).toContain("tool");
  });

  it("does the same when the run is streamed (streamMode messages streams the model)", async () => {
    const model = new ScriptedChatModel(script());
    const { agent, l } = await planningAgent(model);
    const tokens: string[] = [];
    const stream = await agent.stream(start, { configurable: { thread_id: "s" }, streamMode: ["messages", "values"] });
    let last: Record<string, unknown> = {};
    for await (const [mode, chunk] of stream) {
      if (mode === "values") last = chunk as Record<string, unknown>;
      else {
        const [message] = chunk as [BaseMessage, unknown];
        if (AIMessageChunk.isInstance(message) && text(message)) tokens.push(text(message));
      }
    }
    expect(l.calls).toEqual({ quote: 1 });
    expect(last.status).toBe("completed");
    expect(tokens).toEqual(["The ", "desk ", "costs ", "40."]);
  });
});

describe("ScriptedChatModel as a chat model", () => {
  it("bindTools returns a model at the same script position", async () => {
    const model = new ScriptedChatModel(["one", new AIMessage({ content: "", tool_calls: [{ name: "t", args: {} }] })]);
    expect(text(await model.invoke([new HumanMessage("a")]))).toBe("one");
    const bound = model.bindTools([{ name: "t", description: "t", schema: { type: "object", properties: {} } }]);
    const second = await bound.invoke([new HumanMessage("b")]);
    expect(second.tool_calls).toEqual([{ name: "t", args: {}, id: "call-2-1", type: "tool_call" }]);
    // The last entry answers every later call, each with its own ids.
    expect((await model.invoke([new HumanMessage("c")])).tool_calls?.[0]?.id).toBe("call-3-1");
    expect(model.received.map((ms) => ms.map(text))).toEqual([["a"], ["b"], ["c"]]);
  });

  it("streams what it would answer: text word by word, then tool calls and usage", async () => {
    const scripted = new AIMessage({ content: "Calling t now", tool_calls: [{ name: "t", args: { x: 1 }, id: "c" }] });
    const model = new ScriptedChatModel([scripted], { usage: { input: 5, output: 1 } });
    const chunks: AIMessageChunk[] = [];
    for await (const chunk of await model.stream([new HumanMessage("go")])) chunks.push(chunk);
    expect(chunks.map(text)).toEqual(["Calling ", "t ", "now", ""]);
    const whole = chunks.reduce((a, b) => a.concat(b));
    expect(text(whole)).toBe("Calling t now");
    expect(whole.tool_calls).toEqual([{ name: "t", args: { x: 1 }, id: "c", type: "tool_call" }]);
    const { input_tokens, output_tokens, total_tokens } = whole.usage_metadata!;
    expect({ input_tokens, output_tokens, total_tokens }).toEqual({
      input_tokens: 5,
      output_tokens: 1,
      total_tokens: 6,
    });
    expect(whole.response_metadata.model_name).toBe("fake-planner-1");
  });

  it("throws a scripted error whether invoked or streamed; an empty script has no answer", async () => {
    const model = new ScriptedChatModel([new Error("rate limited"), "ok"]);
    await expect(model.invoke("a")).rejects.toThrow("rate limited");
    expect(text(await model.invoke("b"))).toBe("ok");
    const streamed = new ScriptedChatModel([new Error("overloaded")]);
    await expect(async () => {
      for await (const _ of await streamed.stream("a")) void _;
    }).rejects.toThrow("overloaded");
    const refused: unknown = await new ScriptedChatModel([]).invoke("a").catch((error: unknown) => error);
    expect(isPlanManagerError(refused) && [refused.code, refused.path]).toEqual(["invalid_options", "script"]);
  });

  it("answers an object as its JSON, which structured output parses", async () => {
    const model = new ScriptedChatModel([{ amount: 40 }]);
    const structured = model.withStructuredOutput({ type: "object", properties: { amount: { type: "number" } } });
    expect(await structured.invoke("how much?")).toEqual({ amount: 40 });
  });
});

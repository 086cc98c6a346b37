/**
 * Every channel write is validated (runtime/checked-channel.ts), once: a conditional edge makes
 * LangGraph apply a node's writes twice in the same superstep (once to copies of the channels, so
 * that the route reads the state the writes make, then to the channels themselves), and the second
 * application does not validate the same object again (docs/decisions/0024-fixed-cost-per-run.md).
 */
import { Annotation, END, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { isPlanManagerError } from "../../src/errors.js";
import { builtWrite, CheckedChannel } from "../../src/runtime/checked-channel.js";
import { appendBatch, CheckedDeltaChannel } from "../../src/runtime/delta-channel.js";

type Item = { n: number };

/** A schema that counts how many times it validated a value. */
function countingSchema() {
  const counter = { calls: 0 };
  const schema = z.object({ n: z.number() }).refine(() => {
    counter.calls += 1;
    return true;
  });
  return { counter, schema };
}

/** One node writing `{ n }` to a plain and to a delta channel, `times` times, behind a conditional edge. */
function loop(plainSchema: z.ZodType, deltaSchema: z.ZodType, write: (n: number) => Item, branch = true) {
  const State = Annotation.Root({
    last: new CheckedChannel<Item | undefined, Item>("last", plainSchema, (_, b) => b),
    log: new CheckedDeltaChannel<Item[], Item>("log", deltaSchema, appendBatch<Item>, () => []),
  });
  const step = (s: typeof State.State) => {
    const item = write(s.log.length);
    return { last: item, log: item };
  };
  const graph = new StateGraph(State).addNode("step", step).addEdge(START, "step");
  if (branch) graph.addConditionalEdges("step", (s) => (s.log.length < 3 ? "step" : END));
  else graph.addEdge("step", END);
  return graph.compile({ checkpointer: new MemorySaver() });
}

describe("a node's write is validated once per superstep", () => {
  it("behind a conditional edge: three supersteps, three checks per channel (not six)", async () => {
    const plain = countingSchema();
    const delta = countingSchema();
    const graph = loop(plain.schema, delta.schema, (n) => ({ n }));
    const result = await graph.invoke({}, { configurable: { thread_id: "once" } });
    expect(result.log).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    expect(result.last).toEqual({ n: 2 });
    expect(plain.counter.calls).toBe(3);
    expect(delta.counter.calls).toBe(3);
  });

  it("behind a plain edge: one superstep, one check per channel", async () => {
    const plain = countingSchema();
    const delta = countingSchema();
    const graph = loop(plain.schema, delta.schema, (n) => ({ n }), false);
    await graph.invoke({}, { configurable: { thread_id: "plain" } });
    expect([plain.counter.calls, delta.counter.calls]).toEqual([1, 1]);
  });

  it("the same object written again in a later superstep is checked again, so a change made to it since fails", async () => {
    const shared = { n: 0 } as { n: unknown };
    const schema = z.object({ n: z.number() });
    const graph = loop(schema, schema, (n) => {
      if (n === 1) shared.n = "one";
      return shared as Item;
    });
    const error = await graph.invoke({}, { configurable: { thread_id: "again" } }).catch((e: unknown) => e);
    expect(isPlanManagerError(error) && error.code).toBe("invalid_update");
    expect(isPlanManagerError(error) && error.message).toBe(
      "state update rejected: last.n: Invalid input: expected number, received string",
    );
  });

  it("updateState with a value a run wrote and the caller then broke is still rejected", async () => {
    const schema = z.object({ n: z.number() });
    const graph = loop(schema, schema, (n) => ({ n }));
    const config = { configurable: { thread_id: "outside" } };
    const result = await graph.invoke({}, config);
    const broken = result.last as { n: unknown };
    broken.n = "two";
    const error = await graph.updateState(config, { last: broken }).catch((e: unknown) => e);
    expect(isPlanManagerError(error) && error.code).toBe("invalid_update");
    expect((await graph.getState(config)).values.log).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
  });

  it("a write its node built from checked values (builtWrite) is not parsed: three supersteps, no check", async () => {
    const plain = countingSchema();
    const delta = countingSchema();
    const graph = loop(plain.schema, delta.schema, (n) => builtWrite({ n }));
    const result = await graph.invoke({}, { configurable: { thread_id: "built" } });
    expect(result.log).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
    expect([plain.counter.calls, delta.counter.calls]).toEqual([0, 0]);
  });

  it("a built write is trusted once: the same object broken since and written by updateState is rejected", async () => {
    const schema = z.object({ n: z.number() });
    const graph = loop(schema, schema, (n) => builtWrite({ n }));
    const config = { configurable: { thread_id: "built-outside" } };
    const result = await graph.invoke({}, config);
    const broken = result.last as { n: unknown };
    broken.n = "two";
    const error = await graph.updateState(config, { last: broken }).catch((e: unknown) => e);
    expect(isPlanManagerError(error) && error.message).toBe(
      "state update rejected: last.n: Invalid input: expected number, received string",
    );
    expect((await graph.getState(config)).values.log).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
  });
});

import {
  Annotation,
  CompiledStateGraph,
  MemorySaver,
  StateGraph,
  type LangGraphRunnableConfig,
} from "@langchain/langgraph";
import { describe, expect, it, vi } from "vitest";
import {
  LENT_CHECKPOINTER,
  PARENT_DURABILITY,
  PARENT_READ,
  STREAM_METHOD,
  hasInheritedDurability,
  isNestedRun,
  lentCheckpointer,
} from "../../src/graph/langgraph-seam.js";

const S = Annotation.Root({ n: Annotation<number> });

/** A graph whose one node records the configurable keys LangGraph gave its run. */
function recorder(seen: Record<string, unknown>[]) {
  return new StateGraph(S)
    .addNode("look", (_s: typeof S.State, config: LangGraphRunnableConfig) => {
      seen.push({ ...config.configurable });
      return { n: 1 };
    })
    .addEdge("__start__", "look")
    .compile();
}

describe("the LangGraph internals we rely on (graph/langgraph-seam.ts)", () => {
  it("a parent lends its checkpointer and read function to a graph run inside its node", async () => {
    const seen: Record<string, unknown>[] = [];
    const child = recorder([]);
    const saver = new MemorySaver();
    // What a graph run inside a parent's node receives: the node's config.
    const parent = new StateGraph(S)
      .addNode("outer", (s: typeof S.State, config: LangGraphRunnableConfig) => {
        seen.push({ ...config.configurable });
        return child.invoke(s, config);
      })
      .addEdge("__start__", "outer")
      .compile({ checkpointer: saver });
    await parent.invoke({ n: 0 }, { configurable: { thread_id: "t" }, durability: "sync" });
    const inner = seen.at(-1)!;
    // If one of these fails after an upgrade, LangGraph renamed or dropped a key: update the seam.
    expect([LENT_CHECKPOINTER, PARENT_READ].map((k) => k in inner)).toEqual([true, true]);
    expect(lentCheckpointer(inner)).toBe(saver);
    expect(isNestedRun(inner)).toBe(true);
  });

  it(`a run takes its durability from ${PARENT_DURABILITY} when the caller chose none`, async () => {
    const checkpoints = async (configurable: Record<string, unknown>) => {
      const saver = new MemorySaver();
      const graph = new StateGraph(S)
        .addNode("a", () => ({ n: 1 }))
        .addNode("b", () => ({ n: 2 }))
        .addEdge("__start__", "a")
        .addEdge("a", "b")
        .compile({ checkpointer: saver });
      const config = { configurable: { thread_id: "t", ...configurable } };
      await graph.invoke({ n: 0 }, config);
      let count = 0;
      for await (const _ of saver.list(config)) count += 1;
      return count;
    };
    // "exit" writes only the last checkpoint; without the key every superstep's is written.
    expect(await checkpoints({ [PARENT_DURABILITY]: "exit" })).toBe(1);
    expect(await checkpoints({})).toBe(4);
    expect(hasInheritedDurability({ [PARENT_DURABILITY]: "exit" })).toBe(true);
  });

  it("a top-level run carries none of them", () => {
    expect([lentCheckpointer({}), isNestedRun({}), hasInheritedDurability({})]).toEqual([undefined, false, false]);
  });

  it(`invoke and stream go through ${STREAM_METHOD}`, async () => {
    const graph = recorder([]);
    expect(typeof CompiledStateGraph.prototype[STREAM_METHOD]).toBe("function");
    const spy = vi.spyOn(graph, STREAM_METHOD);
    await graph.invoke({ n: 0 });
    for await (const _ of await graph.stream({ n: 0 })) void _;
    expect(spy).toHaveBeenCalledTimes(2);
  });
});

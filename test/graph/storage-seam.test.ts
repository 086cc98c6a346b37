/**
 * Pins what src/runtime/delta-channel.ts relies on in LangGraph's beta `DeltaChannel` and the base
 * checkpointer's `getDeltaChannelHistory` (decision record 0011), so an upgrade that changes them
 * fails here, by name, before anything else.
 */
import { Annotation, END, MemorySaver, Overwrite, START, StateGraph } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { isPlanManagerError } from "../../src/errors.js";
import { CheckedChannel } from "../../src/runtime/checked-channel.js";
import { appendBatch, CheckedDeltaChannel, mergeBatch } from "../../src/runtime/delta-channel.js";

/** Every database a test opens is closed at the end: better-sqlite3 statements finalized at process exit crash Node 24. */
const opened: SqliteSaver[] = [];
const openSaver = (conn: string) => {
  const saver = SqliteSaver.fromConnString(conn);
  opened.push(saver);
  return saver;
};
afterAll(() => {
  for (const saver of opened) saver.db.close();
});

const ItemSchema = z.object({ n: z.number() });
type Item = z.infer<typeof ItemSchema>;

function logChannel(snapshotFrequency?: number) {
  return new CheckedDeltaChannel<Item[], Item | Item[]>(
    "log",
    ItemSchema,
    appendBatch<Item>,
    () => [],
    snapshotFrequency,
  );
}

/** A graph whose one node appends `{ n }` to a log `left` times (one checkpoint each). */
function counter(snapshotFrequency?: number, plain = false) {
  const State = Annotation.Root({
    log: plain
      ? new CheckedChannel<Item[], Item>(
          "log",
          ItemSchema,
          (a, b) => a.concat(b),
          () => [],
        )
      : logChannel(snapshotFrequency),
    left: Annotation<number>(),
  });
  const step = (s: typeof State.State) => ({ log: { n: s.log.length }, left: s.left - 1 });
  return new StateGraph(State)
    .addNode("step", step)
    .addEdge(START, "step")
    .addConditionalEdges("step", (s) => (s.left > 0 ? "step" : END));
}

describe("batch reducers give the same value however replay batches the writes", () => {
  it("merge, append and replace: reduce(reduce(s, xs), ys) equals reduce(s, xs ++ ys)", () => {
    const maps: (Record<string, number> | undefined)[] = [{ a: 1 }, { b: 2 }, undefined, { a: 3 }];
    const start = { z: 0 };
    expect(mergeBatch(mergeBatch(start, maps.slice(0, 2)), maps.slice(2))).toEqual(mergeBatch(start, maps));
    expect(mergeBatch(start, maps)).toEqual({ z: 0, a: 3, b: 2 });
    expect(start).toEqual({ z: 0 });
    const logs: (number | number[] | undefined)[] = [1, [2, 3], undefined, 4];
    expect(appendBatch(appendBatch([0], logs.slice(0, 1)), logs.slice(1))).toEqual(appendBatch([0], logs));
    expect(appendBatch([0], logs)).toEqual([0, 1, 2, 3, 4]);
  });
});

describe("CheckedDeltaChannel", () => {
  it("rejects a bad write with invalid_update and keeps its value; a restored channel still checks", () => {
    const channel = logChannel().fromCheckpoint(undefined);
    channel.update([{ n: 1 }]);
    const error = (() => {
      try {
        channel.update([{ n: 2 }, { n: "x" } as unknown as Item]);
      } catch (e) {
        return e;
      }
    })();
    expect(isPlanManagerError(error) && [error.code, error.message]).toEqual([
      "invalid_update",
      "state update rejected: log.n: Invalid input: expected number, received string",
    ]);
    expect(channel.get()).toEqual([{ n: 1 }]);
    const restored = channel.fromCheckpoint(undefined);
    expect(restored).toBeInstanceOf(CheckedDeltaChannel);
    expect(() => restored.update([{ m: 1 } as unknown as Item])).toThrow("log.n");
    expect(() => restored.update([new Overwrite({ n: "y" }) as unknown as Item])).toThrow("log.n");
  });

  it("is a DeltaChannel to LangGraph: its checkpoint() stores nothing", () => {
    const channel = logChannel().fromCheckpoint(undefined);
    channel.update([{ n: 1 }]);
    expect(channel.lc_graph_name).toBe("DeltaChannel");
    expect(channel.checkpoint()).toBeUndefined();
  });
});

describe("a delta channel on SqliteSaver (the base getDeltaChannelHistory)", () => {
  it("is absent from checkpoints, rebuilt by replay at every checkpoint, and snapshotted at its frequency", async () => {
    const saver = openSaver(":memory:");
    const graph = counter(4).compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "t" } };
    const out = await graph.invoke({ left: 6 }, config);
    expect(out.log).toEqual([0, 1, 2, 3, 4, 5].map((n) => ({ n })));

    const rows = saver.db
      .prepare("SELECT checkpoint FROM checkpoints WHERE thread_id = 't' ORDER BY checkpoint_id")
      .all() as { checkpoint: Buffer }[];
    const stored = rows.map((r) => JSON.parse(String(r.checkpoint)).channel_values.log);
    // The input, the input applied, then six steps: the fourth update stores the whole value once.
    const snapshot = { lc: 2, type: "delta_snapshot", value: [0, 1, 2, 3].map((n) => ({ n })) };
    expect(stored).toEqual([undefined, undefined, undefined, undefined, undefined, snapshot, undefined, undefined]);

    const history = [];
    for await (const s of graph.getStateHistory(config)) history.push(s.values.log?.length);
    expect(history).toEqual([6, 5, 4, 3, 2, 1, 0, 0]);

    const walk = await saver.getDeltaChannelHistory({ config, channels: ["log"] });
    expect(walk.log!.seed).toMatchObject({ lg_name: "DeltaSnapshot", value: [0, 1, 2, 3].map((n) => ({ n })) });
    expect(walk.log!.writes.map((w) => w[2])).toEqual([{ n: 4 }, { n: 5 }]);
  });

  it("a fork from an earlier checkpoint sees that checkpoint's value, not the later writes", async () => {
    const saver = new MemorySaver();
    const graph = counter().compile({ checkpointer: saver });
    const config = { configurable: { thread_id: "t" } };
    await graph.invoke({ left: 5 }, config);
    let third;
    for await (const s of graph.getStateHistory(config)) if (s.values.log?.length === 2) third = s.config;
    const forked = await graph.invoke(null, third!);
    expect(forked.log).toEqual([0, 1, 2, 3, 4].map((n) => ({ n })));
    const updated = await graph.updateState(third!, { log: { n: 99 } });
    expect((await graph.getState(updated)).values.log).toEqual([{ n: 0 }, { n: 1 }, { n: 99 }]);
  });

  it("a thread written with plain channels (before 0011) continues with delta channels, and back", async () => {
    const saver = openSaver(":memory:");
    const config = { configurable: { thread_id: "t" } };
    await counter(undefined, true).compile({ checkpointer: saver }).invoke({ left: 2 }, config);
    const upgraded = counter().compile({ checkpointer: saver });
    expect((await upgraded.getState(config)).values.log).toEqual([{ n: 0 }, { n: 1 }]);
    await upgraded.updateState(config, { left: 2 });
    const out = await upgraded.invoke(null, config);
    expect(out.log).toEqual([0, 1, 2, 3].map((n) => ({ n })));
    const downgraded = counter(undefined, true).compile({ checkpointer: saver });
    expect((await downgraded.getState(config)).values.log).toEqual([0, 1, 2, 3].map((n) => ({ n })));
  });
});

/**
 * A checkpointer the package knows nothing about (a Redis or MongoDB one; here KeyValueSaver)
 * runs a plan end to end: the graph compiles with the caller's own object, one run per thread is
 * held in this process, history and state come from LangGraph's own walk over the saver's public
 * methods, and a paused run resumes from it.
 */
import { Command, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { isPlanManagerError } from "../../src/errors.js";
import { saverAdapter } from "../../src/storage/index.js";
import { harness, scriptedTool, type Loose } from "../helpers/graph.js";
import { KeyValueSaver } from "../helpers/key-value-saver.js";

const plan = {
  steps: [
    { id: "fetch", goal: "Fetch", tool: "work", args: { n: 1 }, produces: ["a"] },
    { id: "ask", goal: "Approve", human: { prompt: "go on?" }, produces: ["ok"], dependsOn: ["fetch"] },
    { id: "send", goal: "Send", tool: "work", args: { n: 2 }, produces: ["b"], dependsOn: ["ask"] },
  ],
};

function run(checkpointer: KeyValueSaver | MemorySaver, gate?: Promise<void>) {
  const work = scriptedTool("work", [
    async (args: Record<string, unknown>) => {
      if (args.n === 1 && gate) await gate;
      return args.n === 1 ? { a: "A" } : { b: "B" };
    },
  ]);
  return { work, ...harness(plan, [work], { checkpointer, threadId: "kv" }) };
}

async function history(h: ReturnType<typeof run>) {
  const all: unknown[] = [];
  for await (const s of h.graph.getStateHistory(h.config)) all.push([s.next, (s.values as Loose).status]);
  return all;
}

describe("a third-party saver (another class shape, no SQL)", () => {
  it("gets the fallback adapter: the graph keeps the caller's object and LangGraph's own history", () => {
    const saver = new KeyValueSaver();
    const adapter = saverAdapter(saver);
    expect([adapter.name, adapter.claims]).toEqual(["any saver", "process"]);
    const h = run(saver);
    expect((h.graph as unknown as { checkpointer: unknown }).checkpointer).toBe(saver);
  });

  it("runs, pauses for a person, refuses a second run on the thread meanwhile, resumes and finishes", async () => {
    const saver = new KeyValueSaver();
    let open!: () => void;
    const h = run(saver, new Promise<void>((resolve) => (open = resolve)));
    const first = h.run();
    while (h.work.calls.length === 0) await new Promise((r) => setTimeout(r, 1));
    const second = await h.run().catch((error: unknown) => error);
    expect(isPlanManagerError(second) && second.code).toBe("thread_busy");
    open();
    expect((await first).status).toBe("awaiting_human");
    const done = await h.run(new Command({ resume: { action: "complete", output: { ok: true } } }));
    expect([done.status, done.facts.a.value, done.facts.ok.value, done.facts.b.value]).toEqual([
      "completed",
      "A",
      true,
      "B",
    ]);
    expect(h.work.calls).toEqual([{ n: 1 }, { n: 2 }]);
    expect(saver.calls.put).toBeGreaterThan(5);

    // The same run on MemorySaver: the same states, checkpoint by checkpoint.
    const reference = run(new MemorySaver());
    await reference.run();
    await reference.run(new Command({ resume: { action: "complete", output: { ok: true } } }));
    expect(await history(h)).toEqual(await history(reference));
    expect((await h.state()).facts).toEqual((await reference.state()).facts);
  });

  it("lists and deletes its threads through the saver's public list and deleteThread", async () => {
    const saver = new KeyValueSaver();
    const h = run(saver);
    await h.run();
    const adapter = saverAdapter(saver);
    const [thread] = await adapter.listThreads();
    expect(thread?.threadId).toBe("kv");
    expect(await adapter.deleteThread("kv")).toEqual({ deleted: true });
    expect(saver.calls.deleteThread).toBe(1);
    expect(await adapter.listThreads()).toEqual([]);
  });
});

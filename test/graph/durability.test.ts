/**
 * docs/architecture.md "Durability": a finished attempt is checkpointed before the next step starts, unless the caller
 * says otherwise.
 */
import { MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { harness, scriptedTool } from "../helpers/graph.js";

/** A saver whose writes take a while, logging when each one is done. */
function slowSaver(log: string[]) {
  const saver = new MemorySaver();
  const put = saver.put.bind(saver);
  saver.put = async (...args: Parameters<MemorySaver["put"]>) => {
    await new Promise((resolve) => setTimeout(resolve, 15));
    const written = await put(...args);
    log.push("checkpoint");
    return written;
  };
  return saver;
}

const plan = {
  steps: [
    { id: "a", goal: "A", tool: "work", args: { step: "a" } },
    { id: "b", goal: "B", tool: "work", args: { step: "b" }, dependsOn: ["a"] },
    { id: "c", goal: "C", tool: "work", args: { step: "c" }, dependsOn: ["b"] },
  ],
};

describe("durability", () => {
  // The visit that records an ended attempt starts what it made ready at once (no barrier); the
  // checkpoint of that visit is written before the next visit records anything more.
  it("writes each visit's checkpoint before the next visit goes on", async () => {
    const log: string[] = [];
    const work = scriptedTool("work", [(args: Record<string, unknown>) => (log.push(`call ${args.step}`), {})]);
    const out = await harness(plan, [work], { checkpointer: slowSaver(log) }).run();
    expect(out.status).toBe("completed");
    expect(log.slice(log.indexOf("call b"), log.indexOf("call c"))).toContain("checkpoint");
  });

  it("leaves the choice to a caller who asks for LangGraph's asynchronous writes", async () => {
    const log: string[] = [];
    const work = scriptedTool("work", [(args: Record<string, unknown>) => (log.push(`call ${args.step}`), {})]);
    const h = harness(plan, [work], { checkpointer: slowSaver(log) });
    await h.graph.invoke({ goal: "g", context: {} } as never, { ...h.config, durability: "async" } as never);
    // The next visit goes on while the checkpoint of the one before is still being written.
    expect(log.slice(log.indexOf("call b"), log.indexOf("call c"))).not.toContain("checkpoint");
  });
});

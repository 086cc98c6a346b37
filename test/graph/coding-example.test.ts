import { describe, expect, it } from "vitest";
import { createCodingManager } from "../../examples/coding/create-agent.js";

describe("examples/coding/create-agent.ts", () => {
  it("runs a createAgent graph as a step's agent; the tools it calls get the step's idempotency key", async () => {
    const { graph, model, remote } = createCodingManager();
    const config = { configurable: { thread_id: "coding-1" } };
    const out = await graph.invoke(
      { goal: "Fix issue #42", context: { issue: "parse() drops the last token" } },
      config,
    );
    expect(out.status).toBe("completed");
    expect(out.facts.branch!.value).toBe("fix/parse-off-by-one");
    expect(out.sideEffects).toHaveLength(1);
    const key = out.sideEffects[0]!.idempotencyKey;
    expect(key).toMatch(/^coding-1:[0-9a-f]{16}$/);
    expect([...remote.pushed]).toEqual([[key, "fix/parse-off-by-one"]]);
    // The agent got the step's prompt: its goal and the trusted input, in a data block.
    const first = model.calls[0]!.messages.map((m) => String(m.content)).join("\n");
    expect(first).toContain("Goal of the whole plan: Fix issue #42");
    expect(first).toContain(
      '<untrusted-data name="inputs">\n{"issue":"parse() drops the last token"}\n</untrusted-data>',
    );
    // Both model calls of the agent are in usage, for this step and attempt.
    expect(out.usage.map((u) => [u.purpose, u.stepId, u.attempt])).toEqual([
      ["step", "fix", 1],
      ["step", "fix", 1],
    ]);
  });
});

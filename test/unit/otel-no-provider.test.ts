/**
 * With `@opentelemetry/api` installed but no provider registered, a run gets no telemetry at all:
 * no observer on its config, so a step pays nothing (docs/decisions/0052-opentelemetry.md). Once a
 * provider is registered, the next run is observed.
 */
import { describe, expect, it } from "vitest";
import { harness, scriptedTool } from "../helpers/graph.js";
import { registerTelemetry } from "../helpers/otel.js";
import { observerOf } from "../../src/runtime/events.js";

describe("OpenTelemetry: no provider registered", () => {
  it("a run's nodes see no observer until a provider is registered", async () => {
    const seen: boolean[] = [];
    const fetch = scriptedTool("fetch", [
      (_args: unknown, config: unknown) => (seen.push(observerOf(config as never) !== undefined), { ok: 1 }),
    ]);
    const plan = { steps: [{ id: "fetch", goal: "Fetch", tool: "fetch" }] };
    expect((await harness(plan, [fetch], { threadId: "a" }).run()).status).toBe("completed");
    const telemetry = registerTelemetry();
    try {
      expect((await harness(plan, [fetch], { threadId: "b" }).run()).status).toBe("completed");
      expect(seen).toEqual([false, true]);
      expect(
        telemetry
          .spans()
          .map((s) => s.name)
          .sort(),
      ).toEqual(["plan_version 1", "execute_tool fetch", "invoke_workflow LangGraph"].sort());
    } finally {
      await telemetry.shutdown();
    }
  });
});

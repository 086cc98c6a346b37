/**
 * `@opentelemetry/api` is an optional peer: without it a run works as before and nothing is traced
 * (docs/decisions/0052-opentelemetry.md). Its absence is simulated by a module that fails to load.
 */
import { describe, expect, it, vi } from "vitest";

vi.doMock("@opentelemetry/api", () => {
  throw new Error("Cannot find package '@opentelemetry/api'");
});

describe("OpenTelemetry: the API not installed", () => {
  it("a run completes, its nodes see no observer, and the API loads as undefined", async () => {
    const { harness, scriptedTool } = await import("../helpers/graph.js");
    const { observerOf } = await import("../../src/runtime/events.js");
    const { loadOtel } = await import("../../src/otel/api.js");
    const seen: unknown[] = [];
    const fetch = scriptedTool("fetch", [
      (_args: unknown, config: unknown) => (seen.push(observerOf(config as never)), { ok: 1 }),
    ]);
    const out = await harness({ steps: [{ id: "fetch", goal: "Fetch", tool: "fetch" }] }, [fetch]).run();
    expect(out.status).toBe("completed");
    expect(seen).toEqual([undefined]);
    expect(await loadOtel()).toBeUndefined();
  });
});

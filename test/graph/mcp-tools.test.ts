/**
 * Tools from a real MCP server (@modelcontextprotocol/server-everything over stdio, loaded with
 * @langchain/mcp-adapters) run as step tools; an MCP error result is classified and answered by
 * the ladder (examples/mcp-tools/weather.ts).
 */
import { describe, expect, it } from "vitest";
import { runWithMcpTools } from "../../examples/mcp-tools/weather.js";

describe("tools from an MCP server", () => {
  it("runs a plan with them; an error result that says fetch failed is retried, then the fallback runs", async () => {
    const result = await runWithMcpTools("http://127.0.0.1:9/forecast");
    expect(result.status).toBe("completed");
    const weather = result.facts.structuredContent!;
    expect(weather.label).toBe("trusted");
    expect(Object.keys(weather.value as object).sort()).toEqual(["conditions", "humidity", "temperature"]);
    expect(result.facts.archived!.value).toBe("Echo: archive the forecast later");
    expect(
      result.decisions.map((d: { stepId?: string; rule: string; evidence?: string }) => [d.stepId, d.rule, d.evidence]),
    ).toEqual([
      ["archive", "transient.retry", "transient.mcp-tool-error"],
      ["archive", "exhausted.fallback", "transient.mcp-tool-error"],
    ]);
    expect(result.steps.archive).toMatchObject({ status: "succeeded", attempts: 3, usedFallback: true });
  }, 60_000);
});

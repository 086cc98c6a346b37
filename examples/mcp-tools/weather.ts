/**
 * Step tools from an MCP server: @langchain/mcp-adapters loads the tools of the reference server
 * `@modelcontextprotocol/server-everything` (spawned over stdio), and the plan manager runs a plan
 * with them like with any other tools. The archive step's server cannot reach its URL: the error
 * result is classified transient (README "Tools from MCP servers"), retried, then the fallback runs.
 *
 *   npm install @langchain/mcp-adapters @modelcontextprotocol/server-everything
 *   npx tsx examples/mcp-tools/weather.ts
 */
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { MemorySaver } from "@langchain/langgraph";
import { MultiServerMCPClient } from "@langchain/mcp-adapters";
import { createPlanManager, staticPlanner, type PlanDraft } from "langgraph-replan";

/** Where the reference server's entry point is (its package has no exports map). */
function everythingServer(): string {
  const require = createRequire(import.meta.url);
  const main = require.resolve("@modelcontextprotocol/server-everything/package.json");
  return join(dirname(main), "dist", "index.js");
}

export const weatherPlan = (archiveUrl: string): PlanDraft => ({
  steps: [
    {
      id: "weather",
      goal: "read the weather in Chicago",
      tool: "get-structured-content",
      args: { location: "Chicago" },
      produces: ["structuredContent"],
    },
    {
      id: "archive",
      goal: "archive the forecast",
      tool: "gzip-file-as-resource",
      args: { name: "forecast.gz", data: archiveUrl },
      dependsOn: ["weather"],
      retry: { maxAttempts: 2, backoff: "none", initialDelayMs: 0, maxDelayMs: 0 },
      fallback: { tool: "echo", args: { message: "archive the forecast later" } },
      produces: ["archived"],
    },
  ],
});

/** Runs the plan with the MCP server's tools; the client (and the server it spawned) is closed after. */
export async function runWithMcpTools(archiveUrl = "http://127.0.0.1:9/forecast") {
  const client = new MultiServerMCPClient({
    mcpServers: {
      everything: {
        transport: "stdio",
        command: process.execPath,
        args: [everythingServer(), "stdio"],
        stderr: "ignore",
      },
    },
    useStandardContentBlocks: false,
  });
  try {
    const tools = await client.getTools();
    const graph = createPlanManager({ tools, planner: staticPlanner({ plan: weatherPlan(archiveUrl) }) }).compile({
      checkpointer: new MemorySaver(),
    });
    return await graph.invoke({ goal: "the weather, archived" }, { configurable: { thread_id: "mcp-weather" } });
  } finally {
    await client.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const result = await runWithMcpTools();
  console.log(result.status, JSON.stringify(result.facts?.structuredContent?.value));
  for (const d of result.decisions) console.log(`${d.stepId}: ${d.rule} (${d.evidence ?? "-"})`);
}

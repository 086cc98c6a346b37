/**
 * What the MCP guide and README tell a client to configure works. The complete examples of README
 * and the guides are run by test/docs-examples.test.ts; every ts block is type-checked by
 * test/graph/readme-types.test.ts.
 */
import { describe, expect, it } from "vitest";
import { MCP_USAGE, runMcp } from "../../src/cli/mcp-command.js";
import { readDoc } from "../docs-markdown.js";

/** Runs `langgraph-replan mcp` with a stdio client configuration's flags and `--help`: they must parse. */
async function flagsParse(args: string[]): Promise<string[]> {
  const out: string[] = [];
  const io = { out: (l: string) => out.push(l), err: () => undefined, now: () => 0, sleep: async () => undefined };
  // The flags parse as the command's own (an unknown one would throw); --help stops before anything opens.
  expect(await runMcp([...args, "--help"], io)).toBe(0);
  return out;
}

describe("MCP client configurations in the docs", () => {
  it("gives configurations a client can read: our command with flags it takes, and a URL at /mcp", async () => {
    const guide = readDoc("docs/guides/mcp.md");
    const section = guide.slice(guide.indexOf("### Connecting a client"), guide.indexOf("### An agent session"));
    const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!));
    expect(blocks).toHaveLength(2);
    const stdio = blocks[0].mcpServers.plans as { command: string; args: string[] };
    expect([stdio.command, ...stdio.args.slice(0, 2)]).toEqual(["npx", "langgraph-replan", "mcp"]);
    expect(await flagsParse(stdio.args.slice(2))).toEqual([MCP_USAGE]);
    expect(blocks[1].mcpServers.plans.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  });

  it("gives README's stdio configuration with flags the command takes", async () => {
    const readme = readDoc("README.md");
    const section = readme.slice(readme.indexOf("## The MCP server"), readme.indexOf("## Guides"));
    const blocks = [...section.matchAll(/```json\n([\s\S]*?)```/g)].map((m) => JSON.parse(m[1]!));
    expect(blocks).toHaveLength(1);
    const stdio = blocks[0].mcpServers.plans as { command: string; args: string[] };
    expect([stdio.command, ...stdio.args.slice(0, 2)]).toEqual(["npx", "langgraph-replan", "mcp"]);
    expect(await flagsParse(stdio.args.slice(2))).toEqual([MCP_USAGE]);
  });
});

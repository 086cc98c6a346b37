/**
 * `langgraph-replan mcp --tools`: what a server's tool may change comes from its MCP annotations. Only
 * `readOnlyHint: true` makes a read-only step tool; a destructive tool, or one with no annotations (the
 * protocol's default is "may be destructive"), is a side-effecting tool: keyed, journaled, reviewed.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { loadServerTools } from "../../src/cli/mcp-tools.js";
import { toolInfoOf, toolMetadata } from "../../src/runtime/tool-registry.js";

const server = fileURLToPath(new URL("../fixtures/mcp-word-server.mjs", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "mcp-annotations-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("--tools: a server tool's side effects, from its annotations", () => {
  it("read-only when the server says so; destructive or unannotated tools have side effects", async () => {
    const file = join(dir, "servers.json");
    const files = { command: process.execPath, args: [server, "--files"] };
    writeFileSync(file, JSON.stringify({ mcpServers: { files } }));
    const { tools, close } = await loadServerTools(file);
    try {
      const seen = Object.fromEntries(
        tools.map((t) => [t.name, toolInfoOf(t, toolMetadata(t)).sideEffects ?? []] as const),
      );
      expect(seen).toEqual({
        files__count_words: [],
        files__delete_file: ["files__delete_file"],
        files__touch: ["files__touch"],
      });
    } finally {
      await close();
    }
  }, 60_000);
});

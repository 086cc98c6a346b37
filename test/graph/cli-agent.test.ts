/** The command line over an agent's thread (createAgent + planMiddleware on SQLite): its status is the one it waits in. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createAgent } from "langchain";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { planMiddleware } from "../../src/middleware/index.js";
import { runCli } from "../../src/cli/commands.js";
import { debugView } from "../../src/views/index.js";
import { scriptedAgentModel } from "../helpers/agent-model.js";
import { countedTool, ledger } from "../helpers/agent-tools.js";

const dir = mkdtempSync(join(tmpdir(), "cli-agent-"));
const db = join(dir, "checkpoints.sqlite");
const NOW = Date.parse("2026-01-01T00:01:00Z");
const cfg = (thread_id: string) => ({ configurable: { thread_id } });

async function cli(...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    now: () => NOW,
    sleep: async () => undefined,
  });
  return { code, out, err };
}

const plan = { steps: [{ id: "a", goal: "Do a", tool: "a" }] };

beforeAll(async () => {
  const saver = SqliteSaver.fromConnString(db);
  const l = ledger();
  const agent = (review: boolean) =>
    createAgent({
      model: scriptedAgentModel([[{ name: "write_plan", args: plan }], [{ name: "a", args: {} }], "done"]),
      tools: [countedTool(l, "a", () => ({ ok: true }))],
      middleware: [planMiddleware({ reviewPlan: review, sleep: async () => {}, now: () => 0 })],
      checkpointer: saver,
    });
  await agent(true).invoke({ messages: [{ role: "user", content: "Do a" }] }, cfg("review"));
  await agent(false).invoke({ messages: [{ role: "user", content: "Do a" }] }, cfg("done"));
  saver.db.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("langgraph-replan over an agent's thread", () => {
  it("wait: a thread waiting at a plan review needs a person (exit 2), quietly", async () => {
    const warn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const log = vi.spyOn(console, "log").mockImplementation(() => undefined);
    try {
      expect(await cli("wait", db, "review", "--timeout", "0")).toEqual({
        code: 2,
        err: [],
        out: ["review: awaiting_review — waits for a person (Review the plan before any step runs)"],
      });
      expect(await cli("wait", db, "done", "--timeout", "0")).toEqual({
        code: 0,
        err: [],
        out: ["done: completed"],
      });
      const said = [...warn.mock.calls, ...log.mock.calls].map((c) => String(c[0]));
      expect(said.filter((s) => s.includes("Ignoring unknown node name"))).toEqual([]);
    } finally {
      warn.mockRestore();
      log.mockRestore();
    }
  });

  it("threads shows the agent's thread as waiting for a review", async () => {
    const { code, out } = await cli("threads", db);
    expect(code).toBe(0);
    expect(out.find((l) => l.startsWith("review"))).toContain("awaiting_review");
  });

  it("stop and resume refuse an agent's thread, saying where it is answered", async () => {
    expect(await cli("resume", db, "review", "--answer", '{"action":"approve"}')).toEqual({
      code: 1,
      out: [],
      err: [
        'langgraph-replan: "review" is a createAgent thread (planMiddleware): resume it from the agent\'s process ' +
          "(agent.invoke(new Command({ resume: answer }), config) answers its question)",
      ],
    });
    expect((await cli("stop", db, "review")).code).toBe(1);
  });
});

/** What the debug view shows of the completed thread "done": its middleware outcome has no summary. */
const DONE_DEBUG = [
  "goal: Do a",
  "status: completed",
  "",
  "steps:",
  "  a: succeeded, 1 attempt, cost 0 1970-01-01T00:00:00.000Z → 1970-01-01T00:00:00.000Z",
  "",
  "decisions:",
  "  (none)",
  "",
  "replans:",
  "  (none)",
  "",
  "facts:",
  "",
  "cost: execution 0, replanning 0",
];

describe("the debug view of a completed agent thread", () => {
  it("debugView reads the saved state of a completed, non-degraded agent run", async () => {
    const saver = SqliteSaver.fromConnString(db);
    try {
      const values = (await saver.getTuple(cfg("done")))!.checkpoint.channel_values as Record<string, unknown>;
      expect(values.status).toBe("completed");
      expect(values.outcome).not.toHaveProperty("summary");
      expect(debugView(values as never)).toEqual(DONE_DEBUG);
    } finally {
      saver.db.close();
    }
  });

  it("show --view debug prints it", async () => {
    expect(await cli("show", db, "done", "--view", "debug")).toEqual({ code: 0, err: [], out: DONE_DEBUG });
  });
});

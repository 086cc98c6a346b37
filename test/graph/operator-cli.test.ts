/** The operator's view and command line tell the run as it is: its retry policy, the step an agent waits on, its clock, a closed pipe. */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "@langchain/core/tools";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createAgent } from "langchain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createPlanManager, PermanentError, staticPlanner, TransientError } from "../../src/index.js";
import { planMiddleware } from "../../src/middleware/index.js";
import { runCli } from "../../src/cli/commands.js";
import { operatorView } from "../../src/views/index.js";
import { scriptedAgentModel } from "../helpers/agent-model.js";
import { countedTool, ledger } from "../helpers/agent-tools.js";
import { fakeClock } from "../helpers/clock.js";
import { harness, scriptedTool } from "../helpers/graph.js";

const dir = mkdtempSync(join(tmpdir(), "operator-cli-"));
const db = join(dir, "checkpoints.sqlite");
const cfg = (thread_id: string) => ({ configurable: { thread_id } });
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function cli(now: number, ...argv: string[]) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runCli(argv, {
    out: (l) => out.push(l),
    err: (l) => err.push(l),
    now: () => now,
    sleep: async () => {},
  });
  return { code, out, err };
}

const record = tool(async () => ({ id: 7 }), { name: "record", description: "record", schema: z.object({}) });
/** A run on a clock of its own (a month before the wall clock's), waiting for a person at step "check". */
const humanPlan = {
  steps: [
    { id: "fetch", goal: "Fetch the record", tool: "record", produces: ["id"] },
    { id: "check", goal: "A person checks it", human: { prompt: "right?" }, produces: ["ok"], dependsOn: ["fetch"] },
  ],
};
const runClock = fakeClock(Date.parse("2026-01-01T00:00:00Z"));

beforeAll(async () => {
  const saver = SqliteSaver.fromConnString(db);
  const graph = createPlanManager({ tools: [record], planner: staticPlanner({ plan: humanPlan }), clock: runClock });
  await graph.compile({ checkpointer: saver }).invoke({ goal: "check a record" }, cfg("person"));
  // An agent thread whose step failed for good: it waits for a person about step "pay".
  const l = ledger();
  const agent = createAgent({
    model: scriptedAgentModel([
      [{ name: "write_plan", args: { steps: [{ id: "pay", goal: "Pay", tool: "pay" }] } }],
      [{ name: "pay", args: {} }],
      "done",
    ]),
    tools: [
      countedTool(l, "pay", () => {
        throw new PermanentError("card declined");
      }),
    ],
    middleware: [planMiddleware({ sleep: async () => {}, now: () => 0 })],
    checkpointer: saver,
  });
  await agent.invoke({ messages: [{ role: "user", content: "Pay" }] }, cfg("agent"));
  saver.db.close();
});

describe("attempt n/max is the retry policy in force", () => {
  const plan = {
    steps: [
      { id: "fetch", goal: "Fetch", tool: "fetch" },
      { id: "slow", goal: "Fetch slowly", tool: "slow", dependsOn: ["fetch"], retry: { maxAttempts: 4 } },
    ],
  };
  const busy = () => new TransientError("busy");

  it("the policy's defaultRetry, not the library's, for a step without its own retry", async () => {
    const h = harness(plan, [scriptedTool("fetch", [busy()]), scriptedTool("slow", [{}])], {
      policy: { defaultRetry: { maxAttempts: 2 } },
    });
    const out = await h.run();
    expect([out.status, out.steps.fetch.attempts]).toEqual(["awaiting_human", 2]);
    expect(operatorView(out as never, { now: h.clock.now() }).slice(0, 2)).toEqual([
      "step: fetch",
      "status: awaiting_human (attempt 2/2)",
    ]);
  });

  it("the step's own retry over the policy's", async () => {
    const h = harness(plan, [scriptedTool("fetch", [{}]), scriptedTool("slow", [busy()])], {
      policy: { defaultRetry: { maxAttempts: 2 } },
    });
    const out = await h.run();
    expect([out.status, out.steps.slow.attempts]).toEqual(["awaiting_human", 4]);
    expect(operatorView(out as never, { now: h.clock.now() })[1]).toBe("status: awaiting_human (attempt 4/4)");
  });
});

describe("the command line over a paused run", () => {
  it("threads names the step an agent's thread waits on", async () => {
    const { code, out } = await cli(0, "threads", db);
    expect(code).toBe(0);
    expect(
      out
        .find((l) => l.startsWith("agent"))
        ?.split("  ")
        .slice(0, 3),
    ).toEqual(["agent", "awaiting_human", "step=pay"]);
    expect(
      out
        .find((l) => l.startsWith("person"))
        ?.split("  ")
        .slice(0, 3),
    ).toEqual(["person", "awaiting_human", "step=check"]);
  });

  it("an answer given here is stamped on the run's clock, not the wall clock", async () => {
    const saver = SqliteSaver.fromConnString(db);
    const pausedAt = Date.parse((await saver.getTuple(cfg("person")))!.checkpoint.ts);
    saver.db.close();
    // Five seconds after the run paused, on the wall clock.
    const answered = await cli(
      pausedAt + 5_000,
      "resume",
      db,
      "person",
      "--answer",
      '{"action":"complete","output":{"ok":true}}',
    );
    expect(answered.code).toBe(0);
    const reader = SqliteSaver.fromConnString(db);
    try {
      const graph = createPlanManager({ tools: [record], planner: staticPlanner({ plan: humanPlan }) });
      const values = (await graph.compile({ checkpointer: reader }).getState(cfg("person"))).values;
      expect(values.steps.check).toMatchObject({
        status: "succeeded",
        startedAt: "2026-01-01T00:00:00.000Z",
        endedAt: "2026-01-01T00:00:05.000Z",
      });
      expect(values.decisions.map((d: { rule: string; at: string }) => `${d.rule} ${d.at}`)).toEqual([
        "human.complete 2026-01-01T00:00:05.000Z",
      ]);
    } finally {
      reader.db.close();
    }
  });

  it("a reader that closes the pipe early ends the command quietly (threads | head)", async () => {
    const main = join(import.meta.dirname, "../../src/cli/main.ts");
    const child = spawn(process.execPath, ["--import", "tsx", main, "threads", db], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    // Closed before the command writes its first line: every line it writes meets a closed pipe.
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
  });
});

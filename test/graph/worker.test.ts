/**
 * The worker on a real PostgreSQL (started on 127.0.0.1 by the reliability suite's helper): jobs
 * in, threads run, questions parked without holding a worker, finished reports out, and an
 * operator's stop heard while the thread runs and taken at its next step boundary.
 */
import { tool } from "@langchain/core/tools";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createPlanManager, type PlanDraft } from "../../src/index.js";
import { createWorker, openQueue, type QueueClient, type ThreadFinished, type Worker } from "../../src/worker/index.js";
import { openThreadLocks } from "../../src/worker/thread-locks.js";
import { runCli } from "../../src/cli/commands.js";
import { startPostgres, type PgServer } from "../../test-reliability/helpers/postgres.js";

let pg: PgServer;
let worker: Worker;
let queue: QueueClient;
const reports: ThreadFinished[] = [];
const waiters: { threadId: string; resolve: (r: ThreadFinished) => void }[] = [];
const calls: string[] = [];
let gate: { opened: Promise<void>; open: () => void; reached: () => void; entered: Promise<void> } | undefined;

/** Resolves once the worker running the thread has heard its stop request (the row says so). */
async function noticed(threadId: string): Promise<void> {
  const locks = await openThreadLocks(pg.url, 1);
  try {
    while (!(await locks.stopRequest(threadId))?.noticed) await new Promise((r) => setTimeout(r, 10));
  } finally {
    await locks.close();
  }
}

function finishedOnce(threadId: string): Promise<ThreadFinished> {
  return new Promise((resolve) => waiters.push({ threadId, resolve }));
}

const echo = tool(
  async (args: { n: number; gate?: boolean }, config) => {
    calls.push(`${config?.configurable?.thread_id}:${args.n}`);
    if (args.gate && gate) {
      gate.reached();
      await gate.opened;
    }
    return { [`v${args.n}`]: args.n };
  },
  { name: "echo", description: "echo", schema: z.object({ n: z.number(), gate: z.boolean().optional() }) },
);

const chain = (n: number, gateAt?: number): PlanDraft => ({
  steps: Array.from({ length: n }, (_, i) => ({
    id: `s${i}`,
    goal: `step ${i}`,
    tool: "echo",
    args: { n: i, ...(i === gateAt ? { gate: true } : {}) },
    produces: [`v${i}`],
    ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}),
  })),
});
const withQuestion: PlanDraft = {
  steps: [
    { id: "s0", goal: "step 0", tool: "echo", args: { n: 0 }, produces: ["v0"] },
    { id: "ask", goal: "a person checks", human: { prompt: "ok?" }, dependsOn: ["s0"] },
    { id: "s1", goal: "step 1", tool: "echo", args: { n: 1 }, produces: ["v1"], dependsOn: ["ask"] },
  ],
};

beforeAll(async () => {
  pg = await startPostgres();
  // The plan is picked from the goal, so that one graph serves every thread.
  const planner = {
    plan: async (req: { goal: string }) =>
      req.goal === "ask" ? withQuestion : req.goal === "gated" ? chain(5, 1) : chain(3),
  };
  worker = createWorker({
    graph: createPlanManager({ tools: [echo], planner: planner }),
    connectionString: pg.url,
    concurrency: 1,
    pollSeconds: 0.5,
    onFinished: (r) => {
      reports.push(r);
      const i = waiters.findIndex((w) => w.threadId === r.threadId);
      if (i >= 0) waiters.splice(i, 1)[0]!.resolve(r);
    },
  });
  await worker.start();
  queue = await openQueue(pg.url);
}, 120_000);

afterAll(async () => {
  await queue?.close();
  await worker?.stop({ graceful: false });
  pg?.stop();
});

describe("createWorker on PostgreSQL", () => {
  it("parks a question without holding the worker, runs the next thread meanwhile, and finishes both", async () => {
    const asked = finishedOnce("w-ask");
    const plain = finishedOnce("w-plain");
    await queue.enqueueRun("w-ask", { goal: "ask" });
    await queue.enqueueRun("w-plain", { goal: "plain" });
    // One worker slot: the plain thread can only run if the parked one let go of it.
    expect(await asked).toEqual({ threadId: "w-ask", status: "awaiting_human", parked: true });
    expect((await plain).status).toBe("completed");

    const saver = PostgresSaver.fromConnString(pg.url);
    const tuple = await saver.getTuple({ configurable: { thread_id: "w-ask", checkpoint_ns: "" } });
    const interruptId = tuple!.pendingWrites!.find(([, channel]) => channel === "__interrupt__")?.[2] as
      { id: string }[] | undefined;
    await saver.end();
    // A value that does not answer the question changes nothing, and the report says why.
    const refused = finishedOnce("w-ask");
    await queue.enqueueResume("w-ask", { action: "approve" }, interruptId?.[0]?.id);
    expect(await refused).toEqual({
      threadId: "w-ask",
      status: "awaiting_human",
      parked: true,
      error: 'action "approve" is not available here; choose one of: complete, skip, abort',
    });
    const done = finishedOnce("w-ask");
    await queue.enqueueResume("w-ask", { action: "complete", output: {} }, interruptId?.[0]?.id);
    const report = await done;
    expect([report.status, report.parked]).toEqual(["completed", false]);
    expect(calls.filter((c) => c.startsWith("w-ask:"))).toEqual(["w-ask:0", "w-ask:1"]);
    expect(calls.filter((c) => c.startsWith("w-plain:"))).toEqual(["w-plain:0", "w-plain:1", "w-plain:2"]);
    // The same reports went through the queue.
    const fromQueue: string[] = [];
    for (let r = await queue.nextFinished(); r; r = await queue.nextFinished())
      fromQueue.push(`${r.threadId}:${r.status}`);
    expect(fromQueue.sort()).toEqual([
      "w-ask:awaiting_human",
      "w-ask:awaiting_human",
      "w-ask:completed",
      "w-plain:completed",
    ]);
  });

  it("stops a running thread at the next step boundary, then resumes it to the end without repeating a step", async () => {
    let open!: () => void;
    let reached!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    const entered = new Promise<void>((r) => (reached = r));
    gate = { opened, open, entered, reached };
    const stopped = finishedOnce("w-stop");
    await queue.enqueueRun("w-stop", { goal: "gated" });
    await entered; // step s1 is running on the worker
    const locks = await openThreadLocks(pg.url, 1);
    expect(await locks.tryLock("w-stop")).toBeUndefined(); // the worker holds the thread
    await locks.addStopRequest("w-stop", "deploy");
    // s1 finishes only once the worker has heard the stop: s2 must not start (no pause per visit to ask).
    await noticed("w-stop");
    gate.open();
    const report = await stopped;
    expect(report.status).toBe("stopped");
    expect(report.outcome).toMatchObject({
      summary: "Stopped by an operator: deploy. 2 of 5 steps succeeded; resume to carry on.",
      failureReason: "stopped",
      recoverable: true,
    });
    expect(await locks.stopRequest("w-stop")).toBeUndefined();
    await locks.close();

    const done = finishedOnce("w-stop");
    await queue.enqueueResumeStopped("w-stop");
    expect((await done).status).toBe("completed");
    expect(calls.filter((c) => c.startsWith("w-stop:"))).toEqual([
      "w-stop:0",
      "w-stop:1",
      "w-stop:2",
      "w-stop:3",
      "w-stop:4",
    ]);
  });

  it("the command line over PostgreSQL: stop reaches a running thread through its worker, resume and answers go through the queue", async () => {
    const cli = async (...argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await runCli(argv, {
        out: (l) => out.push(l),
        err: (l) => err.push(l),
        now: Date.now,
        sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
      });
      return { code, out, err };
    };
    let open!: () => void;
    let reached!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    const entered = new Promise<void>((r) => (reached = r));
    gate = { opened, open, entered, reached };
    const stopped = finishedOnce("cli-run");
    await queue.enqueueRun("cli-run", { goal: "gated" });
    await entered;
    expect(await cli("stop", pg.url, "cli-run", "--reason", "night")).toEqual({
      code: 0,
      err: [],
      out: ['stop requested: "cli-run" is running on a worker and stops at its next step boundary'],
    });
    await noticed("cli-run");
    gate.open();
    expect((await stopped).status).toBe("stopped");
    expect(await cli("wait", pg.url, "cli-run", "--timeout", "60")).toEqual({
      code: 4,
      err: [],
      out: ["cli-run: stopped — Stopped by an operator: night. 2 of 5 steps succeeded; resume to carry on."],
    });
    const finished = finishedOnce("cli-run");
    expect(await cli("resume", pg.url, "cli-run")).toEqual({
      code: 0,
      err: [],
      out: ['queued: "cli-run" carries on where it stopped (a worker takes it)'],
    });
    expect((await finished).status).toBe("completed");
    expect((await cli("wait", pg.url, "cli-run")).code).toBe(0);

    const asked = finishedOnce("cli-ask");
    await queue.enqueueRun("cli-ask", { goal: "ask" });
    expect((await asked).parked).toBe(true);
    expect(await cli("wait", pg.url, "cli-ask", "--timeout", "60")).toEqual({
      code: 2,
      err: [],
      out: ["cli-ask: awaiting_human — waits for a person (ok?)"],
    });
    // A parked thread holds no worker: the command line stops it itself, and the workers reopen it.
    expect(await cli("stop", pg.url, "cli-ask")).toEqual({
      code: 0,
      err: [],
      out: [`stopped "cli-ask" (it was awaiting_human); carry on with: langgraph-replan resume ${pg.url} cli-ask`],
    });
    const reopened = finishedOnce("cli-ask");
    expect((await cli("resume", pg.url, "cli-ask")).code).toBe(0);
    expect(await reopened).toEqual({ threadId: "cli-ask", status: "awaiting_human", parked: true });
    const answered = finishedOnce("cli-ask");
    expect(await cli("resume", pg.url, "cli-ask", "--value", '{"action":"complete","output":{}}')).toEqual({
      code: 0,
      err: [],
      out: ['queued the answer to "cli-ask" (human_step for step "ask"): a worker carries on'],
    });
    expect((await answered).status).toBe("completed");
    const lines = (await cli("threads", pg.url)).out.filter((l) => l.startsWith("cli-"));
    expect(lines.map((l) => l.split("  ").slice(0, 4).join(" "))).toEqual([
      "cli-ask completed step=- plan=v1",
      "cli-run completed step=- plan=v1",
    ]);
  });
});

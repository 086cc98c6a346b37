/**
 * A plan service whose runs `createWorker` processes drive (docs/decisions/0074-workers-wake-plan-waits.md),
 * on a PostgreSQL started on 127.0.0.1: `plan_create` and `plan_answer` become jobs, a worker in a
 * child process runs them, and `plan_wait` on the service returns the question and then the end
 * because the worker announced the thread (`PLAN_CHANNEL`) — counted here, not timed. A wait that
 * does not hear the announcement runs to its timeout although the plan has ended.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PlanService } from "../../src/mcp/index.js";
import type { PlanWakes } from "../../src/mcp/wakes.js";
import { openPlanWakes, openQueue, type PgPlanWakes, type QueueClient } from "../../src/worker/index.js";
import { startPostgres, type PgServer } from "../../test-reliability/helpers/postgres.js";
import { confirmedDay, weatherGraph } from "../fixtures/workers/weather-graph.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { runMcp } from "../../src/cli/mcp-command.js";
import { connectInMemory, mcpArgs, until, type ToolResult } from "../helpers/mcp.js";

let pg: PgServer;
let dir: string;
let saver: PostgresSaver;
let queue: QueueClient;
let pgWakes: PgPlanWakes;
let worker: ChildProcess | undefined;

/** What the service's wakes heard: each announcement of a watched plan, and whether a wait on it was still open then. */
const heard: { planId: string; waitOpen: boolean }[] = [];
let waitOpen = false;
let watching = 0;

/** The PostgreSQL wakes, counting what wakes a wait. */
const counted = (): PlanWakes => ({
  announce: (planId) => pgWakes.announce(planId),
  watch: (planId, wake) => {
    watching += 1;
    const unwatch = pgWakes.watch(planId, () => {
      heard.push({ planId, waitOpen });
      wake();
    });
    return () => {
      watching -= 1;
      unwatch();
    };
  },
});

/** Wakes that never hear anything: a service on them waits as it would if the worker said nothing. */
let deafWatching = 0;
const deaf: PlanWakes = {
  announce: async () => undefined,
  watch: () => {
    deafWatching += 1;
    return () => void (deafWatching -= 1);
  },
};

async function startWorker(): Promise<ChildProcess> {
  const script = resolve(import.meta.dirname, "../fixtures/workers/worker-process.ts");
  const child = spawn(process.execPath, ["--import", "tsx", script, pg.url], {
    env: { ...process.env, MCP_TEST_DIR: dir },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let err = "";
  child.stderr!.on("data", (chunk: Buffer) => (err += chunk.toString()));
  await new Promise<void>((ready, failed) => {
    child.stdout!.on("data", (chunk: Buffer) => chunk.toString().includes("ready") && ready());
    child.once("exit", (code) => failed(new Error(`worker exited ${code}: ${err}`)));
  });
  return child;
}

beforeAll(async () => {
  pg = await startPostgres();
  dir = mkdtempSync(join(tmpdir(), "mcp-workers-"));
  saver = PostgresSaver.fromConnString(pg.url);
  // The tables and the queue first: the worker then finds them made.
  await saver.setup();
  queue = await openQueue(pg.url);
  pgWakes = await openPlanWakes(pg.url);
  worker = await startWorker();
}, 120_000);

afterAll(async () => {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((r) => worker!.once("exit", r));
    worker.kill("SIGTERM");
    await exited;
  }
  await pgWakes?.close();
  await queue?.close();
  await saver?.end();
  pg?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

function service(wakes: PlanWakes) {
  return new PlanService({
    graphs: { weather: weatherGraph().compile({ checkpointer: saver }) },
    saver,
    wakes,
    workers: queue,
    server: { name: "langgraph-replan", version: "test" },
  });
}

describe("plan_wait on a service whose runs workers drive (PostgreSQL)", () => {
  it("a worker in another process runs the plan; plan_wait returns its question, then its end, woken by the worker's NOTIFY", async () => {
    const served = service(counted());
    const { call, close } = await connectInMemory(served);
    const created = await call("plan_create", { goal: "a day out", plan: confirmedDay });
    const planId = created.structuredContent.plan_id as string;
    expect(created.structuredContent).toMatchObject({ status: "running", created: true });
    // The run is the worker's: it reached the first tool in its own process; this one runs nothing.
    await until(join(dir, "forecast.reached"));
    expect(readFileSync(join(dir, "forecast.reached"), "utf8")).toBe(String(worker!.pid));
    expect((await served.status(planId)).server).toEqual({ live: true });

    waitOpen = true;
    const asking = call("plan_wait", { plan_id: planId, timeout_s: 30 }).finally(() => (waitOpen = false));
    await untilTrue(() => watching === 1);
    writeFileSync(join(dir, "forecast.gate"), "");
    const asked = await asking;
    expect(asked.structuredContent).toMatchObject({
      plan_id: planId,
      status: "awaiting_human",
      timed_out: false,
      question: { kind: "human_step", stepId: "confirm" },
      progress: { done: 1, total: 3 },
    });
    // One announcement, heard while the wait was open: that, not its 30 s timeout, ended it.
    expect(heard).toEqual([{ planId, waitOpen: true }]);

    expect(
      (await call("plan_answer", { plan_id: planId, answer: { action: "complete", output: { by: "me" } } }))
        .structuredContent,
    ).toEqual({ plan_id: planId, status: "running" });
    // The answer is a job too: until the worker has moved the checkpoint, the plan reads as running.
    expect((await served.status(planId)).status).toBe("running");
    await until(join(dir, "planDay.reached"));
    expect(readFileSync(join(dir, "planDay.reached"), "utf8")).toBe(String(worker!.pid));

    // A second service on the same database whose wakes hear nothing: its wait has only its timeout.
    const unwoken = service(deaf).wait(planId, 3);
    waitOpen = true;
    const ending = call("plan_wait", { plan_id: planId, timeout_s: 30 }).finally(() => (waitOpen = false));
    await untilTrue(() => watching === 1 && deafWatching === 1);
    writeFileSync(join(dir, "planDay.gate"), "");
    const ended = await ending;
    expect(ended.structuredContent).toMatchObject({ plan_id: planId, status: "completed", timed_out: false });
    expect(ended.structuredContent.steps.map((s: { id: string; status: string }) => [s.id, s.status])).toEqual([
      ["fetch", "succeeded"],
      ["confirm", "succeeded"],
      ["plan", "succeeded"],
    ]);
    expect(heard).toEqual([
      { planId, waitOpen: true },
      { planId, waitOpen: true },
    ]);
    // The same plan, ended by then, and the wait that heard nothing ran out its timeout.
    expect(await unwoken).toMatchObject({ plan_id: planId, status: "completed", timed_out: true });
    await close();
  }, 120_000);

  it("plan_stop leaves the worker's run a stop request, taken at its next step boundary and heard by plan_wait; plan_resume hands it back", async () => {
    clearMarks();
    heard.length = 0;
    const served = service(counted());
    const { call, close } = await connectInMemory(served);
    const planId = (await call("plan_create", { goal: "a day we stop", plan: confirmedDay })).structuredContent
      .plan_id as string;
    await until(join(dir, "forecast.reached"));
    // The worker holds the thread: the stop is a request, and the plan runs on until its step ends.
    const stopping = await call("plan_stop", { plan_id: planId, reason: "not today" });
    expect(stopping.structuredContent).toMatchObject({ plan_id: planId, status: "running", server: { live: true } });

    waitOpen = true;
    const waiting = call("plan_wait", { plan_id: planId, timeout_s: 30 }).finally(() => (waitOpen = false));
    await untilTrue(() => watching === 1);
    writeFileSync(join(dir, "forecast.gate"), "");
    expect((await waiting).structuredContent).toMatchObject({
      plan_id: planId,
      status: "stopped",
      timed_out: false,
      progress: { done: 1, total: 3 },
    });
    expect(heard).toEqual([{ planId, waitOpen: true }]);

    // A resume is a job: the worker reopens the plan and runs it to its question.
    expect((await call("plan_resume", { plan_id: planId })).structuredContent).toEqual({
      plan_id: planId,
      status: "running",
    });
    expect((await call("plan_wait", { plan_id: planId, timeout_s: 30 })).structuredContent).toMatchObject({
      status: "awaiting_human",
      timed_out: false,
      question: { kind: "human_step", stepId: "confirm" },
    });
    // Parked, no worker holds it: the service stops it in its checkpoint at once.
    expect((await call("plan_stop", { plan_id: planId })).structuredContent).toMatchObject({
      plan_id: planId,
      status: "stopped",
    });
    await close();
  }, 120_000);

  it("a plan whose job waits in the queue is not deleted, and its status does not call it a cut run", async () => {
    // A queue no worker takes from: the create's job waits there.
    const jobs: string[] = [];
    const waiting = {
      enqueueRun: async (threadId: string) => (jobs.push(`run ${threadId}`), "job-1"),
      enqueueResume: async () => "job-2",
      enqueueResumeStopped: async () => "job-3",
      requestStop: async () => true,
    };
    const served = new PlanService({
      graphs: { weather: weatherGraph().compile({ checkpointer: saver }) },
      saver,
      wakes: deaf,
      workers: waiting,
    });
    const { plan_id: planId } = await served.create({ goal: "a queued day", plan: confirmedDay } as never);
    expect(jobs).toEqual([`run ${planId}`]);
    const status = await served.status(planId);
    expect(status.status).toBe("running");
    // Not "never started: plan_delete it and create it again": a worker will take it.
    expect(status.message).toBeUndefined();
    expect(status.server).toEqual({ live: false });
    await expect(served.delete(planId)).rejects.toMatchObject({ code: "thread_busy" });
    expect((await served.status(planId)).status).toBe("running");
  });

  it("is refused without wakes: nothing would wake plan_wait for the workers' runs", () => {
    expect(
      () =>
        new PlanService({
          graphs: { weather: weatherGraph().compile({ checkpointer: saver }) },
          saver,
          workers: queue,
        }),
    ).toThrow(expect.objectContaining({ code: "invalid_options", path: "wakes" }));
  });
});

function clearMarks(): void {
  for (const mark of ["forecast.reached", "forecast.gate", "planDay.reached", "planDay.gate"])
    rmSync(join(dir, mark), { force: true });
}

describe("langgraph-replan mcp --workers", () => {
  it("over stdio on PostgreSQL: the worker process runs what plan_create and plan_answer hand it; plan_wait returns the question, then the end", async () => {
    clearMarks();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: mcpArgs(pg.url, "test/fixtures/workers/langgraph.json", "--workers"),
      env: { PATH: process.env.PATH ?? "", LANGGRAPH_CLI_NO_ANALYTICS: "1" },
      stderr: "pipe",
    });
    const client = new Client({ name: "test-agent", version: "1" });
    await client.connect(transport);
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args })) as ToolResult;
    try {
      const planId = (await call("plan_create", { goal: "a day from stdio", plan: confirmedDay })).structuredContent
        .plan_id as string;
      await until(join(dir, "forecast.reached"));
      expect(readFileSync(join(dir, "forecast.reached"), "utf8")).toBe(String(worker!.pid));
      writeFileSync(join(dir, "forecast.gate"), "");
      expect((await call("plan_wait", { plan_id: planId, timeout_s: 30 })).structuredContent).toMatchObject({
        status: "awaiting_human",
        timed_out: false,
        question: { kind: "human_step", stepId: "confirm" },
      });
      await call("plan_answer", { plan_id: planId, answer: { action: "complete", output: { by: "me" } } });
      await until(join(dir, "planDay.reached"));
      expect(readFileSync(join(dir, "planDay.reached"), "utf8")).toBe(String(worker!.pid));
      writeFileSync(join(dir, "planDay.gate"), "");
      expect((await call("plan_wait", { plan_id: planId, timeout_s: 30 })).structuredContent).toMatchObject({
        status: "completed",
        timed_out: false,
        progress: { done: 3, total: 3 },
      });
    } finally {
      await client.close();
    }
  }, 300_000);

  it("is refused on a SQLite file before anything opens", async () => {
    const db = join(dir, "plans.sqlite");
    const io = { out: () => undefined, err: () => undefined, now: () => 0, sleep: async () => undefined };
    await expect(runMcp(["--workers", "--db", db], io)).rejects.toThrow(
      "--workers needs a postgresql:// --db: the workers' queue and their announcements are there",
    );
    expect(existsSync(db)).toBe(false);
  });
});

async function untilTrue(ready: () => boolean): Promise<void> {
  while (!ready()) await new Promise((r) => setTimeout(r, 10));
}

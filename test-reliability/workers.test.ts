/**
 * Many workers on one PostgreSQL (docs/architecture.md "What runs where"): 3 worker processes take 60 enqueued threads
 * (retries, replans, human steps, a side effect per thread); one process SIGKILLs itself in the
 * middle of a tool call. Every thread must end exactly as an uninterrupted run of its scenario,
 * no two tool calls of one thread may overlap in time (one worker per thread), and every side
 * effect must be committed once.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Command, MemorySaver, type StateSnapshot } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPlanManager } from "../src/index.js";
import { openQueue } from "../src/worker/index.js";
import { startPostgres, type PgServer } from "./helpers/postgres.js";
import { chaosTools, effectStore, SCENARIOS } from "./scenarios.js";
import { scenarioPlanner, WORKER_SCENARIOS } from "./workers-process.js";

const script = resolve(import.meta.dirname, "workers-process.ts");
const dir = mkdtempSync(join(tmpdir(), "workers-"));
const THREADS_PER_SCENARIO = 12;
let pg: PgServer;
const children: ChildProcess[] = [];

beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);
afterAll(() => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const scenarioOf = (thread: string) => SCENARIOS[thread.split("-")[0]!]!();
const questionOf = (s: StateSnapshot) =>
  s.tasks.flatMap((t) => t.interrupts)[0] as { id: string; value: { kind: string; stepId?: string } } | undefined;

/** What must be equal between a run under workers and an uninterrupted one. */
function summary(values: Record<string, any>) {
  return {
    status: values.status,
    facts: Object.fromEntries(
      Object.entries(values.facts ?? {}).map(([k, f]: [string, any]) => [k, { value: f.value, label: f.label }]),
    ),
    // A call the killed worker left in doubt goes out again under its key (these tools honour keys), and a
    // decision says so (docs/decisions/0038-effect-journal.md): the one trace a kill may leave.
    decisions: (values.decisions ?? [])
      .map((d: any) => `${d.stepId ?? "-"}:${d.action}:${d.rule}`)
      .filter((d: string) => !d.endsWith(":retry:effect.recalled")),
    steps: Object.fromEntries(Object.entries(values.steps ?? {}).map(([k, s]: [string, any]) => [k, s.status])),
    planVersion: values.plan?.version,
    sideEffects: (values.sideEffects ?? []).map((e: any) => e.stepId),
  };
}

/** Each scenario run once, uninterrupted, in this process. */
async function references() {
  const effects = effectStore(join(dir, "reference-effects.sqlite"));
  const graph = createPlanManager({ tools: chaosTools(effects, 0), planner: scenarioPlanner() }).compile({
    checkpointer: new MemorySaver(),
  });
  const out = new Map<string, ReturnType<typeof summary>>();
  for (const name of WORKER_SCENARIOS) {
    const scenario = SCENARIOS[name]!();
    const config = { configurable: { thread_id: `${name}-reference` } };
    await graph.invoke({ goal: scenario.goal, context: scenario.context }, config);
    for (
      let s = await graph.getState(config), q = questionOf(s);
      q;
      s = await graph.getState(config), q = questionOf(s)
    )
      await graph.invoke(new Command({ resume: scenario.answer(q.value) }), config);
    out.set(name, summary((await graph.getState(config)).values));
  }
  effects.db.close();
  return out;
}

let errors = "";

function startWorker(effectsFile: string, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, ["--import", "tsx", script, pg.url, effectsFile, "4"], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const exited = new Promise<{ signal: string | null; at: number }>((ok) =>
    child.on("exit", (_code, signal) => ok({ signal, at: performance.timeOrigin + performance.now() })),
  );
  const ready = new Promise<void>((ok, fail) => {
    child.stdout!.on("data", (d) => String(d).includes("ready") && ok());
    child.on("exit", (code, signal) => fail(new Error(`worker exited before it was ready: ${code ?? signal}`)));
  });
  child.stderr!.on("data", (d) => (errors += String(d)));
  return { child, exited, ready };
}

describe("workers on PostgreSQL", () => {
  it("3 processes, 60 threads, one process killed mid-run: every thread ends as uninterrupted, no overlap, no duplicate effect", async () => {
    const expected = await references();
    const effectsFile = join(dir, "effects.sqlite");
    effectStore(effectsFile).db.close();
    const queue = await openQueue(pg.url, { leaseSeconds: 6 });
    const threads = WORKER_SCENARIOS.flatMap((name) =>
      Array.from({ length: THREADS_PER_SCENARIO }, (_, i) => `${name}-${i}`),
    );
    for (const thread of threads) {
      const scenario = scenarioOf(thread);
      await queue.enqueueRun(thread, { goal: scenario.goal, context: scenario.context });
    }
    const victim = startWorker(effectsFile, { KILL_AT_TOOL: "60" });
    const others = [startWorker(effectsFile), startWorker(effectsFile)];
    await Promise.all([victim.ready, ...others.map((w) => w.ready)]);

    const saver = PostgresSaver.fromConnString(pg.url);
    const reader = createPlanManager({ tools: [], planner: scenarioPlanner() }).compile({ checkpointer: saver });
    const finished = new Map<string, ReturnType<typeof summary>>();
    const answered = new Set<string>();
    const giveUp = Date.now() + 400_000;
    while (finished.size < threads.length && Date.now() < giveUp) {
      const report = await queue.nextFinished();
      if (!report) {
        await sleep(100);
        continue;
      }
      const config = { configurable: { thread_id: report.threadId } };
      const snapshot = await reader.getState(config);
      const question = questionOf(snapshot);
      if (question && !answered.has(question.id)) {
        answered.add(question.id);
        await queue.enqueueResume(report.threadId, scenarioOf(report.threadId).answer(question.value), question.id);
      } else if (!question && snapshot.tasks.length === 0) finished.set(report.threadId, summary(snapshot.values));
    }
    const wrong = threads.filter(
      (t) => JSON.stringify(finished.get(t)) !== JSON.stringify(expected.get(t.split("-")[0]!)),
    );
    const pgc = new (await import("pg")).default.Client({ connectionString: pg.url });
    await pgc.connect();
    for (const t of wrong) {
      const jobs = await pgc.query(
        "SELECT data->>'kind' AS kind, state, retry_count, output::text AS output FROM pgboss.job WHERE data->>'threadId' = $1 ORDER BY created_on",
        [t],
      );
      for (const j of jobs.rows) process.stdout.write(`JOB ${t} ${j.kind} ${j.state} ${j.retry_count} ${j.output}\n`);
      for await (const h of reader.getStateHistory({ configurable: { thread_id: t } }))
        process.stdout.write(
          `DEBUG ${t} step=${h.metadata?.step} src=${h.metadata?.source} next=${h.next} status=${(h.values as any).status} writes=${Object.keys(h.metadata?.writes ?? {})}\n`,
        );
    }
    if (finished.size < threads.length) process.stdout.write(`worker stderr:\n${errors}\n`);
    await pgc.end();
    const death = await victim.exited;
    for (const w of others) w.child.kill("SIGTERM");
    await Promise.all(others.map((w) => w.exited));
    await queue.close();
    await saver.end();

    expect(death.signal).toBe("SIGKILL");
    expect([...finished.keys()].sort()).toEqual([...threads].sort());
    for (const thread of threads)
      expect([thread, finished.get(thread)]).toEqual([thread, expected.get(thread.split("-")[0]!)]);

    const db = new Database(effectsFile, { readonly: true });
    const spans = db.prepare("SELECT thread, pid, tool, start, end FROM spans ORDER BY thread, start").all() as {
      thread: string;
      pid: number;
      start: number;
      end: number;
    }[];
    const overlaps: string[] = [];
    for (let i = 1; i < spans.length; i++) {
      const [a, b] = [spans[i - 1]!, spans[i]!];
      if (a.thread === b.thread && b.start < a.end) overlaps.push(`${a.thread}: ${a.pid}/${b.pid}`);
    }
    expect(overlaps).toEqual([]);
    // Every effect once, and the same ones as the uninterrupted runs: one per thread that commits one.
    const effects = db.prepare("SELECT key, what, commits FROM effects").all() as { key: string; commits: number }[];
    const committing = threads.filter((t) => expected.get(t.split("-")[0]!)!.sideEffects.length > 0);
    expect(effects.filter((e) => e.commits !== 1)).toEqual([]);
    expect(effects.map((e) => e.key.split(":")[0]).sort()).toEqual(committing.sort());
    const resent = db.prepare("SELECT key, COUNT(*) AS n FROM calls GROUP BY key HAVING n > 1").all();

    // Figures for the record: which threads the dead process held, and how long they waited.
    const pids = new Set(spans.map((s) => s.pid));
    const victimPid = victim.child.pid!;
    // Threads whose last tool call before the death was the victim's, and that ran again elsewhere.
    const orphaned = threads.filter((t) => {
      const before = spans.filter((s) => s.thread === t && s.start < death.at).at(-1);
      return before?.pid === victimPid && spans.some((s) => s.thread === t && s.start > death.at);
    });
    const restarts = orphaned.map(
      (t) => Math.min(...spans.filter((s) => s.thread === t && s.start > death.at).map((s) => s.start)) - death.at,
    );
    process.stdout.write(
      `workers: ${pids.size} processes, ${spans.length} tool calls; ${orphaned.length} threads last ran on the victim; ` +
        `death → their next tool call: ${restarts.map((r) => (r / 1000).toFixed(1)).join(", ")} s; ` +
        `effects ${effects.length}, re-sent with the same key ${resent.length}, overlaps ${overlaps.length}\n`,
    );
    expect(pids.size).toBe(3);
    expect(orphaned.length).toBeGreaterThan(0);
    db.close();
  }, 600_000);
});

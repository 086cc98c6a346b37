/**
 * Effects chaos (docs/decisions/0038-effect-journal.md, 0039-compensation.md): side-effecting tools
 * that do NOT honour idempotency keys (effects-scenario.ts), their processes SIGKILLed at seeded
 * moments — before the effect, after it but before the tool returns, between the return and the
 * checkpoint, inside checkpoint writes, at random times — and resumed in fresh processes. Every call
 * cut by a kill is settled exactly once, by the step's verify probe or by an `effect.in-doubt` question
 * the test answers from the tool's own table; no message is sent twice, none is lost. The same with
 * two workers on one PostgreSQL, and an undo killed mid-way runs once.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { createPlanManager, staticPlanner } from "../src/index.js";
import { openQueue } from "../src/worker/index.js";
import { startPostgres, type PgServer } from "./helpers/postgres.js";
import { answerFor, effectsDb, MESSAGES, questionOf, sendPlan, VERIFIED, type Question } from "./effects-scenario.js";

const worker = resolve(import.meta.dirname, "effects-chaos-worker.ts");
const pgWorker = resolve(import.meta.dirname, "effects-chaos-pg-worker.ts");
const dir = mkdtempSync(join(tmpdir(), "effects-chaos-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Out {
  status: string;
  rules: string[];
  compensations: string[];
}

/** A question a worker met and answered (effects-scenario.ts `answerAndRecord`). */
interface Asked {
  id: number;
  kind: string;
  rule: string | null;
  step: string | null;
  key: string | null;
  answer: string;
}

const questions = (fx: Database.Database, thread: string) =>
  fx.prepare("SELECT * FROM questions WHERE thread = ? ORDER BY id").all(thread) as Asked[];

function run(args: string[], env: Record<string, string>, killAfterMs?: number) {
  const started = performance.now();
  return new Promise<{ signal: string | null; out: string; err: string }>((ok) => {
    const child = spawn(process.execPath, ["--import", "tsx", worker, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += String(d)));
    child.stderr.on("data", (d) => (err += String(d)));
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.on("exit", (_code, signal) => {
      clearTimeout(timer);
      processMs.push(performance.now() - started);
      ok({ signal, out, err });
    });
  });
}

/** Each worker process's wall time, for the summary line (the machine's load shows in it). */
const processMs: number[] = [];
const meanSeconds = () => (processMs.reduce((a, b) => a + b, 0) / Math.max(1, processMs.length) / 1000).toFixed(1);

const parse = (out: string) => JSON.parse(out.trim().split("\n").pop()!) as Out;

function seeded(seed: number) {
  let x = seed;
  return () => (x = (x * 48271) % 2147483647) / 2147483647;
}

async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<void>) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
    }),
  );
}

/** The journal's entries for a thread, read from the checkpoint file: those with no result are in doubt. */
function journal(file: string, thread: string) {
  if (!existsSync(file)) return [];
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const exists = db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'langgraph_replan_effects'").get();
    if (!exists) return [];
    return db
      .prepare("SELECT key, at, result IS NULL AS doubt FROM langgraph_replan_effects WHERE thread_id = ?")
      .all(thread) as { key: string; at: string; doubt: number }[];
  } finally {
    db.close();
  }
}

/** A call cut by a kill: its intent, and where the probes and the questions stood when it was seen. */
interface Cut {
  key: string;
  at: string;
  probeMark: number;
  askMark: number;
}

const KILLS = ["before", "after", "return", "checkpoint", "time"] as const;
type KillKind = (typeof KILLS)[number];

describe("effects chaos on SQLite: tools that do not honour keys", () => {
  it("≥ 50 kills, many inside the call: every cut call settled once (verified or asked), 0 duplicates, 0 lost", async () => {
    const random = seeded(20261128);
    const tally = {
      kills: 0,
      inCall: 0,
      cuts: 0,
      byKind: Object.fromEntries(KILLS.map((k) => [k, 0])) as Record<KillKind, number>,
      finishedBeforeKill: 0,
      verified: 0,
      probedNotHappened: 0,
      asked: 0,
      answeredHappened: 0,
      answeredRetry: 0,
      duplicates: 0,
      lost: 0,
      processes: 0,
    };
    const failures: string[] = [];
    const TRIALS = 12;
    const KILLS_PER_TRIAL = 5;
    // Drawn up front, so the seed alone decides every kill point whatever order the pool runs them in.
    const plans = Array.from({ length: TRIALS }, (_, id) => ({
      id,
      kills: Array.from({ length: KILLS_PER_TRIAL }, () => {
        const r = random();
        const kind: KillKind =
          r < 0.3 ? "before" : r < 0.6 ? "after" : r < 0.82 ? "return" : r < 0.92 ? "checkpoint" : "time";
        const n = random() < 0.75 ? 1 : 2;
        return kind === "time"
          ? { kind, env: {} as Record<string, string>, delay: 1500 + Math.floor(random() * 2000) }
          : { kind, env: { KILL: kind === "checkpoint" ? `checkpoint:${2 + n}` : `${kind}:${n}` } };
      }),
    }));
    await pool(plans, 2, async ({ id, kills }) => {
      const thread = `fx-${id}`;
      const db = join(dir, `${thread}.sqlite`);
      const fxFile = join(dir, `${thread}-fx.sqlite`);
      const fx = effectsDb(fxFile);
      const cuts = new Map<string, Cut>();
      let last: Out | undefined;
      // A kill is spent when it lands; the worker answers the questions it meets and carries on.
      for (let round = 0, k = 0; round < 40; round++) {
        const kill = kills[k];
        const r = await run(
          [db, fxFile, thread, "send"],
          kill?.env ?? {},
          kill?.kind === "time" ? kill.delay : undefined,
        );
        tally.processes += 1;
        if (r.signal === "SIGKILL") {
          k += 1;
          tally.kills += 1;
          tally.byKind[kill!.kind] += 1;
          const probeMark = (fx.prepare("SELECT COALESCE(MAX(id), 0) AS n FROM probes").get() as { n: number }).n;
          const askMark = questions(fx, thread).at(-1)?.id ?? 0;
          let inCall = false;
          for (const e of journal(db, thread).filter((e) => e.doubt)) {
            if (cuts.has(`${e.key}@${e.at}`)) continue;
            cuts.set(`${e.key}@${e.at}`, { key: e.key, at: e.at, probeMark, askMark });
            inCall = true;
            tally.cuts += 1;
          }
          if (inCall) tally.inCall += 1;
          continue;
        }
        if (!r.out.trim()) failures.push(`${thread}: a process ended without a line: ${r.err.slice(-400)}`);
        else last = parse(r.out);
        tally.finishedBeforeKill += kills.length - k;
        break;
      }
      const asked = questions(fx, thread);
      tally.answeredHappened += asked.filter((q) => q.answer === "happened").length;
      tally.answeredRetry += asked.filter((q) => q.answer === "retry").length;
      // Every cut call settled by exactly one of: the verify probe, a question.
      for (const cut of cuts.values()) {
        const probes = fx
          .prepare("SELECT happened FROM probes WHERE thread = ? AND key = ? AND id > ? ORDER BY id")
          .all(thread, cut.key, cut.probeMark) as { happened: number }[];
        const about = asked.filter((q) => q.id > cut.askMark && q.key === cut.key);
        if (probes.length > 0 === about.length > 0)
          failures.push(
            `${thread}: cut ${cut.key} settled by ${probes.length} probe(s) and ${about.length} question(s)`,
          );
        else if (probes.length > 0) {
          if (probes[0]!.happened) tally.verified += 1;
          else tally.probedNotHappened += 1;
        } else tally.asked += 1;
      }
      const count = sentCounts(fx, thread);
      tally.duplicates += MESSAGES.filter((m) => (count.get(m) ?? 0) > 1).length;
      tally.lost += MESSAGES.filter((m) => (count.get(m) ?? 0) === 0).length;
      // A step with a verify probe is never asked about.
      for (const q of asked)
        if (q.step && VERIFIED.has(q.step.replace("send_", ""))) failures.push(`${thread}: asked about ${q.step}`);
      if (last?.status !== "completed") failures.push(`${thread}: ended ${last?.status} (${last?.rules.join(", ")})`);
      if (journal(db, thread).some((e) => e.doubt)) failures.push(`${thread}: a call is still in doubt at the end`);
      fx.close();
    });
    console.log(
      `effects chaos (SQLite): ${tally.kills} kills (${tally.byKind.before} before the effect, ${tally.byKind.after} after it, ` +
        `${tally.byKind.return} after the return, ${tally.byKind.checkpoint} in checkpoint writes, ${tally.byKind.time} at random times), ` +
        `${tally.inCall} inside the call window (${tally.cuts} calls cut); settled: ${tally.verified} verified, ` +
        `${tally.probedNotHappened} probed not-happened and sent once, ${tally.asked} asked ` +
        `(answered ${tally.answeredHappened} happened, ${tally.answeredRetry} retry); ${tally.duplicates} duplicates, ` +
        `${tally.lost} lost; ${TRIALS} threads, ${tally.processes} processes (${meanSeconds()} s each on average), ${tally.finishedBeforeKill} kill points not reached`,
    );
    expect(failures).toEqual([]);
    expect(tally.duplicates).toBe(0);
    expect(tally.lost).toBe(0);
    expect(tally.kills).toBeGreaterThanOrEqual(50);
    expect(tally.inCall).toBeGreaterThanOrEqual(25);
    expect(tally.verified + tally.probedNotHappened + tally.asked).toBe(tally.cuts);
    expect(tally.verified).toBeGreaterThan(0);
    expect(tally.probedNotHappened).toBeGreaterThan(0);
    expect(tally.asked).toBeGreaterThan(0);
  }, 900_000);

  it("an undo killed mid-way runs once: a person's abort compensates the booking, the process dies in the undo", async () => {
    const outcomes: string[] = [];
    let kills = 0;
    const TRIALS = ["undo-before:1", "undo-after:1"];
    await pool(
      TRIALS.map((kill, id) => ({ kill, id })),
      2,
      async ({ kill, id }) => {
        const thread = `undo-${id}`;
        const db = join(dir, `${thread}.sqlite`);
        const fxFile = join(dir, `${thread}-fx.sqlite`);
        const fx = effectsDb(fxFile);
        // The first process books, is told to abort, and dies inside the undo; a fresh one carries on.
        const first = await run([db, fxFile, thread, "booking"], { KILL: kill });
        if (first.signal === "SIGKILL") kills += 1;
        const last = parse((await run([db, fxFile, thread, "booking"], {})).out);
        const asked = questions(fx, thread).map((q) => `${q.kind}:${q.rule ?? "-"}:${q.answer}`);
        const undos = (fx.prepare("SELECT COUNT(*) AS n FROM undos WHERE thread = ?").get(thread) as { n: number }).n;
        const sends = (fx.prepare("SELECT COUNT(*) AS n FROM sends WHERE thread = ?").get(thread) as { n: number }).n;
        outcomes.push(
          `${kill}: ${last?.status} asked [${asked.join(", ")}] compensations [${last?.compensations.join(", ")}] undos ${undos} sends ${sends}`,
        );
        fx.close();
      },
    );
    console.log(`effects chaos (undo): ${kills} kills inside the undo; ${outcomes.sort().join("; ")}`);
    expect(kills).toBe(TRIALS.length);
    // Killed before the undo's effect: asked, answered retry, undone once. After it: asked, left as it is (skip).
    expect(outcomes.sort()).toEqual([
      "undo-after:1: aborted asked [human_step:-:abort, escalation:compensate.failed:skip] compensations [book:waived] undos 1 sends 1",
      "undo-before:1: aborted asked [human_step:-:abort, escalation:compensate.failed:retry] compensations [book:done] undos 1 sends 1",
    ]);
  }, 600_000);
});

describe("effects chaos on PostgreSQL: two workers, one killed inside a call", () => {
  let pg: PgServer | undefined;
  const children: ChildProcess[] = [];
  afterAll(() => {
    for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    pg?.stop();
  });

  function startWorker(fxFile: string, env: Record<string, string>) {
    const child = spawn(process.execPath, ["--import", "tsx", pgWorker, pg!.url, fxFile], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    const exited = new Promise<string | null>((ok) => child.on("exit", (_code, signal) => ok(signal)));
    const ready = new Promise<void>((ok, fail) => {
      child.stdout!.on("data", (d) => String(d).includes("ready") && ok());
      child.on("exit", (code, signal) => fail(new Error(`worker exited before it was ready: ${code ?? signal}`)));
    });
    child.stderr!.on("data", () => undefined);
    return { child, exited, ready };
  }

  it("the other worker takes the thread up after the lease; the call in doubt is settled, never made twice", async () => {
    pg = await startPostgres();
    const fxFile = join(dir, "pg-fx.sqlite");
    const fx = effectsDb(fxFile);
    const queue = await openQueue(pg.url, { leaseSeconds: 4 });
    const threads = ["pg-0", "pg-1", "pg-2", "pg-3"];
    for (const thread of threads) await queue.enqueueRun(thread, { goal: "chaos send", context: {} });
    // The victim dies inside its third send, after the message went out and before the call answered.
    const victim = startWorker(fxFile, { KILL: "after:3" });
    await victim.ready;
    const survivor = startWorker(fxFile, {});
    await survivor.ready;
    const pgc = new (await import("pg")).default.Client({ connectionString: pg.url });
    await pgc.connect();
    let cuts: { thread: string; key: string }[] = [];
    void victim.exited.then(async () => {
      const rows = await pgc.query(
        "SELECT thread_id, key FROM langgraph_replan_effects WHERE result IS NULL ORDER BY thread_id",
      );
      cuts = rows.rows.map((r) => ({ thread: r.thread_id as string, key: r.key as string }));
    });
    const saver = PostgresSaver.fromConnString(pg.url);
    const reader = createPlanManager({ tools: [], planner: staticPlanner({ plan: sendPlan() }) }).compile({
      checkpointer: saver,
    });
    const asked: (Question & { thread: string })[] = [];
    const finished = new Map<string, string>();
    const answered = new Set<string>();
    const giveUp = Date.now() + 240_000;
    while (finished.size < threads.length && Date.now() < giveUp) {
      const report = await queue.nextFinished();
      if (!report) {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      const snapshot = await reader.getState({ configurable: { thread_id: report.threadId } });
      const interrupt = snapshot.tasks.flatMap((t) => t.interrupts)[0];
      const question = questionOf(interrupt?.value as Record<string, any> | undefined, interrupt?.id);
      if (question && !answered.has(question.id!)) {
        answered.add(question.id!);
        asked.push({ ...question, thread: report.threadId });
        await queue.enqueueResume(report.threadId, answerFor(fx, report.threadId, question) as never, question.id);
      } else if (!question && snapshot.tasks.length === 0)
        finished.set(report.threadId, (snapshot.values as { status: string }).status);
    }
    const death = await victim.exited;
    survivor.child.kill("SIGTERM");
    await survivor.exited;
    const probes = fx.prepare("SELECT thread, key, happened FROM probes").all() as {
      thread: string;
      key: string;
      happened: number;
    }[];
    const settled = cuts.map((c) => {
      const probed = probes.filter((p) => p.thread === c.thread && p.key === c.key);
      const questions = asked.filter((q) => q.thread === c.thread && q.key === c.key);
      return probed.length > 0 === questions.length > 0
        ? `${c.thread}: ${probed.length} probe(s), ${questions.length} question(s)`
        : probed.length > 0
          ? `${c.thread}: ${probed[0]!.happened ? "verified" : "probed not-happened"}`
          : `${c.thread}: asked`;
    });
    const workers = fx.prepare("SELECT DISTINCT pid FROM sends").all().length;
    // The thread the victim was cut in went on in the survivor.
    const takenUp = cuts.filter(
      (c) =>
        (fx.prepare("SELECT COUNT(DISTINCT pid) AS n FROM sends WHERE thread = ?").get(c.thread) as { n: number }).n ===
        2,
    ).length;
    const duplicates = threads.flatMap((t) => MESSAGES.filter((m) => (sentCounts(fx, t).get(m) ?? 0) > 1));
    const lost = threads.flatMap((t) => MESSAGES.filter((m) => (sentCounts(fx, t).get(m) ?? 0) === 0));
    console.log(
      `effects chaos (PostgreSQL): 2 workers (${workers} of them sent), 1 killed inside a call; ${cuts.length} call(s) in doubt, ` +
        `${takenUp} thread(s) taken up by the other worker; ` +
        `settled: ${settled.join("; ")}; ${asked.length} question(s); ${duplicates.length} duplicates, ${lost.length} lost`,
    );
    await pgc.end();
    await queue.close();
    await saver.end();
    fx.close();
    expect(death).toBe("SIGKILL");
    expect([...finished.entries()].sort()).toEqual(threads.map((t) => [t, "completed"]));
    // The victim runs two threads at once: the one it died in, and maybe another call in flight.
    expect(cuts.length).toBeGreaterThanOrEqual(1);
    expect(settled.filter((s) => /probe\(s\)/.test(s))).toEqual([]);
    expect(duplicates).toEqual([]);
    expect(lost).toEqual([]);
    expect(workers).toBe(2);
    expect(takenUp).toBe(cuts.length);
  }, 600_000);
});

function sentCounts(fx: Database.Database, thread: string): Map<string, number> {
  const rows = fx.prepare("SELECT msg, COUNT(*) AS n FROM sends WHERE thread = ? GROUP BY msg").all(thread) as {
    msg: string;
    n: number;
  }[];
  return new Map(rows.map((r) => [r.msg, r.n]));
}

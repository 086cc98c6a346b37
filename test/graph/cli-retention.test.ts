/**
 * The command line's thread retention (src/cli/retention-commands.ts) over a SQLite file and a
 * PostgreSQL database: exact output and exit codes for `threads` paging and archive filters,
 * `archive`, `unarchive`, `delete` and `prune`, and the refusals — a thread another connection
 * holds, a bad duration, an unknown status.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { emptyCheckpoint, type BaseCheckpointSaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { Client } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../../src/cli/commands.js";
import { saverAdapter, type ThreadClaim } from "../../src/storage/index.js";
import { startPostgres, type PgServer } from "../../test-reliability/helpers/postgres.js";

let pgServer: PgServer;
const dir = mkdtempSync(join(tmpdir(), "cli-retention-"));
const closers: (() => Promise<void> | void)[] = [];
beforeAll(async () => {
  pgServer = await startPostgres();
}, 120_000);
afterAll(async () => {
  for (const close of closers) await close();
  pgServer?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 60_000);

const DAY = 86_400_000;
const NOW = Date.parse("2026-06-01T00:00:00.000Z");
const daysAgo = (n: number) => new Date(NOW - n * DAY).toISOString();

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

let n = 0;
/** A fresh checkpoint store: its CLI target, and a saver of our own on it (another connection). */
const backends: Record<string, () => Promise<{ where: string; open(): Promise<BaseCheckpointSaver> }>> = {
  SQLite: async () => {
    const where = join(dir, `checkpoints-${(n += 1)}.sqlite`);
    const open = async () => {
      const saver = SqliteSaver.fromConnString(where);
      closers.push(() => void saver.db.close());
      // Creates the tables: the command line refuses a file without them.
      await saver.getTuple({ configurable: { thread_id: "none" } });
      return saver;
    };
    return { where, open };
  },
  PostgreSQL: async () => {
    const name = `cli_retention_${(n += 1)}`;
    const admin = new Client({ connectionString: pgServer.url });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    await admin.end();
    const where = pgServer.url.replace(/\/postgres$/, `/${name}`);
    const open = async () => {
      const saver = PostgresSaver.fromConnString(where);
      await saver.setup();
      closers.push(() => saver.end());
      return saver;
    };
    return { where, open };
  },
};

/** A top-level checkpoint of this age and run status. */
async function seed(saver: BaseCheckpointSaver, thread: string, ts: string, status: string) {
  const checkpoint = { ...emptyCheckpoint(), ts, channel_values: { status }, channel_versions: { status: 1 } };
  await saver.put(
    { configurable: { thread_id: thread, checkpoint_ns: "" } },
    checkpoint,
    {
      source: "loop",
      step: 1,
      parents: {},
    },
    { status: 1 },
  );
}

const line = (thread: string, status: string) => `${thread}  ${status}  step=-  plan=v0  progress=-`;

describe.each(Object.keys(backends))("thread retention on the command line over %s", (backend) => {
  it("threads: newest first, a page at a time, archived threads only with --archived or --all", async () => {
    const { where, open } = await backends[backend]!();
    const saver = await open();
    expect(await cli("threads", where)).toEqual({ code: 0, err: [], out: [`no threads in ${where}`] });
    for (const [i, t] of ["t1", "t2", "t3", "t4"].entries()) await seed(saver, t, daysAgo(4 - i), "completed");
    expect(await cli("archive", where, "t3")).toEqual({
      code: 0,
      err: [],
      out: ['archived "t3": threads lists it with --archived or --all; unarchive lists it again'],
    });
    const first = await cli("threads", where, "--limit", "2");
    expect(first.out).toEqual([line("t4", "completed"), line("t2", "completed")]);
    const cursor = /--cursor (\S+)$/.exec(first.err[0]!)![1]!;
    expect(first.err).toEqual([`more: langgraph-replan threads ${where} --limit 2 --cursor ${cursor}`]);
    expect(await cli("threads", where, "--limit", "2", "--cursor", cursor)).toEqual({
      code: 0,
      err: [],
      out: [line("t1", "completed")],
    });
    expect((await cli("threads", where, "--archived")).out).toEqual([`${line("t3", "completed")}  archived`]);
    expect((await cli("threads", where, "--all")).out).toEqual([
      line("t4", "completed"),
      `${line("t3", "completed")}  archived`,
      line("t2", "completed"),
      line("t1", "completed"),
    ]);
    expect((await cli("unarchive", where, "t3")).out).toEqual(['unarchived "t3"']);
    expect((await cli("unarchive", where, "t3")).out).toEqual(['"t3" was not archived']);
    expect((await cli("threads", where, "--archived")).out).toEqual([`no archived threads in ${where}`]);
    expect(await cli("threads", where, "--archived", "--all")).toEqual({
      code: 1,
      out: [],
      err: ["langgraph-replan: give --archived (archived threads only) or --all, not both"],
    });
    expect((await cli("threads", where, "--limit", "0")).err).toEqual([
      'langgraph-replan: --limit must be a whole number ≥ 1, got "0"',
    ]);
    expect((await cli("threads", where, "--cursor", "c1.%%")).err).toEqual([
      "langgraph-replan: cursor must be the nextCursor of an earlier page, got c1.%%",
    ]);
  });

  it("delete: removes the thread, refuses one another connection holds and one that is not there", async () => {
    const { where, open } = await backends[backend]!();
    const saver = await open();
    for (const t of ["a_c", "abc", "__proto__"]) await seed(saver, t, daysAgo(1), "completed");
    expect(await cli("delete", where, "a_c")).toEqual({
      code: 0,
      err: [],
      out: ['deleted "a_c": its checkpoints, writes and claims in every namespace'],
    });
    const claim = (await saverAdapter(await open()).claimThread("__proto__")) as ThreadClaim;
    const refused = await cli("delete", where, "__proto__");
    expect([refused.code, refused.out]).toEqual([1, []]);
    expect(refused.err[0]).toMatch(/^langgraph-replan: thread "__proto__" is being run by another process \(/);
    await claim.release();
    expect((await cli("delete", where, "__proto__")).code).toBe(0);
    expect(await cli("delete", where, "a_c")).toEqual({
      code: 1,
      out: [],
      err: ['langgraph-replan: no thread "a_c" in this checkpointer (nothing was changed)'],
    });
    expect((await cli("delete", where)).err).toEqual([
      `langgraph-replan: delete needs a thread id: langgraph-replan delete ${where} THREAD`,
    ]);
    expect((await cli("threads", where)).out).toEqual([line("abc", "completed")]);
  });

  it("prune --older-than 30d --status completed,failed: a dry run lists, then it deletes and names what it skipped", async () => {
    const { where, open } = await backends[backend]!();
    const saver = await open();
    await seed(saver, "old-done", daysAgo(40), "completed");
    await seed(saver, "old-failed", daysAgo(31), "failed");
    await seed(saver, "old-held", daysAgo(35), "failed");
    await seed(saver, "old-waiting", daysAgo(60), "awaiting_human");
    await seed(saver, "young", daysAgo(29), "completed");
    const args = ["prune", where, "--older-than", "30d", "--status", "completed, failed"];
    expect(await cli(...args, "--dry-run")).toEqual({
      code: 0,
      err: [],
      out: [
        `would delete "old-held" (failed, last checkpoint ${daysAgo(35)})`,
        `would delete "old-failed" (failed, last checkpoint ${daysAgo(31)})`,
        `would delete "old-done" (completed, last checkpoint ${daysAgo(40)})`,
        "3 thread(s) older than 30d with status completed or failed would be deleted (dry run: nothing deleted)",
      ],
    });
    const claim = (await saverAdapter(await open()).claimThread("old-held")) as ThreadClaim;
    const pruned = await cli(...args);
    await claim.release();
    expect([pruned.code, pruned.err, pruned.out.length]).toEqual([0, [], 4]);
    expect(pruned.out.slice(0, 2)).toEqual([
      `deleted "old-failed" (failed, last checkpoint ${daysAgo(31)})`,
      `deleted "old-done" (completed, last checkpoint ${daysAgo(40)})`,
    ]);
    expect(pruned.out[2]).toMatch(/^skipped "old-held" \(busy\): thread "old-held" is being run by another process/);
    expect(pruned.out[3]).toBe("deleted 2 of 3 thread(s) older than 30d with status completed or failed; skipped 1");
    expect((await cli("threads", where)).out).toEqual([
      line("young", "completed"),
      line("old-waiting", "awaiting_human"),
      line("old-held", "failed"),
    ]);
    expect((await cli("prune", where, "--older-than", "1000000d")).out).toEqual([
      "deleted 0 of 0 thread(s) older than 1000000d",
    ]);
  });

  it("prune refuses a missing or bad duration and an unknown status, naming them, and deletes nothing", async () => {
    const { where, open } = await backends[backend]!();
    await seed(await open(), "old", daysAgo(40), "completed");
    const errors = [];
    for (const args of [
      [],
      ["--older-than", "30"],
      ["--older-than", "NaN"],
      ["--older-than", "30d", "--status", "done"],
    ])
      errors.push(await cli("prune", where, ...args));
    expect(errors).toEqual(
      [
        `prune needs --older-than DURATION: langgraph-replan prune ${where} --older-than 30d`,
        "--older-than must be a whole number and a unit — ms, s, m, h, d or w (e.g. 30d, 12h, 90m) — of at most " +
          '9007199254740991 ms, got "30"',
        "--older-than must be a whole number and a unit — ms, s, m, h, d or w (e.g. 30d, 12h, 90m) — of at most " +
          '9007199254740991 ms, got "NaN"',
        'unknown run status "done": choose from planning, awaiting_review, running, awaiting_human, completed, ' +
          "partial, failed, aborted, stopped",
      ].map((message) => ({ code: 1, out: [], err: [`langgraph-replan: ${message}`] })),
    );
    expect((await cli("threads", where)).out).toEqual([line("old", "completed")]);
  });
});

describe("the command line's command names", () => {
  it("refuses a name every object has, as an unknown command", async () => {
    for (const name of ["constructor", "__proto__", "toString"]) {
      const { code, err } = await cli(name, join(dir, "none.sqlite"));
      expect([code, err[0]]).toEqual([1, `langgraph-replan: unknown command "${name}"`]);
    }
  });
});

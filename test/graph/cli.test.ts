/**
 * The operator's command line over a SQLite checkpoint file: exact output and exit codes for
 * every command, and friendly errors for a missing file, a wrong URL or an unknown thread.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createRequire } from "node:module";
import { join } from "node:path";
import { promisify } from "node:util";
import { tool } from "@langchain/core/tools";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createPlanManager, resumeRun, staticPlanner } from "../../src/index.js";
import { htmlReport } from "../../src/views/index.js";
import { runCli } from "../../src/cli/commands.js";
import { loadPackage, type MissingPackageError } from "../../src/cli/packages.js";
import { fakeClock } from "../helpers/clock.js";

const dir = mkdtempSync(join(tmpdir(), "cli-"));
const db = join(dir, "checkpoints.sqlite");
const NOW = Date.parse("2026-01-01T00:01:00Z");

const echo = tool(async (args: { n: number }) => ({ [`v${args.n}`]: args.n }), {
  name: "echo",
  description: "echo",
  schema: z.object({ n: z.number() }),
});
const plan = {
  steps: [
    { id: "a", goal: "Fetch the record", tool: "echo", args: { n: 1 }, produces: ["v1"] },
    {
      id: "ask",
      goal: "A person checks it",
      human: { prompt: "is v1 right?" },
      produces: ["checked_by"],
      dependsOn: ["a"],
    },
    { id: "b", goal: "File it", tool: "echo", args: { n: 2 }, produces: ["v2"], dependsOn: ["ask"] },
  ],
};
const graphOn = (saver: SqliteSaver) =>
  createPlanManager({ tools: [echo], planner: staticPlanner({ plan }), clock: fakeClock() }).compile({
    checkpointer: saver,
  });
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

beforeAll(async () => {
  const saver = SqliteSaver.fromConnString(db);
  const graph = graphOn(saver);
  await graph.invoke({ goal: "file a record" }, cfg("done"));
  await resumeRun(graph, cfg("done"), { action: "complete", output: { checked_by: "ana" } });
  await graph.invoke({ goal: "file a record" }, cfg("asks"));
  await graph.invoke({ goal: "file a record" }, cfg("dropped"));
  await resumeRun(graph, cfg("dropped"), { action: "abort", reason: "wrong customer" });
  await graph.invoke({ goal: "file a record" }, cfg("paused"));
  saver.db.close();
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("langgraph-replan over a SQLite file", () => {
  it("threads: one line per thread, newest first, with status, step, plan version, last progress and diagnostics", async () => {
    expect(await cli("threads", db)).toEqual({
      code: 0,
      err: [],
      out: [
        "paused  awaiting_human  step=ask  plan=v1  progress=2026-01-01T00:00:00.000Z (60s ago)",
        "dropped  aborted  step=ask  plan=v1  progress=2026-01-01T00:00:00.000Z (60s ago)  failedStep=ask  " +
          'failureReason=aborted_by_human  message="wrong customer"  recoverable=false',
        "asks  awaiting_human  step=ask  plan=v1  progress=2026-01-01T00:00:00.000Z (60s ago)",
        "done  completed  step=-  plan=v1  progress=2026-01-01T00:00:00.000Z (60s ago)",
      ],
    });
  });

  it("show: the user, operator and debug views", async () => {
    expect(await cli("show", db, "done", "--view", "user")).toEqual({
      code: 0,
      err: [],
      out: ["✓ Fetch the record", "✓ A person checks it", "✓ File it", "Done."],
    });
    const operator = await cli("show", db, "asks");
    expect(operator.out.slice(0, 3)).toEqual(["step: ask", "status: awaiting_human (attempt 0/1)", "elapsed: 60.0s"]);
    const debug = await cli("show", db, "asks", "--view", "debug");
    expect(debug.out.slice(0, 2)).toEqual(["goal: file a record", "status: awaiting_human"]);
    expect(await cli("show", db, "asks", "--view", "boss")).toEqual({
      code: 1,
      out: [],
      err: ['langgraph-replan: unknown view "boss": choose user, operator or debug'],
    });
  });

  it("report -o writes htmlReport's page for the thread, diagrams drawn by the installed mermaid beside it", async () => {
    const file = join(dir, "done.html");
    const bundle = join(dir, "mermaid.min.js");
    const result = await cli("report", db, "done", "-o", file);
    expect(result).toEqual({
      code: 0,
      err: [],
      out: [`wrote ${file} (${statSync(file).size} bytes) and, beside it, ${bundle} (${statSync(bundle).size} bytes)`],
    });
    const saver = SqliteSaver.fromConnString(db);
    const state = await graphOn(saver).getState(cfg("done"));
    saver.db.close();
    // The page loads Mermaid from the file beside it rather than carrying megabytes of it inline.
    expect(readFileSync(file, "utf8")).toBe(htmlReport(state.values as never, { mermaidSrc: "mermaid.min.js" }));
    expect(statSync(file).size).toBeLessThan(20_000);
    const installed = readFileSync(createRequire(import.meta.url).resolve("mermaid/dist/mermaid.min.js"), "utf8");
    expect(readFileSync(bundle, "utf8")).toBe(installed);
    // A second report in the same folder shares the bundle (rewritten only when it differs).
    writeFileSync(bundle, "stale");
    await cli("report", db, "done", "-o", join(dir, "again.html"));
    expect(readFileSync(bundle, "utf8")).toBe(installed);
  });

  it("a package a command imports and cannot find is named, with the npm install to run (exit code 2)", async () => {
    const missing = (load: () => Promise<unknown>): Promise<MissingPackageError> =>
      loadPackage("a postgresql:// URL", load).then(
        () => {
          throw new Error("loaded a package that does not exist");
        },
        (error: unknown) => error as MissingPackageError,
      );
    const plain = await missing(() => import("langgraph-replan-missing-pkg" as string));
    expect([plain.message, plain.exitCode]).toEqual([
      'a postgresql:// URL needs the package "langgraph-replan-missing-pkg", which is not installed: ' +
        "npm install langgraph-replan-missing-pkg",
      2,
    ]);
    const scoped = await missing(() => import("@langgraph-replan/missing/sub.js" as string));
    expect(scoped.packageName).toBe("@langgraph-replan/missing");
  });

  it("report -o into a folder that does not exist: one line, exit 1, nothing written", async () => {
    const file = join(dir, "no-such-dir", "r.html");
    expect(await cli("report", db, "done", "-o", file)).toEqual({
      code: 1,
      out: [],
      err: [`langgraph-replan: cannot write ${file}: ENOENT: no such file or directory, open '${file}'`],
    });
  });

  it("wait: the exit code says finished, needs a person, ended badly or stopped", async () => {
    expect(await cli("wait", db, "done")).toEqual({
      code: 0,
      err: [],
      out: ['done: completed — Completed "file a record": 3 of 3 steps succeeded (plan v1).'],
    });
    expect(await cli("wait", db, "asks", "--timeout", "5")).toEqual({
      code: 2,
      err: [],
      out: ["asks: awaiting_human — waits for a person (is v1 right?)"],
    });
    expect((await cli("wait", db, "dropped")).code).toBe(3);
    expect(await cli("wait", db, "done", "--timeout", "soon")).toEqual({
      code: 1,
      out: [],
      err: ['langgraph-replan: --timeout must be a number of seconds, got "soon"'],
    });
  });

  it("resume checks the value like resumeRun and says where a SQLite thread is answered", async () => {
    expect(await cli("resume", db, "asks", "--value", '{"action":"aprove"}')).toEqual({
      code: 1,
      out: [],
      err: [
        'langgraph-replan: thread "asks", human_step for step "ask": invalid resume value: unknown action "aprove" ' +
          '(did you mean "approve"? it is not available here); choose one of: complete, skip, abort (as { action: "..." })',
      ],
    });
    expect(await cli("resume", db, "asks", "--value", "{oops")).toEqual({
      code: 1,
      out: [],
      err: [`langgraph-replan: --value is not valid JSON: {oops (e.g. --value '{"action":"complete"}')`],
    });
    expect(await cli("resume", db, "asks", "--value", '{"action":"complete","output":{}}')).toEqual({
      code: 1,
      out: [],
      err: [
        'langgraph-replan: thread "asks", human_step for step "ask": output is missing checked_by, which step "ask" ' +
          "must produce",
      ],
    });
    expect(await cli("resume", db, "asks", "--value", '{"action":"complete","output":{"checked_by":"ana"}}')).toEqual({
      code: 1,
      out: [],
      err: [
        "langgraph-replan: the answer is valid, but over a SQLite file it must be given by the process that owns " +
          'the graph\'s tools: resumeRun(graph, { configurable: { thread_id: "asks" } }, value) (workers are ' +
          "answered through a postgresql:// URL)",
      ],
    });
    expect(await cli("resume", db, "done", "--value", '{"action":"approve"}')).toEqual({
      code: 1,
      out: [],
      err: ['langgraph-replan: thread "done" has no pending question (status: completed): there is nothing to answer'],
    });
  });

  it("stop parks a paused thread as stopped (recoverable), and resume reopens it for its owner to finish", async () => {
    expect(await cli("stop", db, "paused", "--reason", "audit")).toEqual({
      code: 0,
      err: [],
      out: [`stopped "paused" (it was awaiting_human); carry on with: langgraph-replan resume ${db} paused`],
    });
    expect((await cli("threads", db)).out[0]).toBe(
      "paused  stopped  step=ask  plan=v1  progress=2026-01-01T00:00:00.000Z (60s ago)  failureReason=stopped  " +
        'message="stop requested at 2026-01-01T00:01:00.000Z: audit"  recoverable=true',
    );
    expect(await cli("wait", db, "paused")).toEqual({
      code: 4,
      err: [],
      out: ["paused: stopped — Stopped by an operator: audit. 1 of 3 steps succeeded; resume to carry on."],
    });
    expect((await cli("stop", db, "paused")).err).toEqual([
      'langgraph-replan: thread "paused" is already stopped (resume it to carry on)',
    ]);
    expect((await cli("stop", db, "done")).err).toEqual([
      'langgraph-replan: thread "done" has finished (status: completed): there is nothing to stop',
    ]);
    expect(await cli("resume", db, "paused")).toEqual({
      code: 0,
      err: [],
      out: [
        'reopened "paused" (status: awaiting_human): it waits for a person (human_step for step "ask"); ' +
          `answer with: langgraph-replan resume ${db} paused --answer JSON`,
      ],
    });
    const saver = SqliteSaver.fromConnString(db);
    const graph = graphOn(saver);
    await graph.invoke(null, cfg("paused"));
    await resumeRun(graph, cfg("paused"), { action: "complete", output: { checked_by: "ana" } });
    expect((await graph.getState(cfg("paused"))).values.status).toBe("completed");
    saver.db.close();
  });

  it("friendly errors: missing file, not a checkpoint file, wrong URL, unknown thread, unknown command", async () => {
    const missing = join(dir, "nope.sqlite");
    expect(await cli("threads", missing)).toEqual({
      code: 1,
      out: [],
      err: [`langgraph-replan: no such file: ${missing} (give a SQLite checkpoint file or a postgresql:// URL)`],
    });
    const other = join(dir, "notes.txt");
    writeFileSync(other, "not a database at all, just some notes that are long enough to have a header");
    expect((await cli("threads", other)).err).toEqual([
      `langgraph-replan: ${other} is not a SQLite database (file is not a database)`,
    ]);
    expect(await cli("threads", "postgresql://postgres:secret@127.0.0.1:1/postgres")).toEqual({
      code: 1,
      out: [],
      err: [
        "langgraph-replan: cannot connect to PostgreSQL at postgresql://postgres:***@127.0.0.1:1/postgres: " +
          "connect ECONNREFUSED 127.0.0.1:1",
      ],
    });
    expect((await cli("threads", "postgresql://[bad")).err).toEqual([
      "langgraph-replan: not a valid PostgreSQL URL: postgresql://[bad (expected " +
        "postgresql://user[:password]@host[:port]/database)",
    ]);
    expect(await cli("show", db, "ghost")).toEqual({
      code: 1,
      out: [],
      err: [`langgraph-replan: no thread "ghost" in ${db} (list them with: langgraph-replan threads ${db})`],
    });
    expect((await cli("show", db)).err).toEqual([
      `langgraph-replan: show needs a thread id: langgraph-replan show ${db} THREAD`,
    ]);
    const unknown = await cli("restart", db);
    expect([unknown.code, unknown.err[0]]).toEqual([1, 'langgraph-replan: unknown command "restart"']);
  });

  it("runs as a command: the package bin prints to stdout and sets the exit code", async () => {
    const run = promisify(execFile);
    const main = join(import.meta.dirname, "../../src/cli/main.ts");
    const { stdout } = await run(process.execPath, ["--import", "tsx", main, "wait", db, "done"]);
    expect(stdout).toBe('done: completed — Completed "file a record": 3 of 3 steps succeeded (plan v1).\n');
    const failed = await run(process.execPath, ["--import", "tsx", main, "wait", db, "asks"]).catch((e) => e);
    expect([failed.code, failed.stdout]).toEqual([2, "asks: awaiting_human — waits for a person (is v1 right?)\n"]);
  });
});

describe("resume --answer over a SQLite file", () => {
  const file = join(dir, "answers.sqlite");
  beforeAll(async () => {
    const saver = SqliteSaver.fromConnString(file);
    const graph = graphOn(saver);
    for (const thread of ["ok", "no", "held"]) await graph.invoke({ goal: "file a record" }, cfg(thread));
    saver.db.close();
  });

  it("answers the pending question and stops before any tool; the owner's invoke(null) carries on", async () => {
    expect(await cli("resume", file, "ok", "--answer", '{"action":"complete","output":{}}')).toEqual({
      code: 1,
      out: [],
      err: [
        'langgraph-replan: thread "ok", human_step for step "ask": output is missing checked_by, which step "ask" ' +
          "must produce",
      ],
    });
    expect(await cli("resume", file, "ok", "--answer", '{"action":"complete","output":{"checked_by":"ana"}}')).toEqual({
      code: 0,
      err: [],
      out: [
        'answered "ok" (human_step for step "ask"); the process that owns its tools carries on with ' +
          'graph.invoke(null, { configurable: { thread_id: "ok" } })',
      ],
    });
    expect((await cli("resume", file, "ok", "--answer", '{"action":"complete"}')).err).toEqual([
      'langgraph-replan: thread "ok" has no pending question (status: running): there is nothing to answer',
    ]);
    const saver = SqliteSaver.fromConnString(file);
    const graph = graphOn(saver);
    const before = (await graph.getState(cfg("ok"))).values;
    expect([before.status, before.facts.checked_by?.value, before.steps.b]).toEqual(["running", "ana", undefined]);
    const out = await graph.invoke(null, cfg("ok"));
    expect([out.status, out.facts.v2?.value]).toEqual(["completed", 2]);
    saver.db.close();
  });

  it("an answer that ends the run ends it there; --answer and --value are not given together", async () => {
    expect(await cli("resume", file, "no", "--answer", '{"action":"abort","reason":"wrong record"}')).toEqual({
      code: 0,
      err: [],
      out: [
        'answered "no" (human_step for step "ask"): aborted — Aborted at step "ask": wrong record. ' +
          "1 of 3 steps succeeded.",
      ],
    });
    expect((await cli("resume", file, "held", "--answer", "{}", "--value", "{}")).err).toEqual([
      "langgraph-replan: give the answer once: --answer JSON (or --value JSON, which only checks it over a SQLite file)",
    ]);
  });

  it("a stopped thread waiting for a person is reopened at its question and answered with --answer", async () => {
    expect((await cli("stop", file, "held")).code).toBe(0);
    expect((await cli("resume", file, "held", "--answer", '{"action":"complete"}')).err).toEqual([
      'langgraph-replan: thread "held" is stopped: resume it without --answer first; it asks its question again',
    ]);
    expect((await cli("resume", file, "held")).out).toEqual([
      'reopened "held" (status: awaiting_human): it waits for a person (human_step for step "ask"); ' +
        `answer with: langgraph-replan resume ${file} held --answer JSON`,
    ]);
    expect((await cli("resume", file, "held", "--answer", '{"action":"skip"}')).code).toBe(0);
    const saver = SqliteSaver.fromConnString(file);
    const out = await graphOn(saver).invoke(null, cfg("held"));
    expect([out.status, out.steps.ask?.status, out.facts.v2?.value]).toEqual(["partial", "skipped", 2]);
    saver.db.close();
  });
});

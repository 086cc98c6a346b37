/**
 * The operator's command line (docs/architecture.md "What runs where"): `runCli(argv, io)` returns the exit code, so
 * tests check exact output without a process. `main.ts` wires it to the terminal.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { isPlanManagerError } from "../errors.js";
import { debugView } from "../views/debug-view.js";
import { operatorView } from "../views/operator-view.js";
import { htmlReport } from "../views/report.js";
import { userView } from "../views/user-view.js";
import { MissingPackageError } from "./packages.js";
import { CliError, openTarget, readerGraph, type Target } from "./target.js";
import { RETENTION_COMMANDS, RETENTION_FLAGS } from "./retention-commands.js";
import { agentSnapshot } from "./agent-thread.js";
import { pendingQuestion, snapshotOf, type CliIo, type Context } from "./cli-context.js";
import { stopThread } from "./stop-command.js";
import { queueResume } from "./resume-command.js";
import { runMcp } from "./mcp-command.js";

export type { CliIo } from "./cli-context.js";

export const USAGE = [
  "usage: langgraph-replan <command> <checkpoints> [thread] [options]",
  "  <checkpoints> is a SQLite file or a postgresql:// URL",
  "  threads  <checkpoints> [--limit N [--cursor C]] [--archived | --all]",
  "                                                  one line per thread, newest first; archived ones left out",
  "  show     <checkpoints> THREAD [--view user|operator|debug]",
  "  report   <checkpoints> THREAD -o FILE.html",
  "  resume   <checkpoints> THREAD [--answer JSON]   answer a question, or carry on after a stop",
  "  stop     <checkpoints> THREAD [--reason TEXT]   stop at the next step boundary (resumable)",
  "  wait     <checkpoints> THREAD [--timeout S]     exit 0 completed, 2 needs a person, 3 failed/aborted/partial,",
  "                                                  4 stopped, 124 timed out",
  "  archive  <checkpoints> THREAD                   leave it out of threads (nothing deleted); unarchive undoes it",
  "  delete   <checkpoints> THREAD                   delete its checkpoints, writes and claims (refused while it runs)",
  "  prune    <checkpoints> --older-than DURATION [--status S1,S2] [--dry-run]",
  "                                                  delete threads last written before it (30d, 12h, 90m)",
  "  mcp      [--db FILE|URL] [--config langgraph.json] [--http [HOST:]PORT]   serve plans to agents over MCP",
].join("\n");

/** `wait`'s exit codes by status; anything else is still moving. */
export const WAIT_EXIT: Readonly<Record<string, number>> = {
  completed: 0,
  awaiting_human: 2,
  awaiting_review: 2,
  failed: 3,
  aborted: 3,
  partial: 3,
  stopped: 4,
};

async function show(ctx: Context): Promise<number> {
  const values = (await snapshotOf(ctx)).values as never;
  const view = ctx.options.view ?? "operator";
  const lines =
    view === "user"
      ? userView(values)
      : view === "debug"
        ? debugView(values)
        : view === "operator"
          ? operatorView(values, { now: ctx.io.now() })
          : undefined;
  if (!lines) throw new CliError(`unknown view "${view}": choose user, operator or debug`);
  for (const line of lines) ctx.io.out(line);
  return 0;
}

/**
 * Mermaid's browser bundle, when the `mermaid` package is installed: `htmlReport` draws the
 * diagrams with it and, without it, shows their Mermaid source as text.
 */
function mermaidScript(): string | undefined {
  try {
    return readFileSync(createRequire(import.meta.url).resolve("mermaid/dist/mermaid.min.js"), "utf8");
  } catch {
    return undefined;
  }
}

/** The bundle's name beside the report; the page loads it by this relative name. */
const BUNDLE = "mermaid.min.js";

async function report(ctx: Context): Promise<number> {
  const file = ctx.options.output;
  if (!file) throw new CliError("report needs -o FILE.html");
  const script = mermaidScript();
  // The bundle is megabytes: inlined, every report carried a copy. Beside the report, one copy
  // serves every report in the folder, and the page still opens offline from file://.
  const html = htmlReport((await snapshotOf(ctx)).values as never, script ? { mermaidSrc: BUNDLE } : {});
  const bundle = join(dirname(file), BUNDLE);
  write(file, html);
  if (script && !sameText(bundle, script)) write(bundle, script);
  ctx.io.out(
    `wrote ${file} (${Buffer.byteLength(html)} bytes)` +
      (script
        ? ` and, beside it, ${bundle} (${Buffer.byteLength(script)} bytes)`
        : "; diagrams are shown as Mermaid source: npm install mermaid to draw them"),
  );
  return 0;
}

function write(file: string, text: string): void {
  try {
    writeFileSync(file, text);
  } catch (error) {
    throw new CliError(`cannot write ${file}: ${(error as Error).message}`);
  }
}

function sameText(file: string, text: string): boolean {
  try {
    return readFileSync(file, "utf8") === text;
  } catch {
    return false;
  }
}

async function wait(ctx: Context): Promise<number> {
  const timeout = ctx.options.timeout === undefined ? Infinity : Number(ctx.options.timeout);
  if (!(timeout >= 0)) throw new CliError(`--timeout must be a number of seconds, got "${ctx.options.timeout}"`);
  const until = ctx.io.now() + timeout * 1000;
  for (;;) {
    const snapshot = await snapshotOf(ctx);
    const values = snapshot.values as { status: string; outcome?: { summary?: string } };
    // A status counts once the run has let go of the thread (a question is pending, or the run ended).
    const settled = snapshot.tasks.length === 0 || pendingQuestion(snapshot) !== undefined;
    const code = settled ? WAIT_EXIT[values.status] : undefined;
    if (code !== undefined) {
      const why = code === 2 ? `waits for a person (${pendingQuestion(snapshot)?.value?.reason ?? "a question"})` : "";
      ctx.io.out(
        `${ctx.thread}: ${values.status}` +
          (why ? ` — ${why}` : values.outcome?.summary ? ` — ${values.outcome.summary}` : ""),
      );
      return code;
    }
    if (ctx.io.now() >= until) {
      ctx.io.out(`${ctx.thread}: still ${values.status} after ${timeout}s`);
      return 124;
    }
    await ctx.io.sleep(250);
  }
}

const COMMANDS: Record<string, (ctx: Context) => Promise<number>> = {
  show,
  report,
  wait,
  stop: stopThread,
  resume: queueResume,
};

export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  if (argv[0] === "mcp") return mcp(argv.slice(1), io);
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        view: { type: "string" },
        output: { type: "string", short: "o" },
        value: { type: "string" },
        answer: { type: "string" },
        reason: { type: "string" },
        timeout: { type: "string" },
        ...RETENTION_FLAGS,
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (error) {
    io.err(`langgraph-replan: ${(error as Error).message}`);
    io.err(USAGE);
    return 1;
  }
  const [command, where, thread] = parsed.positionals;
  if (parsed.values.help || !command) {
    (parsed.values.help ? io.out : io.err)(USAGE);
    return parsed.values.help ? 0 : 1;
  }
  // Own names only: "constructor" or "__proto__" are in every object.
  if (!Object.hasOwn(RETENTION_COMMANDS, command) && !Object.hasOwn(COMMANDS, command)) {
    io.err(`langgraph-replan: unknown command "${command}"`);
    io.err(USAGE);
    return 1;
  }
  let target: Target | undefined;
  try {
    target = await openTarget(where);
    const graph = readerGraph(target.saver);
    const retention = Object.hasOwn(RETENTION_COMMANDS, command) ? RETENTION_COMMANDS[command] : undefined;
    if (retention) return await retention({ target, graph, thread, flags: parsed.values, io });
    if (!thread) throw new CliError(`${command} needs a thread id: langgraph-replan ${command} ${target.label} THREAD`);
    if ((command === "stop" || command === "resume") && (await agentSnapshot(target.saver, thread)))
      throw new CliError(
        `"${thread}" is a createAgent thread (planMiddleware): ${command} it from the agent's process ` +
          "(agent.invoke(new Command({ resume: answer }), config) answers its question)",
      );
    const { help: _help, archived: _a, all: _all, "dry-run": _dry, ...options } = parsed.values;
    return await COMMANDS[command]!({ target, graph, thread, options, io });
  } catch (error) {
    if (error instanceof CliError || isPlanManagerError(error)) {
      io.err(`langgraph-replan: ${error.message}`);
      return error instanceof MissingPackageError ? error.exitCode : 1;
    }
    throw error;
  } finally {
    await target?.close();
  }
}

/** `mcp` has flags of its own and no positional checkpoints; its errors end the same way. */
async function mcp(argv: readonly string[], io: CliIo): Promise<number> {
  try {
    return await runMcp(argv, io);
  } catch (error) {
    if (error instanceof CliError || isPlanManagerError(error)) {
      io.err(`langgraph-replan: ${error.message}`);
      return error instanceof MissingPackageError ? error.exitCode : 1;
    }
    if ((error as { code?: unknown }).code?.toString().startsWith("ERR_PARSE_ARGS")) {
      io.err(`langgraph-replan mcp: ${(error as Error).message}`);
      return 1;
    }
    throw error;
  }
}

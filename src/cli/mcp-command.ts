/**
 * `langgraph-replan mcp`: the plan service over MCP (src/mcp/). It serves the plan-manager graphs
 * a `langgraph.json` names, the way `langgraph dev` loads them (a TypeScript module is loaded
 * through `tsx`); with none, the one graph `plans`, planned with the client's own model
 * (docs/decisions/0060-sampling-through-the-client.md). With the checkpointer `--db` gives: a SQLite file (made when missing) or a
 * `postgresql://` URL. stdio by default (stdout is the protocol: messages go to stderr);
 * Streamable HTTP on 127.0.0.1 with `--http [HOST:]PORT`.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import type { ServedGraph } from "../mcp/service.js";
import { withDirectMethods } from "../storage/index.js";
import type { CliIo } from "./cli-context.js";
import { loadServerTools } from "./mcp-tools.js";
import { loadPackage } from "./packages.js";
import { bearerToken, httpAddress, refuseTokenFlag, serveHttp, TOKEN_ENV } from "./mcp-http.js";
import { CliError, openTarget, type Target } from "./target.js";

export const MCP_USAGE = [
  "usage: langgraph-replan mcp [--db FILE|postgresql://…] [--config langgraph.json] [--tools mcp.json] [--http [HOST:]PORT]",
  "  serves the plan-manager graphs of langgraph.json to MCP clients (stdio unless --http); with no",
  "  langgraph.json, the graph `plans`: planned by the client's model (MCP sampling), its steps done by the client",
  "  --db      checkpoints: a SQLite file (default plans.sqlite, made when missing) or a postgresql:// URL",
  "  --config  the langgraph.json whose graphs are served (default ./langgraph.json, if there is one)",
  "  --tools   without langgraph.json: an mcpServers JSON whose servers' tools the plans' steps may call",
  "  --http    Streamable HTTP at HOST:PORT (HOST defaults to 127.0.0.1)",
  `  --token-env NAME  the variable holding the bearer token HTTP clients must send (default ${TOKEN_ENV});`,
  "            required to serve an address other than loopback",
  "  --no-elicit  do not ask the client's user a plan's questions (elicitation); plan_answer alone answers them",
  "  --workers on a postgresql:// --db: hand runs to createWorker processes (their queue) instead of running them here",
].join("\n");

const SDK_USER = "langgraph-replan mcp";

interface GraphModuleValue {
  invoke?: unknown;
  getState?: unknown;
  compile?: unknown;
  channels?: Record<string, unknown>;
  builder?: { compile(options: { checkpointer: BaseCheckpointSaver }): unknown };
  name?: string;
}

/** A plan manager's graph, told apart from other graphs (a createAgent agent) by its channels. */
const hasPlanChannels = (value: GraphModuleValue | undefined): boolean =>
  value?.channels !== undefined && ["plan", "steps", "decisions"].every((key) => key in value.channels!);

/** A plan manager, compiled (with or without a checkpointer). */
const isCompiledPlanManager = (value: GraphModuleValue | undefined): value is GraphModuleValue =>
  typeof value?.invoke === "function" && typeof value.getState === "function" && hasPlanChannels(value);

/**
 * A plan manager left uncompiled: what `createPlanManager(...)` returns, `createWorker` takes and
 * `langgraph dev` accepts.
 */
const isPlanManagerBuilder = (
  value: GraphModuleValue | undefined,
): value is GraphModuleValue & { compile(options: { checkpointer: BaseCheckpointSaver }): unknown } =>
  typeof value?.compile === "function" && value.invoke === undefined && hasPlanChannels(value);

/** A served graph, once the checkpointer is known. */
export type GraphToServe = (saver: BaseCheckpointSaver) => ServedGraph;

/**
 * Loads the graphs of a langgraph.json, each to be compiled with the checkpointer (`GraphToServe`);
 * the ones that are not plan managers are named and left out. Nothing is opened or written here,
 * so a start that fails (no langgraph.json yet, tsx missing, a misspelled export) leaves nothing behind.
 */
export async function loadGraphs(configPath: string, io: Pick<CliIo, "err">): Promise<Record<string, GraphToServe>> {
  if (!existsSync(configPath)) throw new CliError(`no such file: ${configPath} (give --config PATH/langgraph.json)`);
  let config: { graphs?: Record<string, unknown> };
  try {
    config = JSON.parse(readFileSync(configPath, "utf8")) as typeof config;
  } catch (error) {
    throw new CliError(`${configPath} is not JSON: ${(error as Error).message}`);
  }
  const entries = Object.entries(config.graphs ?? {});
  if (entries.length === 0)
    throw new CliError(`${configPath} names no graphs ("graphs": { "name": "./file.ts:export" })`);
  const graphs: Record<string, GraphToServe> = {};
  for (const [name, spec] of entries) {
    const graph = await loadGraph(configPath, name, spec);
    // Compiled again with the checkpointer, as the graph would be in the user's own process.
    if (isPlanManagerBuilder(graph)) graphs[name] = (saver) => graph.compile({ checkpointer: saver }) as ServedGraph;
    else if (isCompiledPlanManager(graph))
      graphs[name] = (saver) =>
        (graph.builder?.compile({ checkpointer: saver }) ??
          Object.assign(graph, { checkpointer: withDirectMethods(saver) })) as ServedGraph;
    else io.err(`langgraph-replan mcp: graph "${name}" is not a plan manager (createPlanManager): not served`);
  }
  if (Object.keys(graphs).length === 0) throw new CliError(`${configPath} names no plan-manager graph to serve`);
  return graphs;
}

/** The value `spec` ("./file.ts:export") names: the export, or what the factory it names returns. */
async function loadGraph(configPath: string, name: string, spec: unknown): Promise<GraphModuleValue | undefined> {
  if (typeof spec !== "string" || !spec.includes(":"))
    throw new CliError(
      `graph "${name}" in ${configPath}: expected "./path/to/file.ts:exportName", got ${JSON.stringify(spec)}`,
    );
  const at = spec.lastIndexOf(":");
  const file = resolve(dirname(configPath), spec.slice(0, at));
  const exported = spec.slice(at + 1);
  if (!existsSync(file)) throw new CliError(`graph "${name}": no such file ${file}`);
  if ([".ts", ".mts", ".cts", ".tsx"].includes(extname(file))) {
    const tsx = await loadPackage("a TypeScript graph module", () => import("tsx/esm/api"));
    tsx.register();
  }
  const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  if (!Object.hasOwn(module, exported))
    throw new CliError(
      `graph "${name}" in ${configPath}: no export "${exported}" in ${file} ` +
        `(its exports: ${Object.keys(module).join(", ") || "none"})`,
    );
  const value = module[exported] as GraphModuleValue | (() => unknown) | undefined;
  if (typeof value === "function" && !("invoke" in value)) return (await value()) as GraphModuleValue;
  return value as GraphModuleValue | undefined;
}

/**
 * Opens `--db`: an existing checkpoint store, or a new SQLite file. A 0-byte file is a new
 * database too (SQLite writes nothing until the first table): an earlier start may have left one.
 */
async function openDb(db: string): Promise<Target> {
  if (/^postgres(ql)?:\/\//.test(db) || (existsSync(db) && statSync(db).size > 0)) return openTarget(db);
  const Database = (await loadPackage("a SQLite file", () => import("better-sqlite3"))).default;
  const { SqliteSaver } = await loadPackage("a SQLite file", () => import("@langchain/langgraph-checkpoint-sqlite"));
  const handle = new Database(db);
  return { label: db, saver: new SqliteSaver(handle), close: async () => void handle.close() };
}

/** Runs the server until its input ends (stdio) or the process is told to stop; returns the exit code. */
export async function runMcp(argv: readonly string[], io: CliIo): Promise<number> {
  refuseTokenFlag(argv);
  const { values: flags } = parseArgs({
    args: [...argv],
    options: {
      db: { type: "string" },
      config: { type: "string" },
      tools: { type: "string" },
      http: { type: "string" },
      "token-env": { type: "string" },
      "no-elicit": { type: "boolean" },
      workers: { type: "boolean" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (flags.help) {
    io.out(MCP_USAGE);
    return 0;
  }
  const address = flags.http !== undefined ? httpAddress(flags.http) : undefined;
  const token = address ? bearerToken(address, flags["token-env"], process.env) : undefined;
  const { PlanService, takeUpRuns } = await loadPackage(SDK_USER, async () => {
    await import("@modelcontextprotocol/sdk/server/mcp.js");
    return import("../mcp/index.js");
  });
  const { db = "plans.sqlite" } = flags;
  if (flags.workers) workersNeedPostgres(db);
  // The graphs load before the database opens: a start that fails here leaves no file behind.
  const { toServe, closeTools } = await graphsToServe(flags, io);
  const target = await openDb(db).catch(async (error: unknown) => {
    await closeTools();
    throw error;
  });
  let closeAcross: () => Promise<void> = async () => undefined;
  try {
    const { wakes, workers, close } = await acrossProcesses(flags.workers === true, target.postgres, io);
    closeAcross = close;
    const graphs = Object.fromEntries(Object.entries(toServe).map(([name, compile]) => [name, compile(target.saver)]));
    const service = new PlanService({
      graphs,
      saver: target.saver,
      now: io.now,
      server: { name: "langgraph-replan", version: packageVersion() },
      ...(wakes ? { wakes } : {}),
      ...(workers ? { workers } : {}),
      ...(flags["no-elicit"] ? { elicit: false } : {}),
    });
    // Runs a closed or killed server left mid-step are taken up (src/mcp/recovery.ts).
    const onError = (error: unknown) => io.err(`langgraph-replan mcp: taking up runs: ${(error as Error).message}`);
    // The signals are heard before the first take-up: one that comes during it halts the runs it started.
    const signalled = new AbortController();
    const halt = () => signalled.abort();
    process.once("SIGTERM", halt);
    process.once("SIGINT", halt);
    const runs = await takeUpRuns(service, target.saver, { onError, signal: signalled.signal });
    await serveUntilStopped(service, runs, signalled.signal, { address, token, graphs: Object.keys(graphs) }, io);
    return 0;
  } finally {
    await closeAcross();
    await target.close();
    await closeTools();
  }
}

const packageVersion = () =>
  (JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string }).version;

/** Refused before anything opens: the workers' queue and their announcements are in PostgreSQL. */
function workersNeedPostgres(db: string): void {
  if (!/^postgres(ql)?:\/\//.test(db))
    throw new CliError("--workers needs a postgresql:// --db: the workers' queue and their announcements are there");
}

/** On PostgreSQL, plan_wait hears of the runs other servers on the same database drive (LISTEN/NOTIFY). */
async function wakesOf(postgres: Parameters<PlanWakesOpen>[0] | undefined, io: CliIo) {
  if (!postgres) return undefined;
  const { openPlanWakes } = await import("../worker/plan-wakes.js");
  return openPlanWakes(postgres, (error) =>
    io.err(`langgraph-replan mcp: plan wakes: ${error instanceof Error ? error.message : String(error)}`),
  );
}
type PlanWakesOpen = (typeof import("../worker/plan-wakes.js"))["openPlanWakes"];

/**
 * What ties this server to other processes on its PostgreSQL: the wakes, and with `--workers` the queue
 * `createWorker` processes take its runs from (docs/decisions/0074-workers-wake-plan-waits.md).
 */
async function acrossProcesses(workersWanted: boolean, postgres: string | undefined, io: CliIo) {
  const wakes = await wakesOf(postgres, io);
  const workers =
    workersWanted && postgres
      ? await openWorkers(postgres).catch(async (error: unknown) => {
          await wakes?.close();
          throw error;
        })
      : undefined;
  return {
    wakes,
    workers,
    close: async () => {
      await workers?.close();
      await wakes?.close();
    },
  };
}

async function openWorkers(postgres: string) {
  const { openQueue } = await loadPackage("--workers", () => import("../worker/queue.js"));
  return openQueue(postgres);
}

/**
 * The graphs of `--config` (or of ./langgraph.json when there is one); with neither, the
 * zero-configuration graph `plans`, with the tools of the servers `--tools` names.
 */
async function graphsToServe(
  flags: { config?: string; tools?: string },
  io: CliIo,
): Promise<{ toServe: Record<string, GraphToServe>; closeTools: () => Promise<void> }> {
  const config = flags.config ?? (existsSync("langgraph.json") ? "langgraph.json" : undefined);
  if (config !== undefined) {
    if (flags.tools !== undefined)
      throw new CliError("--tools adds tools to the graph served without langgraph.json; give tools in your graph");
    return { toServe: await loadGraphs(resolve(config), io), closeTools: async () => undefined };
  }
  const { zeroConfigGraph, ZERO_CONFIG_GRAPH } = await import("../mcp/index.js");
  const server = flags.tools !== undefined ? await loadServerTools(resolve(flags.tools)) : undefined;
  const tools = server?.tools ?? [];
  io.err(
    `langgraph-replan mcp: no langgraph.json: serving "${ZERO_CONFIG_GRAPH}", planned by the client's model ` +
      `(MCP sampling)${tools.length ? `, with ${tools.length} tools: ${tools.map((t) => t.name).join(", ")}` : ""}`,
  );
  const graph = zeroConfigGraph({ tools });
  return {
    toServe: { [ZERO_CONFIG_GRAPH]: (saver) => graph.compile({ checkpointer: saver }) as unknown as ServedGraph },
    closeTools: async () => server?.close(),
  };
}

type Service = InstanceType<(typeof import("../mcp/index.js"))["PlanService"]>;

type RunsTakenUp = Awaited<ReturnType<(typeof import("../mcp/index.js"))["takeUpRuns"]>>;

/**
 * Serves until the input ends (stdio) or a signal comes. The client going away lets the runs go on to
 * their end; a signal (the SDK's close sends SIGTERM 2 s after closing stdin, then SIGKILL) ends them at
 * their next step boundary instead, for the next server to take up.
 */
async function serveUntilStopped(
  service: Service,
  runs: RunsTakenUp,
  signalled: AbortSignal,
  how: { address: ReturnType<typeof httpAddress> | undefined; token: string | undefined; graphs: string[] },
  io: CliIo,
): Promise<void> {
  let stopped!: () => void;
  const ended = new Promise<void>((done) => (stopped = done));
  // `runs` halts on the signal itself (`takeUpRuns`'s `signal`).
  if (signalled.aborted) stopped();
  signalled.addEventListener("abort", () => stopped(), { once: true });
  const http = how.address ? await serveHttp(service, how.address, how.token, how.graphs, io) : undefined;
  if (!how.address) await serveStdio(service, how.graphs, io, stopped);
  await ended;
  http?.close();
  await runs.ended();
}

/**
 * stdio: the client closing its end is the end of the session, not of the runs: they reach their
 * next checkpoint (done, or waiting for an answer) before the process exits.
 */
async function serveStdio(service: Service, names: string[], io: CliIo, stopped: () => void): Promise<void> {
  const { createMcpServer } = await import("../mcp/index.js");
  const { StdioServerTransport } = await loadPackage(
    SDK_USER,
    () => import("@modelcontextprotocol/sdk/server/stdio.js"),
  );
  const transport = new StdioServerTransport();
  transport.onclose = () => stopped();
  process.stdin.once("end", () => stopped());
  await createMcpServer(service).connect(transport);
  io.err(`langgraph-replan mcp: serving ${names.join(", ")} over stdio`);
}

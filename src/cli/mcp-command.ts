/**
 * `langgraph-replan mcp`: the plan service over MCP (src/mcp/). It serves the plan-manager graphs
 * a `langgraph.json` names, the way `langgraph dev` loads them (a TypeScript module is loaded
 * through `tsx`), with the checkpointer `--db` gives: a SQLite file (made when missing) or a
 * `postgresql://` URL. stdio by default (stdout is the protocol: messages go to stderr);
 * Streamable HTTP on 127.0.0.1 with `--http [HOST:]PORT`.
 */
import { existsSync, readFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { dirname, extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import type { ServedGraph } from "../mcp/service.js";
import { withDirectMethods } from "../storage/index.js";
import type { CliIo } from "./context.js";
import { loadPackage } from "./packages.js";
import { CliError, openTarget, type Target } from "./target.js";

export const MCP_USAGE = [
  "usage: langgraph-replan mcp [--db FILE|postgresql://…] [--config langgraph.json] [--http [HOST:]PORT]",
  "  serves the plan-manager graphs of langgraph.json to MCP clients (stdio unless --http)",
  "  --db      checkpoints: a SQLite file (default plans.sqlite, made when missing) or a postgresql:// URL",
  "  --config  the langgraph.json whose graphs are served (default ./langgraph.json)",
  "  --http    Streamable HTTP at HOST:PORT (HOST defaults to 127.0.0.1)",
].join("\n");

const SDK_USER = "langgraph-replan mcp";

interface GraphModuleValue {
  invoke?: unknown;
  getState?: unknown;
  channels?: Record<string, unknown>;
  builder?: { compile(options: { checkpointer: BaseCheckpointSaver }): unknown };
  name?: string;
}

/** A plan manager's compiled graph, told apart from other graphs (a createAgent agent) by its channels. */
const isPlanManager = (value: GraphModuleValue | undefined): value is GraphModuleValue =>
  typeof value?.invoke === "function" &&
  typeof value.getState === "function" &&
  value.channels !== undefined &&
  ["plan", "steps", "decisions"].every((key) => key in value.channels!);

/** Parses `--http`: a port, or HOST:PORT. */
export function httpAddress(value: string): { host: string; port: number } {
  const at = value.lastIndexOf(":");
  const host = at < 0 ? "127.0.0.1" : value.slice(0, at) || "127.0.0.1";
  const port = Number(at < 0 ? value : value.slice(at + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new CliError(`--http needs a port or HOST:PORT (0 to 65535), got "${value}"`);
  return { host, port };
}

/** Loads the graphs of a langgraph.json; the ones that are not plan managers are named and left out. */
export async function loadGraphs(
  configPath: string,
  saver: BaseCheckpointSaver,
  io: Pick<CliIo, "err">,
): Promise<Record<string, ServedGraph>> {
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
  const graphs: Record<string, ServedGraph> = {};
  for (const [name, spec] of entries) {
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
    let value = module[exported] as GraphModuleValue | (() => unknown) | undefined;
    if (typeof value === "function" && !("invoke" in value)) value = (await value()) as GraphModuleValue;
    const graph = value as GraphModuleValue | undefined;
    if (!isPlanManager(graph)) {
      io.err(`langgraph-replan mcp: graph "${name}" is not a plan manager (createPlanManager): not served`);
      continue;
    }
    // Compiled again with the checkpointer, as the graph would be in the user's own process.
    graphs[name] = (graph.builder?.compile({ checkpointer: saver }) ??
      Object.assign(graph, { checkpointer: withDirectMethods(saver) })) as ServedGraph;
  }
  if (Object.keys(graphs).length === 0) throw new CliError(`${configPath} names no plan-manager graph to serve`);
  return graphs;
}

/** Opens `--db`: an existing checkpoint store, or a new SQLite file. */
async function openDb(db: string): Promise<Target> {
  if (/^postgres(ql)?:\/\//.test(db) || existsSync(db)) return openTarget(db);
  const Database = (await loadPackage("a SQLite file", () => import("better-sqlite3"))).default;
  const { SqliteSaver } = await loadPackage("a SQLite file", () => import("@langchain/langgraph-checkpoint-sqlite"));
  const handle = new Database(db);
  return { label: db, saver: new SqliteSaver(handle), close: async () => void handle.close() };
}

/** Runs the server until its input ends (stdio) or the process is told to stop; returns the exit code. */
export async function runMcp(argv: readonly string[], io: CliIo): Promise<number> {
  const { values: flags } = parseArgs({
    args: [...argv],
    options: {
      db: { type: "string" },
      config: { type: "string" },
      http: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  if (flags.help) {
    io.out(MCP_USAGE);
    return 0;
  }
  const address = flags.http !== undefined ? httpAddress(flags.http) : undefined;
  const { PlanService, takeUpRuns } = await loadPackage(SDK_USER, async () => {
    await import("@modelcontextprotocol/sdk/server/mcp.js");
    return import("../mcp/index.js");
  });
  const { db = "plans.sqlite" } = flags;
  const target = await openDb(db);
  const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  let wakes: Awaited<ReturnType<(typeof import("../worker/plan-wakes.js"))["openPlanWakes"]>> | undefined;
  try {
    // On PostgreSQL, plan_wait hears of the runs other servers on the same database drive (LISTEN/NOTIFY).
    if (target.postgres)
      wakes = await (
        await import("../worker/plan-wakes.js")
      ).openPlanWakes(target.postgres, (error) =>
        io.err(`langgraph-replan mcp: plan wakes: ${error instanceof Error ? error.message : String(error)}`),
      );
    const graphs = await loadGraphs(resolve(flags.config ?? "langgraph.json"), target.saver, io);
    const service = new PlanService({
      graphs,
      saver: target.saver,
      now: io.now,
      server: { name: "langgraph-replan", version: pkg.version },
      ...(wakes ? { wakes } : {}),
    });
    // Runs a closed or killed server left mid-step are taken up (src/mcp/recovery.ts). The client going
    // away lets the runs go on to their end; a signal (the SDK's close sends SIGTERM 2 s after closing
    // stdin, then SIGKILL) ends them at their next step boundary instead, for the next server.
    const onError = (error: unknown) => io.err(`langgraph-replan mcp: taking up runs: ${(error as Error).message}`);
    const runs = await takeUpRuns(service, target.saver, { onError });
    let stopped!: () => void;
    const ended = new Promise<void>((done) => (stopped = done));
    const halt = () => {
      stopped();
      runs.halt();
    };
    process.once("SIGTERM", halt);
    process.once("SIGINT", halt);
    const http = address ? await serveHttp(service, address, Object.keys(graphs), io) : undefined;
    if (!address) await serveStdio(service, Object.keys(graphs), io, stopped);
    await ended;
    http?.close();
    await runs.ended();
    return 0;
  } finally {
    await wakes?.close();
    await target.close();
  }
}

type Service = InstanceType<(typeof import("../mcp/index.js"))["PlanService"]>;

/**
 * Streamable HTTP, stateless: each request gets its own server object over the one service, so a
 * client that goes away takes nothing with it; the runs belong to the service.
 */
async function serveHttp(
  service: Service,
  address: { host: string; port: number },
  names: string[],
  io: CliIo,
): Promise<Server> {
  const { createMcpServer } = await import("../mcp/index.js");
  const { StreamableHTTPServerTransport } = await loadPackage(
    SDK_USER,
    () => import("@modelcontextprotocol/sdk/server/streamableHttp.js"),
  );
  let allowed: Set<string> = new Set();
  const http = createServer((req, res) => {
    // A web page the user visits may reach 127.0.0.1 through a name it controls (DNS rebinding):
    // only this address, by the names it was bound to, and only /mcp, are served.
    const refused = refusal(req.url, req.headers.host, req.headers.origin, allowed);
    if (refused) {
      res.writeHead(refused.status, { "content-type": "text/plain" }).end(refused.message);
      return;
    }
    const server = createMcpServer(service);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void transport.close().then(() => server.close()));
    void server.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((listening, failed) => {
    http.once("error", failed);
    http.listen(address.port, address.host, () => listening());
  });
  const bound = http.address();
  const port = typeof bound === "object" && bound ? bound.port : address.port;
  const hosts =
    address.host === "127.0.0.1" || address.host === "localhost" ? ["127.0.0.1", "localhost"] : [address.host];
  allowed = new Set(hosts.map((h) => `${h}:${port}`));
  io.err(`langgraph-replan mcp: serving ${names.join(", ")} on http://${address.host}:${port}/mcp`);
  return http;
}

/** Why a request is not served (a path other than /mcp, a Host or Origin not this server's), or undefined. */
export function refusal(
  url: string | undefined,
  host: string | undefined,
  origin: string | undefined,
  allowed: ReadonlySet<string>,
): { status: number; message: string } | undefined {
  if (new URL(url ?? "/", "http://x").pathname !== "/mcp")
    return { status: 404, message: "not found: the server is at /mcp" };
  if (!host || !allowed.has(host)) return { status: 403, message: `host ${host ?? "(none)"} is not this server` };
  if (origin !== undefined && !allowed.has(origin.replace(/^https?:\/\//, "")))
    return { status: 403, message: `origin ${origin} may not call this server` };
  return undefined;
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

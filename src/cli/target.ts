/**
 * The checkpoints the command line reads: a SQLite file (`SqliteSaver`) or a PostgreSQL URL
 * (`PostgresSaver`, where the workers run). Each way of getting it wrong ends in a `CliError`
 * whose message says what to give instead.
 */
import { existsSync } from "node:fs";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { createPlanManager } from "../graph/create-plan-manager.js";
import type { Clock } from "../runtime/options.js";

import { loadPackage } from "./packages.js";
import { CliError } from "./target-error.js";

export { CliError } from "./target-error.js";

export interface Target {
  /** The target as shown in messages (a URL without its password). */
  label: string;
  saver: BaseCheckpointSaver;
  /** The PostgreSQL URL, when the workers' queue is there. */
  postgres?: string;
  close(): Promise<void>;
}

const isPostgres = (target: string) => /^postgres(ql)?:\/\//.test(target);

/** The URL with its password hidden, or the path as given. */
export function redact(target: string): string {
  if (!isPostgres(target)) return target;
  try {
    const url = new URL(target);
    if (url.password) url.password = "***";
    return url.toString();
  } catch {
    return target.replace(/:[^:@/]*@/, ":***@");
  }
}

async function openPostgres(url: string): Promise<Target> {
  const label = redact(url);
  if (!URL.canParse(url)) {
    throw new CliError(
      `not a valid PostgreSQL URL: ${label} (expected postgresql://user[:password]@host[:port]/database)`,
    );
  }
  const forUrls = "a postgresql:// URL";
  const { PostgresSaver } = await loadPackage(forUrls, () => import("@langchain/langgraph-checkpoint-postgres"));
  const pg = (await loadPackage(forUrls, () => import("pg"))).default;
  // A first connection of our own, so that an unreachable server fails here, once, with a plain message.
  const probe = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5_000 });
  probe.on("error", () => undefined);
  try {
    await probe.connect();
  } catch (error) {
    throw new CliError(`cannot connect to PostgreSQL at ${label}: ${(error as Error).message}`);
  } finally {
    await probe.end().catch(() => undefined);
  }
  const saver = PostgresSaver.fromConnString(url);
  await saver.setup();
  return { label, saver, postgres: url, close: () => saver.end() };
}

async function openSqlite(path: string): Promise<Target> {
  if (!existsSync(path))
    throw new CliError(`no such file: ${path} (give a SQLite checkpoint file or a postgresql:// URL)`);
  const Database = (await loadPackage("a SQLite file", () => import("better-sqlite3"))).default;
  const { SqliteSaver } = await loadPackage("a SQLite file", () => import("@langchain/langgraph-checkpoint-sqlite"));
  let db: InstanceType<typeof Database>;
  try {
    db = new Database(path, { fileMustExist: true });
    const table = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'checkpoints'").get();
    if (!table) {
      db.close();
      throw new CliError(`${path} holds no LangGraph checkpoints (no "checkpoints" table): is it the right file?`);
    }
  } catch (error) {
    if (error instanceof CliError) throw error;
    throw new CliError(`${path} is not a SQLite database (${(error as Error).message})`);
  }
  const saver = new SqliteSaver(db);
  return {
    label: path,
    saver,
    close: async () => {
      db.close();
    },
  };
}

export function openTarget(target: string | undefined): Promise<Target> {
  if (!target) throw new CliError("missing checkpoints: give a SQLite file or a postgresql:// URL");
  return isPostgres(target) ? openPostgres(target) : openSqlite(target);
}

/**
 * A plan manager with no tools, for reading and writing checkpoints: views, the stop request and
 * the finalize node need the graph's channels and routes, never a tool or a planner. `clock`: the
 * run's, when what it writes is stamped (an answer; see thread-clock.ts). Default: the wall clock.
 */
export function readerGraph(saver: BaseCheckpointSaver, clock?: Pick<Clock, "now">) {
  const planner = {
    plan: async (): Promise<never> => {
      throw new CliError("the command line does not plan: start runs with a worker or your own process");
    },
  };
  return createPlanManager({ tools: [], planner, ...(clock ? { clock } : {}) }).compile({ checkpointer: saver });
}

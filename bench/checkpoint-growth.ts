/**
 * Checkpoint growth (docs/decisions/0011-checkpoint-storage-delta-channels.md): a chain whose every step produces one
 * ~100-byte fact, at 10, 50, 200 and 1,000 steps, on SqliteSaver and PostgresSaver, with the
 * state layout of today's code ("after") and of the base commit ("before", the same workload
 * run against `git archive` of that commit's src in a temporary directory, so the library
 * carries no switch that keeps the old channels).
 *
 * A plan holds at most 200 steps (LIMITS.maxSteps), so a longer run gets its next 200 steps as a new
 * plan version written with `updateState` (as a rolling horizon would, docs/architecture.md "Long goals"): the thread's
 * step records and facts grow exactly as in one long plan.
 * The run stops before its last step (recursion limit, every earlier step checkpointed); resume = a
 * fresh graph on a freshly opened database finishing it.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { tool } from "@langchain/core/tools";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { z } from "zod";
import { managerWrite } from "../src/graph/boundary.js";
import { startPostgres, type PgServer } from "../test-reliability/helpers/postgres.js";
import { fmt, median, type Table } from "./lib.js";

/** The commit before decision 0011: every checkpoint stored every channel whole. */
export const BEFORE_COMMIT = "a90be59";
const ROOT = resolve(import.meta.dirname, "..");
export const SEGMENT = 200;
/** ~100 bytes that do not compress (PostgreSQL's TOAST would squeeze a repeated letter to nothing). */
export const fact = (i: number) =>
  (createHash("sha256").update(`a${i}`).digest("hex") + createHash("sha256").update(`b${i}`).digest("hex")).slice(
    0,
    100,
  );

export type Api = typeof import("../src/index.js");
type Graph = ReturnType<ReturnType<Api["createPlanManager"]>["compile"]>;
type Layout = "before" | "after";
export interface Backend {
  name: "SQLite" | "PostgreSQL";
  /** A fresh, empty database for one run. */
  open(label: string): Promise<Store>;
}
export interface Store {
  /** What cold-get-state.ts opens: the SQLite file or the PostgreSQL URL. */
  target: string;
  saver: () => Promise<{ saver: BaseCheckpointSaver; close: () => Promise<void> }>;
  /** Bytes on disk of the checkpoint tables (SQLite: the file; PostgreSQL: tables, TOAST, indexes). */
  size: () => Promise<number>;
  drop: () => Promise<void>;
}

async function loadBefore(dir: string): Promise<Api> {
  execFileSync("sh", ["-c", `git archive ${BEFORE_COMMIT} src package.json | tar -x -C '${dir}'`], { cwd: ROOT });
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return (await import(pathToFileURL(join(dir, "src", "index.ts")).href)) as Api;
}

export function sqlite(dir: string): Backend {
  return {
    name: "SQLite",
    open: async (label) => {
      const file = join(dir, `${label}.sqlite`);
      return {
        target: file,
        saver: async () => {
          const saver = SqliteSaver.fromConnString(file);
          return {
            saver,
            close: async () => {
              saver.db.close();
            },
          };
        },
        // Measured with every connection closed: the WAL is then folded into the file.
        size: async () =>
          ["", "-wal"].map((s) => (existsSync(file + s) ? statSync(file + s).size : 0)).reduce((a, b) => a + b, 0),
        drop: async () => rmSync(file, { force: true }),
      };
    },
  };
}

/** One SQL statement through psql (the bench has no typed pg client of its own). */
export function psql(url: string, sql: string): string {
  const root = "/usr/lib/postgresql";
  const bin = join(root, readdirSync(root).sort().pop()!, "bin", "psql");
  return execFileSync(bin, [url, "-tAc", sql], { encoding: "utf8" }).trim();
}

export function postgres(server: PgServer): Backend {
  return {
    name: "PostgreSQL",
    open: async (label) => {
      const db = `growth_${label.replace(/\W/g, "_")}`;
      psql(server.url, `CREATE DATABASE ${db}`);
      const url = server.url.replace(/\/postgres$/, `/${db}`);
      return {
        target: url,
        saver: async () => {
          const saver = PostgresSaver.fromConnString(url);
          await saver.setup();
          return { saver, close: () => saver.end() };
        },
        size: async () =>
          Number(
            psql(
              url,
              `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c
               JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'`,
            ),
          ),
        drop: async () => {
          psql(server.url, `DROP DATABASE ${db}`);
        },
      };
    },
  };
}

export function segmentPlan(from: number, count: number) {
  return {
    steps: Array.from({ length: count }, (_, k) => {
      const i = from + k;
      return {
        id: `s${i}`,
        goal: `Step ${i} of the long run`,
        tool: "work",
        args: { index: i },
        produces: [`f${i}`],
        ...(k > 0 ? { dependsOn: [`s${i - 1}`] } : {}),
      };
    }),
  };
}

interface Row {
  bytes: number;
  getStateMs: number;
  coldMs: number;
  resumeMs: number;
  historyMs?: number;
}

const thread = { configurable: { thread_id: "growth" } };

/**
 * A manager thread of `n` steps in `store`, stopped before its last step: what a process killed there
 * leaves behind. Returns a graph factory and the tool's calls (to check what a resume ran).
 */
export async function stoppedManagerThread(api: Api, store: Store, n: number) {
  const calls: number[] = [];
  const work = tool(
    async ({ index }: { index: number }) => {
      calls.push(index);
      return { [`f${index}`]: fact(index) };
    },
    {
      name: "work",
      description: "work",
      schema: z.object({ index: z.number() }).passthrough(),
    },
  );
  const graphFor = (saver: BaseCheckpointSaver) =>
    api
      .createPlanManager({
        tools: [work],
        planner: api.staticPlanner({ plan: segmentPlan(0, Math.min(SEGMENT, n)) }),
        policy: { maxDecisions: 10_000 },
      })
      .compile({ checkpointer: saver });

  const lastFrom = Math.floor((n - 1) / SEGMENT) * SEGMENT;
  const { saver, close } = await store.saver();
  for (let from = 0; from < n; from += SEGMENT) {
    const count = Math.min(SEGMENT, n - from);
    const graph = graphFor(saver);
    // The last segment stops before its last step (the planner and all but one step fit the limit),
    // with every earlier step checkpointed: what a process killed there leaves behind.
    // (Found by trying: LangGraph counts a run from input and one after updateState differently.)
    const limit = from === lastFrom ? { recursionLimit: from === 0 ? count - 1 : count - 3 } : {};
    let run: Promise<unknown>;
    if (from === 0) run = graph.invoke({ goal: "a long run" }, { ...thread, ...limit });
    else {
      // The next 200 steps, as a rolling horizon would add them (a thread plans once; docs/architecture.md "Long
      // goals").
      const plan = { version: from / SEGMENT + 1, steps: segmentPlan(from, count).steps, assumptions: [] };
      // The manager's own kind of write (a plan version), which `updateState` refuses from users.
      await graph.updateState(thread, managerWrite({ plan, status: "running" }) as never, "planner");
      run = graph.invoke(null, { ...thread, ...limit });
    }
    await run.then(
      () => {
        if (from === lastFrom) throw new Error("the run was not stopped before its last step");
      },
      (error: unknown) => {
        if (from !== lastFrom || (error as Error).name !== "GraphRecursionError") throw error;
      },
    );
  }
  await close();
  return { graphFor, calls };
}

async function workload(api: Api, source: string, kind: Backend["name"], store: Store, n: number): Promise<Row> {
  const { graphFor, calls } = await stoppedManagerThread(api, store, n);
  // Resume after the crash: a new process would open the database and invoke with no input.
  const resumed = await timed(store, graphFor, async (g) => {
    calls.length = 0;
    const out = (await g.invoke(null, thread)) as { status: string };
    // The recursion limit leaves the last one or two steps (it counts the planner's superstep or not).
    const tail = calls.length > 0 && calls.length <= 2 && calls[calls.length - 1] === n - 1;
    if (out.status !== "completed" || !tail)
      throw new Error(`resume ended ${out.status} after running steps ${calls.join()}`);
  });
  const getStates: number[] = [];
  for (let i = 0; i < 5; i++)
    getStates.push(
      await timed(store, graphFor, async (g) => {
        const s = await g.getState(thread);
        if (Object.keys(s.values.facts).length !== n) throw new Error("getState lost facts");
      }),
    );
  const historyMs =
    n <= SEGMENT
      ? await timed(store, graphFor, async (g) => {
          for await (const _ of g.getStateHistory(thread));
        })
      : undefined;
  const cold = [0, 1, 2].map(() =>
    Number(
      execFileSync(
        process.execPath,
        ["--import", "tsx", join(ROOT, "bench", "cold-get-state.ts"), source, kind, store.target],
        {
          encoding: "utf8",
        },
      ),
    ),
  );
  return {
    bytes: await store.size(),
    getStateMs: median(getStates),
    coldMs: median(cold),
    resumeMs: resumed,
    historyMs,
  };
}

/** Time of `fn` on a freshly opened database connection and graph (what a new process pays). */
async function timed(
  store: Store,
  graphFor: (saver: BaseCheckpointSaver) => Graph,
  fn: (graph: Graph) => Promise<void>,
): Promise<number> {
  const { saver, close } = await store.saver();
  try {
    const graph = graphFor(saver);
    const t0 = performance.now();
    await fn(graph);
    return performance.now() - t0;
  } finally {
    await close();
  }
}

export async function checkpointGrowth(quick: boolean, only?: number[]): Promise<Table> {
  const sizes = only ?? (quick ? [10, 50, 200] : [10, 50, 200, 1000]);
  const dir = mkdtempSync(join(tmpdir(), "bench-growth-"));
  const beforeDir = mkdtempSync(join(tmpdir(), "bench-growth-before-"));
  const server = await startPostgres();
  const rows: (string | number)[][] = [];
  try {
    const apis: Record<Layout, Api> = {
      before: await loadBefore(beforeDir),
      after: (await import("../src/index.js")) as Api,
    };
    const indexes: Record<Layout, string> = {
      before: join(beforeDir, "src", "index.ts"),
      after: join(ROOT, "src", "index.ts"),
    };
    for (const backend of [sqlite(dir), postgres(server)]) {
      for (const n of sizes) {
        const result = {} as Record<Layout, Row>;
        for (const layout of ["before", "after"] as const) {
          const store = await backend.open(`${layout}_${n}`);
          result[layout] = await workload(apis[layout], indexes[layout], backend.name, store, n);
          await store.drop();
        }
        const { before: b, after: a } = result;
        const ms = (x?: number) => (x === undefined ? "—" : fmt(x, 1));
        rows.push([
          backend.name,
          n,
          Math.round(b.bytes / n),
          Math.round(a.bytes / n),
          fmt(b.bytes / 2 ** 20, 2),
          fmt(a.bytes / 2 ** 20, 2),
          ms(b.getStateMs),
          ms(a.getStateMs),
          ms(b.coldMs),
          ms(a.coldMs),
          ms(b.resumeMs),
          ms(a.resumeMs),
          ms(b.historyMs),
          ms(a.historyMs),
        ]);
      }
    }
  } finally {
    server.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(beforeDir, { recursive: true, force: true });
  }
  return {
    title: "Checkpoint growth: a chain of steps each producing one ~100-byte fact",
    head: [
      "saver",
      "steps",
      "bytes/step before",
      "bytes/step after",
      "DB MB before",
      "DB MB after",
      "getState ms before",
      "getState ms after",
      "cold getState ms before",
      "cold getState ms after",
      "resume ms before",
      "resume ms after",
      "history ms before",
      "history ms after",
    ],
    rows,
    note:
      `before = commit ${BEFORE_COMMIT} (every channel stored whole in every checkpoint); after = delta channels ` +
      "(decision record 0011). bytes/step = database size after the run ÷ steps (SQLite: file bytes; PostgreSQL: " +
      "tables + TOAST + indexes). getState: median of 5, each on a freshly opened database; cold getState: median " +
      "of 3 new processes, from opening the database to the state (cold-get-state.ts); resume: a fresh graph " +
      "finishing the run after a crash in its last step; history: iterating getStateHistory (up to 200 steps). " +
      "Over 200 steps, each next 200 steps arrive as a new plan version on the same thread.",
  };
}

/**
 * State loads (decision record 0016): a manager thread of 200 and 1,000 steps (each producing one
 * ~100-byte fact, stopped before its last step, as in checkpoint-growth.ts) against a bare LangGraph
 * thread holding the same plan, step records, facts and decisions in plain channels, on SqliteSaver and
 * PostgresSaver, side by side in one run. Three ways to read the manager's thread: as the library
 * does (one query per load: the saver adapters, storage/sqlite.ts and storage/postgres.ts) and
 * with LangGraph's base walk (one `getTuple` per ancestor: "before"). Each resume runs on its own copy of the stopped thread.
 */
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Annotation, BaseCheckpointSaver, BinaryOperatorAggregate, END, START, StateGraph } from "@langchain/langgraph";
import type { RunnableConfig } from "@langchain/core/runnables";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { startPostgres, type PgServer } from "../test-reliability/helpers/postgres.js";
import { psql, SEGMENT, stoppedManagerThread, type Api } from "./checkpoint-growth.js";
import { fmt, median, type Table } from "./lib.js";

type Rec = Record<string, unknown>;
type Variant = "bare" | "manager" | "before";
const VARIANTS: Variant[] = ["bare", "manager", "before"];
const thread = { configurable: { thread_id: "growth" } };
const baseWalk = BaseCheckpointSaver.prototype.getDeltaChannelHistory;

/** LangGraph's own walk: a saver view whose `getDeltaChannelHistory` the library leaves alone. */
function withBaseWalk(saver: BaseCheckpointSaver): BaseCheckpointSaver {
  const view = Object.create(saver) as BaseCheckpointSaver;
  Object.defineProperty(view, "getDeltaChannelHistory", { value: (o: never) => baseWalk.call(saver, o) });
  return view;
}

/** What one step of the manager's finished run left in its state: written by the bare graph's step `i`. */
interface StepRecords {
  plan?: Rec;
  steps: Rec;
  facts: Rec;
  decisions: Rec[];
}

function recordsOf(values: Rec, n: number): StepRecords[] {
  const steps = values.steps as Rec;
  const facts = values.facts as Rec;
  const decisions = values.decisions as Rec[];
  return Array.from({ length: n }, (_, i) => ({
    ...(i % SEGMENT === 0 ? { plan: values.plan as Rec } : {}),
    steps: { [`s${i}`]: steps[`s${i}`] },
    facts: { [`f${i}`]: facts[`f${i}`] },
    decisions: decisions.filter((d) => d.stepId === `s${i}`),
  }));
}

const merge = (a: Rec, b: Rec) => ({ ...a, ...b });
/** Bare LangGraph holding the same records in plain channels: every checkpoint stores them whole. */
function bareGraph(records: StepRecords[], saver: BaseCheckpointSaver) {
  const State = Annotation.Root({
    i: Annotation<number>(),
    plan: Annotation<Rec>(),
    steps: new BinaryOperatorAggregate<Rec, Rec>(merge, () => ({})),
    facts: new BinaryOperatorAggregate<Rec, Rec>(merge, () => ({})),
    decisions: new BinaryOperatorAggregate<Rec[], Rec[]>(
      (a, b) => a.concat(b),
      () => [],
    ),
  });
  const step = (s: typeof State.State) => ({ i: s.i + 1, ...records[s.i]! });
  return new StateGraph(State)
    .addNode("step", step)
    .addEdge(START, "step")
    .addConditionalEdges("step", (s) => (s.i < records.length ? "step" : END))
    .compile({ checkpointer: saver })
    .withConfig({ recursionLimit: records.length + 10 });
}

interface Db {
  /** A saver on a fresh connection to this copy, and how to close it. */
  open(): Promise<{ saver: BaseCheckpointSaver; close: () => Promise<void> }>;
  size(): number;
  /** A copy of this database (for a resume that changes it). */
  copy(label: string): Promise<Db>;
  drop(): Promise<void>;
}

function sqliteDb(file: string): Db {
  return {
    open: async () => {
      const saver = SqliteSaver.fromConnString(file);
      return { saver, close: async () => void saver.db.close() };
    },
    size: () => {
      const saver = SqliteSaver.fromConnString(file);
      const { b } = saver.db
        .prepare("SELECT page_count * page_size AS b FROM pragma_page_count(), pragma_page_size()")
        .get() as {
        b: number;
      };
      saver.db.close();
      return b;
    },
    copy: async (label) => {
      const to = file.replace(/\.sqlite$/, `_${label}.sqlite`);
      copyFileSync(file, to);
      return sqliteDb(to);
    },
    drop: async () => rmSync(file, { force: true }),
  };
}

function postgresDb(server: PgServer, name: string): Db {
  const url = server.url.replace(/\/postgres$/, `/${name}`);
  return {
    open: async () => {
      const saver = PostgresSaver.fromConnString(url);
      await saver.setup();
      return { saver, close: () => saver.end() };
    },
    size: () =>
      Number(
        psql(
          url,
          `SELECT COALESCE(SUM(pg_total_relation_size(c.oid)), 0) FROM pg_class c
           JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'`,
        ),
      ),
    copy: async (label) => {
      // A template must have no other session: every saver on it has ended, and with it the
      // thread claims' lock connections.
      psql(server.url, `CREATE DATABASE ${name}_${label} TEMPLATE ${name}`);
      return postgresDb(server, `${name}_${label}`);
    },
    drop: async () => void psql(server.url, `DROP DATABASE ${name}`),
  };
}

async function createDb(kind: "SQLite" | "PostgreSQL", dir: string, server: PgServer, name: string): Promise<Db> {
  if (kind === "SQLite") return sqliteDb(join(dir, `${name}.sqlite`));
  psql(server.url, `CREATE DATABASE ${name}`);
  return postgresDb(server, name);
}

type Graph = {
  getState(c: RunnableConfig): Promise<{ values: Rec }>;
  getStateHistory(c: RunnableConfig): AsyncIterable<unknown>;
  invoke(i: null, c: RunnableConfig): Promise<unknown>;
};

async function timed(db: Db, graphOn: (s: BaseCheckpointSaver) => Graph, fn: (g: Graph) => Promise<void>) {
  const { saver, close } = await db.open();
  try {
    const t0 = performance.now();
    await fn(graphOn(saver));
    return performance.now() - t0;
  } finally {
    await close();
  }
}

interface Measured {
  getState: number[];
  resume: number[];
  history: number[];
}

async function measure(
  kind: "SQLite" | "PostgreSQL",
  n: number,
  api: Api,
  dir: string,
  server: PgServer,
  quick: boolean,
) {
  const label = `loads_${kind === "SQLite" ? "s" : "p"}_${n}`;
  const managerDb = await createDb(kind, dir, server, `${label}_m`);
  const bareDb = await createDb(kind, dir, server, `${label}_b`);
  const { graphFor, calls } = await stoppedManagerThread(api, storeOf(managerDb), n);
  // The records the bare thread holds: the manager's, read after a finished copy of its run.
  const finished = await managerDb.copy("done");
  const { saver: fs, close: fc } = await finished.open();
  calls.length = 0;
  const values = (await graphFor(fs).invoke(null, thread)) as Rec;
  // The bare thread stops with as many steps left as the manager's resume runs (one or two).
  const left = calls.length;
  await fc();
  await finished.drop();
  const records = recordsOf(values, n);
  {
    const { saver, close } = await bareDb.open();
    await bareGraph(records, saver)
      .invoke({ i: 0 }, { ...thread, recursionLimit: n - left })
      .catch((e: Error) => {
        if (e.name !== "GraphRecursionError") throw e;
      });
    await close();
  }
  const graphs: Record<Variant, (s: BaseCheckpointSaver) => Graph> = {
    bare: (s) => bareGraph(records, s) as unknown as Graph,
    manager: (s) => graphFor(s) as unknown as Graph,
    before: (s) => graphFor(withBaseWalk(s)) as unknown as Graph,
  };
  const dbOf = (v: Variant) => (v === "bare" ? bareDb : managerDb);
  const out = Object.fromEntries(
    VARIANTS.map((v) => [v, { getState: [], resume: [], history: [] } as Measured]),
  ) as Record<Variant, Measured>;
  for (let k = 0; k < 5; k++)
    for (const v of VARIANTS)
      out[v].getState.push(await timed(dbOf(v), graphs[v], async (g) => void (await g.getState(thread))));
  for (let k = 0; k < (quick ? 1 : 3); k++)
    for (const v of VARIANTS) {
      const copy = await dbOf(v).copy(`r${k}${v[0]}`);
      out[v].resume.push(await timed(copy, graphs[v], async (g) => void (await g.invoke(null, thread))));
      await copy.drop();
    }
  for (const v of VARIANTS) {
    // LangGraph's walk lists 1,000 steps in tens of minutes on PostgreSQL (quadratic round trips).
    if (v === "before" && n > SEGMENT) continue;
    out[v].history.push(
      await timed(dbOf(v), graphs[v], async (g) => {
        for await (const _ of g.getStateHistory(thread));
      }),
    );
  }
  const bytes = { manager: managerDb.size() / n, bare: bareDb.size() / n };
  await managerDb.drop();
  await bareDb.drop();
  return { out, bytes };
}

/** checkpoint-growth's store shape for one database. */
function storeOf(db: Db) {
  return { target: "", saver: () => db.open(), size: async () => db.size(), drop: () => db.drop() };
}

export async function loads(
  quick: boolean,
  only?: number[],
  kinds: readonly ("SQLite" | "PostgreSQL")[] = ["SQLite", "PostgreSQL"],
): Promise<Table> {
  const sizes = only ?? (quick ? [200] : [200, 1000]);
  const dir = mkdtempSync(join(tmpdir(), "bench-loads-"));
  const server = await startPostgres();
  const rows: (string | number)[][] = [];
  try {
    const api = (await import("../src/index.js")) as Api;
    for (const kind of kinds)
      for (const n of sizes) {
        const { out, bytes } = await measure(kind, n, api, dir, server, quick);
        const med = (v: Variant, k: keyof Measured) => (out[v][k].length ? median(out[v][k]) : Number.NaN);
        for (const k of ["getState", "resume", "history"] as const) {
          const bare = med("bare", k);
          const cell = (v: Variant) => (Number.isNaN(med(v, k)) ? "—" : fmt(med(v, k), 1));
          const ratio = (v: Variant) => (Number.isNaN(med(v, k)) ? "—" : fmt(med(v, k) / bare, 2));
          rows.push([kind, n, k, cell("bare"), cell("before"), ratio("before"), cell("manager"), ratio("manager")]);
        }
        rows.push([kind, n, "bytes/step", Math.round(bytes.bare), "", "", Math.round(bytes.manager), ""]);
      }
  } finally {
    server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: "State loads: the manager's thread against a bare LangGraph thread holding the same records",
    head: ["saver", "steps", "load", "bare ms", "before ms", "before/bare", "after ms", "after/bare"],
    rows,
    note:
      "A chain whose steps each produce one ~100-byte fact, stopped before its last step; over 200 steps the next 200 " +
      "arrive as a new plan version. bare = plain LangGraph channels holding the manager's plan, step records, facts " +
      "and decisions, written one step per superstep; before = the manager with LangGraph's base getDeltaChannelHistory " +
      "(one getTuple per ancestor); after = the library's one-query history (storage/sqlite.ts and storage/postgres.ts). getState: " +
      "median of 5 on fresh connections; resume: a fresh graph finishing the stopped run on a copy of the database " +
      "(median of 3); history: iterating all of getStateHistory once. bytes/step: database size ÷ steps after the run.",
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { printTable } = await import("./lib.js");
  const sizes = process.argv
    .slice(2)
    .filter((a) => /^\d+$/.test(a))
    .map(Number);
  const kinds: ("SQLite" | "PostgreSQL")[] = (["SQLite", "PostgreSQL"] as const).filter(
    (k) => !process.argv.includes(`--no-${k}`),
  );
  printTable(await loads(!process.argv.includes("--full"), sizes.length ? sizes : undefined, kinds));
}

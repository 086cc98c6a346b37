/**
 * `npx tsx bench/storage-layouts.ts [steps]`: the comparison behind decision record 0011, on bare
 * LangGraph (no manager), so only the state layout differs. One node runs `steps` times; each
 * run adds one step record and one ~100-byte fact, written as just the new entries. Layouts:
 *   plain   — one merged map per kind (the manager before 0011): every checkpoint stores both maps
 *   sharded — each map split over 16 channels by key: a step changes one shard of each
 *   delta    — LangGraph's DeltaChannel: a checkpoint stores no map, only the step's writes
 * Prints bytes per step and getState time (fresh connection, median of 5) on SQLite and PostgreSQL.
 */
import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  Annotation,
  BinaryOperatorAggregate,
  DeltaChannel,
  END,
  START,
  StateGraph,
  type BaseCheckpointSaver,
} from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { startPostgres } from "../test-reliability/helpers/postgres.js";
import { fmt, median } from "./lib.js";

type Entry = Record<string, unknown>;
type Layout = "plain" | "sharded" | "delta";
const SHARDS = 16;
const steps = Number(process.argv[2] ?? 200);

const merge = (a: Record<string, Entry>, b: Record<string, Entry>) => ({ ...a, ...b });
const mergeBatch = (a: Record<string, Entry>, bs: Record<string, Entry>[]) => Object.assign({}, a, ...bs);
const map = (layout: Layout) =>
  layout === "delta"
    ? new DeltaChannel<Record<string, Entry>, Record<string, Entry>>(mergeBatch, {
        initialValueFactory: () => ({}),
        snapshotFrequency: 5000,
      })
    : new BinaryOperatorAggregate<Record<string, Entry>, Record<string, Entry>>(merge, () => ({}));

function graph(layout: Layout, saver: BaseCheckpointSaver) {
  const names = (kind: string) =>
    layout === "sharded" ? Array.from({ length: SHARDS }, (_, i) => `${kind}${i}`) : [kind];
  const spec: Record<string, unknown> = { i: Annotation<number>() };
  for (const kind of ["steps", "facts"]) for (const name of names(kind)) spec[name] = map(layout);
  const State = Annotation.Root(spec as { i: ReturnType<typeof Annotation<number>> });
  const shard = (kind: string, i: number) => (layout === "sharded" ? `${kind}${i % SHARDS}` : kind);
  const step = (s: { i: number }) => {
    const at = new Date(1_700_000_000_000 + s.i * 1000).toISOString();
    const value = (
      createHash("sha256").update(`a${s.i}`).digest("hex") + createHash("sha256").update(`b${s.i}`).digest("hex")
    ).slice(0, 100);
    return {
      i: s.i + 1,
      [shard("steps", s.i)]: {
        [`s${s.i}`]: { status: "succeeded", attempts: 1, startedAt: at, endedAt: at, output: { ok: true } },
      },
      [shard("facts", s.i)]: {
        [`f${s.i}`]: {
          value,
          label: "trusted",
          producedBy: `s${s.i}`,
          planVersion: 1,
          assumptions: [],
          derivedFrom: [],
        },
      },
    };
  };
  return new StateGraph(State)
    .addNode("step", step as never)
    .addEdge(START, "step")
    .addConditionalEdges("step", (s: { i: number }) => (s.i < steps ? "step" : END))
    .compile({ checkpointer: saver })
    .withConfig({ recursionLimit: steps + 10 });
}

async function measure(
  layout: Layout,
  open: () => Promise<BaseCheckpointSaver>,
  close: (s: BaseCheckpointSaver) => Promise<void>,
) {
  const config = { configurable: { thread_id: "t" } };
  const saver = await open();
  await graph(layout, saver).invoke({ i: 0 }, config);
  await close(saver);
  const times: number[] = [];
  for (let k = 0; k < 5; k++) {
    const fresh = await open();
    const t0 = performance.now();
    await graph(layout, fresh).getState(config);
    times.push(performance.now() - t0);
    await close(fresh);
  }
  return median(times);
}

const dir = mkdtempSync(join(tmpdir(), "layouts-"));
const pg = await startPostgres();
try {
  console.log(`${steps} steps`);
  console.log("saver       layout   bytes/step  getState ms");
  for (const layout of ["plain", "sharded", "delta"] as const) {
    const file = join(dir, `${layout}.sqlite`);
    const ms = await measure(
      layout,
      async () => SqliteSaver.fromConnString(file),
      async (s) => void (s as SqliteSaver).db.close(),
    );
    console.log(
      `SQLite      ${layout.padEnd(8)} ${String(Math.round(statSync(file).size / steps)).padStart(10)}  ${fmt(ms, 1)}`,
    );
  }
  const { execFileSync } = await import("node:child_process");
  const { readdirSync } = await import("node:fs");
  const psql = (url: string, sql: string) =>
    execFileSync(
      join("/usr/lib/postgresql", readdirSync("/usr/lib/postgresql").sort().pop()!, "bin", "psql"),
      [url, "-tAc", sql],
      {
        encoding: "utf8",
      },
    ).trim();
  for (const layout of ["plain", "sharded", "delta"] as const) {
    psql(pg.url, `CREATE DATABASE l_${layout}`);
    const url = pg.url.replace(/\/postgres$/, `/l_${layout}`);
    const ms = await measure(
      layout,
      async () => {
        const s = PostgresSaver.fromConnString(url);
        await s.setup();
        return s;
      },
      (s) => (s as PostgresSaver).end(),
    );
    const bytes = Number(
      psql(
        url,
        "SELECT SUM(pg_total_relation_size(c.oid)) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'",
      ),
    );
    console.log(`PostgreSQL  ${layout.padEnd(8)} ${String(Math.round(bytes / steps)).padStart(10)}  ${fmt(ms, 1)}`);
  }
} finally {
  pg.stop();
  rmSync(dir, { recursive: true, force: true });
}

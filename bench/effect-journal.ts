/**
 * What the effect journal costs a side-effecting call (storage/journal.ts;
 * docs/decisions/0038-effect-journal.md): per call, a lookup, the intent and the result.
 * Measured two ways, side by side in one run: the three journal writes alone on each backend, and
 * runs of N steps of the same tool on SQLite with the steps side-effecting (keyed and journaled)
 * against the same steps marked idempotent (no key, no journal) — today's path for such a tool.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "@langchain/core/tools";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { z } from "zod";
import { createPlanManager, staticPlanner, type PlanDraft } from "../src/index.js";
import { saverAdapter } from "../src/storage/index.js";
import { startPostgres } from "../test-reliability/helpers/postgres.js";
import { fmt, median, type Table } from "./lib.js";

const charge = tool(async (args: { n: number }) => ({ [`r${args.n}`]: `receipt-${args.n}` }), {
  name: "charge",
  description: "charges",
  schema: z.object({ n: z.number() }),
});

function chain(n: number, sideEffecting: boolean): PlanDraft {
  return {
    steps: Array.from({ length: n }, (_, i) => ({
      id: `s${i}`,
      goal: `Charge ${i}`,
      tool: "charge",
      args: { n: i },
      produces: [`r${i}`],
      ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}),
      ...(sideEffecting ? { sideEffects: ["charges"], idempotent: false } : {}),
    })),
  };
}

/** Median ms of one side-effecting call's journal work: lookup, intent, result. */
async function journalOps(saver: BaseCheckpointSaver, calls: number): Promise<number> {
  const journal = saverAdapter(saver).journal;
  const ms: number[] = [];
  for (let i = 0; i < calls + 20; i++) {
    const key = `bench:${i.toString(16).padStart(16, "0")}`;
    const t0 = performance.now();
    await journal.lookup("bench", key);
    await journal.intent("bench", { key, stepId: "pay", tool: "charge", args: { n: i }, attempt: 1, at: "2026" });
    await journal.result("bench", key, { ok: true, output: { receipt: `r-${i}` } });
    if (i >= 20) ms.push(performance.now() - t0);
  }
  return median(ms);
}

let threads = 0;

/** Median ms per step of a run of `steps` steps, over `runs` runs (fresh thread each). */
async function perStep(saver: BaseCheckpointSaver, steps: number, sideEffecting: boolean, runs: number) {
  const plan = chain(steps, sideEffecting);
  const graph = createPlanManager({ tools: [charge], planner: staticPlanner({ plan }) }).compile({
    checkpointer: saver,
  });
  const ms: number[] = [];
  for (let i = 0; i < runs + 2; i++) {
    const t0 = performance.now();
    await graph.invoke({ goal: "charge" }, { configurable: { thread_id: `${sideEffecting}-${(threads += 1)}` } });
    if (i >= 2) ms.push((performance.now() - t0) / steps);
  }
  return median(ms);
}

export async function effectJournal(quick: boolean): Promise<Table> {
  const dir = mkdtempSync(join(tmpdir(), "bench-journal-"));
  const pg = await startPostgres();
  const calls = quick ? 200 : 2_000;
  const runs = quick ? 5 : 15;
  const steps = 20;
  const rows: (string | number)[][] = [];
  try {
    const postgres = PostgresSaver.fromConnString(pg.url);
    await postgres.setup();
    const sqlite = SqliteSaver.fromConnString(join(dir, "j.sqlite"));
    // A run first: SqliteSaver switches its file to WAL when LangGraph first uses it, as in real use.
    const off = await perStep(sqlite, steps, false, runs);
    const on = await perStep(sqlite, steps, true, runs);
    const offAgain = await perStep(sqlite, steps, false, runs);
    const onAgain = await perStep(sqlite, steps, true, runs);
    const plain = (off + offAgain) / 2;
    const journaled = (on + onAgain) / 2;
    rows.push([
      `SqliteSaver (file): a run of ${steps} steps, per step`,
      "—",
      fmt(plain, 2),
      fmt(journaled, 2),
      fmt(journaled - plain, 3),
    ]);
    for (const [name, saver] of [
      ["SqliteSaver (file): lookup + intent + result", sqlite],
      ["PostgresSaver: lookup + intent + result", postgres],
      ["MemorySaver (in-process map): lookup + intent + result", new MemorySaver()],
    ] as const) {
      rows.push([name, fmt(await journalOps(saver, calls), 3), "—", "—", "—"]);
    }
    sqlite.db.close();
    await postgres.end();
  } finally {
    pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: "Effect journal: cost per side-effecting call",
    note:
      `Journal work alone: median ms of ${calls} calls' lookup + intent + result. Runs: median ms per step of ` +
      `${runs} runs of ${steps} steps, twice each, interleaved: the same tool with its steps marked idempotent ` +
      "(no key, no journal) and side-effecting (keyed and journaled); the difference includes computing the key.",
    head: ["what", "journal ms per call", "idempotent steps ms/step", "side-effecting ms/step", "difference ms/step"],
    rows,
  };
}

/**
 * What holding a thread across processes costs a run (graph/process-claim.ts): the hold is taken
 * once per `invoke`, not per step. Per saver: the hold alone (take + release, median of many),
 * and a one-step run on the same saver for scale. MemorySaver has only the in-process hold.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "@langchain/core/tools";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { z } from "zod";
import { holdThread } from "../src/graph/process-claim.js";
import { createPlanManager, staticPlanner } from "../src/index.js";
import { startPostgres } from "../test-reliability/helpers/postgres.js";
import { fmt, median, type Table } from "./lib.js";

const work = tool(async () => ({ v: 1 }), { name: "work", description: "work", schema: z.object({}) });
const plan = { steps: [{ id: "s0", goal: "Step 0", tool: "work", produces: ["v"] }] };

async function timeHold(saver: BaseCheckpointSaver, runs: number): Promise<number> {
  const ms: number[] = [];
  for (let i = 0; i < runs + 10; i++) {
    const t0 = performance.now();
    const run = await holdThread({ checkpointer: saver, threadId: `hold-${i}`, namespace: "" });
    const freed = new Promise<void>((resolve) => run.whenFree(resolve));
    run.end();
    await freed;
    if (i >= 10) ms.push(performance.now() - t0);
  }
  return median(ms);
}

async function timeRun(saver: BaseCheckpointSaver, runs: number): Promise<number> {
  const graph = createPlanManager({ tools: [work], planner: staticPlanner({ plan }) }).compile({ checkpointer: saver });
  const ms: number[] = [];
  for (let i = 0; i < runs + 3; i++) {
    const t0 = performance.now();
    await graph.invoke({ goal: "one step" }, { configurable: { thread_id: `run-${i}` } });
    if (i >= 3) ms.push(performance.now() - t0);
  }
  return median(ms);
}

export async function threadClaims(quick: boolean): Promise<Table> {
  const dir = mkdtempSync(join(tmpdir(), "bench-claims-"));
  const pg = await startPostgres();
  const holds = quick ? 50 : 300;
  const runs = quick ? 10 : 40;
  const rows: (string | number)[][] = [];
  try {
    const postgres = PostgresSaver.fromConnString(pg.url);
    await postgres.setup();
    const savers: [string, BaseCheckpointSaver][] = [
      ["MemorySaver (in-process hold only)", new MemorySaver()],
      ["SqliteSaver (file): lease row", SqliteSaver.fromConnString(join(dir, "c.sqlite"))],
      ["PostgresSaver: session advisory lock", postgres],
    ];
    for (const [name, saver] of savers) {
      // Runs first: SqliteSaver switches its file to WAL when LangGraph first uses it, as in real use.
      const run = await timeRun(saver, runs);
      const hold = await timeHold(saver, holds);
      rows.push([name, fmt(hold, 3), fmt(run, 2), `${fmt((hold / run) * 100, 1)}%`]);
    }
    await postgres.end();
  } finally {
    pg.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: "Holding a thread across processes: cost per invoke",
    note:
      `Median ms of ${holds} holds (take + release) and ${runs} one-step runs per saver; the hold is taken once ` +
      "per invoke, so a run of N steps pays it once.",
    head: ["saver", "hold ms", "one-step run ms", "hold / run"],
    rows,
  };
}

/**
 * Checkpoint growth: a 200-step plan with 0, 5 and 10 replans on SqliteSaver. The last
 * checkpoint must stay within 2× the JSON of (current plan + step runs + facts + records):
 * old plan versions are reverse diffs, not copies.
 */
import { mkdtempSync, rmSync, statSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "@langchain/core/tools";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { z } from "zod";
import {
  AssumptionBrokenError,
  createPlanManager,
  staticPlanner,
  type PlanDraft,
  type ReplanRequest,
} from "../src/index.js";
import { fmt, type Table } from "./lib.js";

function plan(n: number, replans: number): { draft: PlanDraft; breakAt: Set<number> } {
  const every = Math.floor(n / (replans + 1));
  const breakAt = new Set(Array.from({ length: replans }, (_, i) => (i + 1) * every));
  const steps = Array.from({ length: n }, (_, i) => ({
    id: `s${i}`,
    goal: `Step ${i} of the long plan`,
    tool: "work",
    args: { index: i },
    produces: [`f${i}`],
    // Steps that will break are side branches: the chain goes around them, so a replan is local.
    ...(i > 0 ? { dependsOn: [breakAt.has(i - 1) ? `s${i - 2}` : `s${i - 1}`] } : {}),
    ...(breakAt.has(i) ? { assumptions: [`a${i}`] } : {}),
  }));
  return {
    draft: { steps, assumptions: [...breakAt].map((i) => ({ id: `a${i}`, statement: `step ${i}'s source is right` })) },
    breakAt,
  };
}

export async function checkpointGrowth(quick: boolean): Promise<Table> {
  const n = quick ? 100 : 200;
  const dir = mkdtempSync(join(tmpdir(), "bench-growth-"));
  const rows: (string | number)[][] = [];
  try {
    for (const replans of [0, 5, 10]) {
      const { draft, breakAt } = plan(n, replans);
      const work = tool(
        async ({ index, source }: { index?: number; source?: string }) => {
          if (index !== undefined && breakAt.has(index) && source !== "mirror")
            throw new AssumptionBrokenError(`a${index}`, "source moved");
          return { [`f${index ?? 0}`]: `value ${index}` };
        },
        {
          name: "work",
          description: "work",
          schema: z.object({ index: z.number().optional(), source: z.string().optional() }).passthrough(),
        },
      );
      // The replacement keeps the id shape but points at another source: a small, local change.
      const replan = (r: ReplanRequest): PlanDraft => ({
        steps: r.affectedSteps.map((s) => ({
          ...s,
          id: `${s.id}_alt`,
          assumptions: [],
          args: { ...s.args, source: "mirror" },
        })),
      });
      const file = join(dir, `g${replans}.sqlite`);
      const saver = SqliteSaver.fromConnString(file);
      const graph = createPlanManager({
        tools: [work],
        planner: staticPlanner({ plan: draft, replan }),
        policy: { maxReplans: 20, maxDecisions: 1000 },
      }).compile({ checkpointer: saver });
      const config = { configurable: { thread_id: "growth" } };
      const out = (await graph.invoke({ goal: "long" }, config)) as Record<string, unknown> & {
        status: string;
        replans: unknown[];
      };
      const sizes = saver.db
        .prepare(
          "SELECT length(checkpoint) AS c, length(metadata) AS m FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id",
        )
        .all("growth") as { c: number; m: number }[];
      const writes = saver.db
        .prepare("SELECT COALESCE(SUM(length(value)), 0) AS w FROM writes WHERE thread_id = ?")
        .get("growth") as { w: number };
      saver.db.close();
      const fileSize = ["", "-wal"]
        .map((s) => (existsSync(file + s) ? statSync(file + s).size : 0))
        .reduce((a, b) => a + b, 0);
      const reference = JSON.stringify({
        plan: out.plan,
        steps: out.steps,
        facts: out.facts,
        decisions: out.decisions,
        replans: out.replans,
        sideEffects: out.sideEffects,
      }).length;
      const last = sizes[sizes.length - 1]!.c;
      const mean = sizes.reduce((s, r) => s + r.c, 0) / sizes.length;
      rows.push([
        replans,
        out.status,
        out.replans.length,
        sizes.length,
        fmt(mean / 1024, 1),
        fmt(last / 1024, 1),
        fmt(reference / 1024, 1),
        fmt(last / reference),
        fmt(writes.w / 1024, 0),
        fmt(fileSize / 1024, 0),
      ]);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return {
    title: `Checkpoint growth: ${n}-step plan, SqliteSaver`,
    head: [
      "replans asked",
      "status",
      "replans done",
      "checkpoints",
      "mean KB/checkpoint",
      "last KB",
      "state JSON KB",
      "last / state JSON (≤ 2)",
      "writes KB",
      "database KB",
    ],
    rows,
    note: "state JSON = plan + step runs + facts + decisions + replan records + side effects of the final state.",
  };
}

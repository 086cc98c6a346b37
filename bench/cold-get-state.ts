/**
 * One cold `getState` in a new process (what `langgraph-replan show` or a restarted worker pays):
 * `tsx bench/cold-get-state.ts SRC_INDEX SAVER TARGET` prints the milliseconds from opening the
 * database to having the state. Used by checkpoint-growth.ts for both layouts.
 */
import { pathToFileURL } from "node:url";
import { tool } from "@langchain/core/tools";
import { z } from "zod";

const [index, kind, target] = process.argv.slice(2) as [string, "SQLite" | "PostgreSQL", string];
const api = (await import(pathToFileURL(index).href)) as typeof import("../src/index.js");
const noop = tool(async () => ({}), { name: "work", description: "work", schema: z.object({}).passthrough() });
const plan = { steps: [{ id: "s0", goal: "Step 0", tool: "work" }] };
const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
const t0 = performance.now();
let close: () => Promise<void>;
let saver;
if (kind === "SQLite") {
  const s = SqliteSaver.fromConnString(target);
  saver = s;
  close = async () => void s.db.close();
} else {
  const s = PostgresSaver.fromConnString(target);
  saver = s;
  close = () => s.end();
}
const graph = api
  .createPlanManager({ tools: [noop], planner: api.staticPlanner({ plan }) })
  .compile({ checkpointer: saver });
const state = await graph.getState({ configurable: { thread_id: "growth" } });
const ms = performance.now() - t0;
await close();
if (Object.keys(state.values.facts ?? {}).length === 0) throw new Error("no state found");
process.stdout.write(`${ms.toFixed(1)}\n`);

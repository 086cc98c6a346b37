/**
 * A replan-memory worker: one process, one thread, on a PostgreSQL database that every worker
 * shares (checkpoints in PostgresSaver, replan memory in PostgresStore). The primary source is
 * down in every thread; the planner's answer is the mirror. Prints what the run did as JSON.
 *   tsx test-reliability/memory-worker.ts <postgres://…> <thread id> <applicant id>
 */
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { PostgresStore } from "@langchain/langgraph-checkpoint-postgres/store";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { AssumptionBrokenError, createPlanManager, staticPlanner, type PlanDraft } from "../src/index.js";
import { DEFAULT_MEMORY_NAMESPACE } from "../src/policy/options.js";
import { MemoryEntrySchema } from "../src/policy/memory/memory.js";
import { entryScore } from "../src/runtime/replan-memory.js";

const [url = "", threadId = "A", applicant = "A-100"] = process.argv.slice(2);

const plan: PlanDraft = {
  assumptions: [{ id: "primary_up", statement: "the primary source answers" }],
  steps: [
    {
      id: "fetch",
      goal: "Fetch",
      tool: "fetch_primary",
      inputs: ["applicant_id"],
      produces: ["data"],
      assumptions: ["primary_up"],
    },
    {
      id: "summarize",
      goal: "Summarize",
      tool: "summarize",
      inputs: ["data"],
      produces: ["summary"],
      dependsOn: ["fetch"],
    },
  ],
};
let replanCalls = 0;
const mirrorCalls: unknown[] = [];
const planner = staticPlanner({
  plan,
  replan: (req) => {
    replanCalls += 1;
    return {
      steps: [
        {
          id: "mirror",
          goal: "Fetch from the mirror",
          tool: "fetch_mirror",
          args: { applicant_id: req.facts.trusted.applicant_id },
          produces: ["data"],
        },
        {
          id: "summarize",
          goal: "Summarize",
          tool: "summarize",
          inputs: ["data"],
          produces: ["summary"],
          dependsOn: ["mirror"],
        },
      ],
    };
  },
});
const schema = z.object({}).passthrough();
const tools = [
  tool(
    async () => {
      throw new AssumptionBrokenError("primary_up", "primary source is down");
    },
    { name: "fetch_primary", description: "primary source", schema },
  ),
  tool(async (a: Record<string, unknown>) => (mirrorCalls.push(a), { data: `mirror:${a.applicant_id}` }), {
    name: "fetch_mirror",
    description: "mirror",
    schema,
  }),
  tool(async (a: Record<string, unknown>) => ({ summary: `summary of ${a.data}` }), {
    name: "summarize",
    description: "summary",
    schema,
  }),
];

const saver = PostgresSaver.fromConnString(url);
await saver.setup();
const store = PostgresStore.fromConnString(url);
await store.setup();
try {
  const graph = createPlanManager({ tools, planner, replanMemory: { mode: "reuse" } }).compile({
    checkpointer: saver,
    store,
  });
  const config = { configurable: { thread_id: threadId } };
  await graph.invoke({ goal: `Review ${applicant}`, context: { applicant_id: applicant } }, config);
  const state = (await graph.getState(config)).values as Record<string, any>;
  // Entries with their scores (each outcome is an item of its own, below the entry's namespace).
  const ns = [...DEFAULT_MEMORY_NAMESPACE];
  const items = await store.search(ns, { limit: 100 });
  const entries = [];
  for (const item of items.filter((i) => i.namespace.length === ns.length)) {
    const entry = MemoryEntrySchema.parse(item.value);
    entries.push({ ...entry, ...(await entryScore(store, ns, entry.revision)) });
  }
  const replans = state.replans.map((r: Record<string, unknown>) => ({
    source: r.source,
    memoryKey: r.memoryKey,
    memoryRevision: r.memoryRevision,
    newSteps: r.newSteps,
  }));
  process.stdout.write(`${JSON.stringify({ status: state.status, replanCalls, mirrorCalls, replans, entries })}\n`);
} finally {
  await store.stop();
  await saver.end();
}

import { tool } from "@langchain/core/tools";
import { Annotation, MemorySaver, StateGraph, START, END } from "@langchain/langgraph";
import { z } from "zod";
import { createPlanManager, staticPlanner } from "../src/index.js";
const noop = tool(async () => ({ ok: true }), { name: "noop", description: "noop", schema: z.object({}).passthrough() });
async function manager(n: number) {
  const steps = Array.from({ length: n }, (_, i) => ({ id: `s${i}`, goal: `Step ${i}`, tool: "noop", ...(i ? { dependsOn: [`s${i - 1}`] } : {}) }));
  const g = createPlanManager({ tools: [noop], planner: staticPlanner({ plan: { steps } }) }).compile({ checkpointer: new MemorySaver() });
  const t = performance.now(); await g.invoke({ goal: "g" }, { configurable: { thread_id: "m" + Math.random() } }); return performance.now() - t;
}
async function bare(n: number) {
  const S = Annotation.Root({ count: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }) });
  let b: any = new StateGraph(S);
  for (let i = 0; i < n; i++) b = b.addNode(`n${i}`, async () => { await noop.invoke({}); return { count: 1 }; });
  b = b.addEdge(START, "n0"); for (let i = 1; i < n; i++) b = b.addEdge(`n${i - 1}`, `n${i}`); b = b.addEdge(`n${n - 1}`, END);
  const g = b.compile({ checkpointer: new MemorySaver() });
  const t = performance.now(); await g.invoke({}, { configurable: { thread_id: "b" + Math.random() }, recursionLimit: 10000 }); return performance.now() - t;
}
for (const n of [10, 50, 200]) {
  await manager(n); await bare(n);
  const m = []; const b = [];
  for (let i = 0; i < 5; i++) { m.push(await manager(n)); b.push(await bare(n)); }
  m.sort((x, y) => x - y); b.sort((x, y) => x - y);
  console.log(n, "manager ms/step", (m[2] / n).toFixed(3), "bare", (b[2] / n).toFixed(3), "ratio", (m[2] / b[2]).toFixed(2));
}

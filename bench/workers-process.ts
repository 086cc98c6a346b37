/**
 * A worker process for the workers benchmark: a chain plan of `work` steps (each an I/O wait, as a
 * real tool's network call), run by `createWorker`. Prints `call <thread> <epoch ms>` at each tool
 * call so that the parent can time a dead worker's threads, and `cpu <ms>` (its own CPU time since
 * it was ready) when told to stop; `direct` mode instead runs the threads itself with `invoke` on
 * PostgresSaver (the one-process baseline) and prints the elapsed time and its CPU time.
 *   tsx bench/workers-process.ts worker <postgres://…> <concurrency> <leaseSeconds> <queue> <toolMs> <maintenanceS>
 *   tsx bench/workers-process.ts direct <postgres://…> <concurrency> <threads> <steps> <toolMs>
 */
import { tool } from "@langchain/core/tools";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { z } from "zod";
import { createPlanManager, type PlanDraft } from "../src/index.js";
import { createWorker } from "../src/worker/index.js";

export function chainPlan(steps: number): PlanDraft {
  return {
    steps: Array.from({ length: steps }, (_, i) => ({
      id: `s${i}`,
      goal: `step ${i}`,
      tool: "work",
      args: { i },
      produces: [`v${i}`],
      ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}),
    })),
  };
}

const workTool = (toolMs: number) =>
  tool(
    async (args: { i: number }, config) => {
      process.stdout.write(`call ${String(config?.configurable?.thread_id)} ${Date.now()}\n`);
      await new Promise((r) => setTimeout(r, toolMs));
      return { [`v${args.i}`]: args.i };
    },
    { name: "work", description: "an I/O wait", schema: z.object({ i: z.number() }) },
  );

/** The plan's length travels in the goal, so that one graph serves every thread. */
const manager = (toolMs: number) =>
  createPlanManager({
    tools: [workTool(toolMs)],
    planner: { plan: async (req) => chainPlan(Number(req.goal.split(" ")[1])) },
  });

const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

if (process.argv[1]?.endsWith("workers-process.ts")) {
  const [mode, url = "", width = "4", a = "", b = "", toolMs = "20", maintenance = "10"] = process.argv.slice(2);
  if (mode === "worker") {
    const worker = createWorker({
      graph: manager(Number(toolMs)),
      connectionString: url,
      concurrency: Number(width),
      leaseSeconds: Number(a),
      maintenanceSeconds: Number(maintenance),
      queue: b,
      onFinished: (r) => void process.stdout.write(`finished ${r.threadId} ${Date.now()}\n`),
      onError: (e) => void process.stderr.write(`error ${String(e)}\n`),
    });
    await worker.start();
    const ready = process.cpuUsage();
    process.stdout.write("ready\n");
    process.on("SIGTERM", () => {
      process.stdout.write(`cpu ${cpuMs(ready)}\n`);
      void worker.stop({ graceful: false }).then(() => process.exit(0));
    });
  } else {
    const saver = PostgresSaver.fromConnString(url);
    await saver.setup();
    const graph = manager(Number(toolMs)).compile({ checkpointer: saver });
    const queue = Array.from({ length: Number(a) }, (_, i) => `direct-${Date.now()}-${i}`);
    process.stdout.write("ready\n");
    // The parent reads PostgreSQL's CPU time between `ready` and `elapsed`.
    await new Promise((r) => setTimeout(r, 200));
    const since = process.cpuUsage();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: Number(width) }, async () => {
        for (let t = queue.shift(); t; t = queue.shift())
          await graph.invoke({ goal: `chain ${b}` }, { configurable: { thread_id: t } });
      }),
    );
    process.stdout.write(`elapsed ${performance.now() - started} ${cpuMs(since)}\n`);
    await saver.end();
  }
}

/**
 * A process that answers or carries on a paused payment thread in a checkpoint store, for the
 * tests of one run per thread across processes. The `pay` tool appends to `calls.log` in the
 * given directory, writes `started`, and waits for the test to create `go` (or waits for ever,
 * for a holder the test kills). Prints one JSON line: the run's status, or the error's code.
 *
 *   tsx payment-process.ts <sqlite-file | postgresql://…> <thread> <resume | answer | continue> <dir>
 *
 * `PAYMENT_KEYS=ignored` in the environment: the payment API does not honour keys.
 * `resume` answers through `resumeRun`; `answer` sends LangGraph's own `Command({ resume })`, as
 * Studio or a hand-written client does, without reading the question first.
 */
import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { tool } from "@langchain/core/tools";
import { Command, type BaseCheckpointSaver } from "@langchain/langgraph";
import { z } from "zod";
import { createPlanManager, isPlanManagerError, resumeRun, staticPlanner } from "../../src/index.js";

const plan = {
  steps: [
    { id: "ask", goal: "A person approves the payment", human: { prompt: "pay the vendor?" } },
    { id: "pay", goal: "Pay the vendor", tool: "pay", args: {}, produces: ["receipt"], dependsOn: ["ask"] },
  ],
};

/**
 * `honoursKeys`: the payment API dedupes by idempotency key, so a payment cut by a kill is made again
 * under its key; without it a cut payment is a question (docs/decisions/0038-effect-journal.md).
 */
export function paymentGraph(saver: BaseCheckpointSaver, dir: string, honoursKeys = true) {
  const pay = tool(
    async () => {
      appendFileSync(join(dir, "calls.log"), `${process.pid}\n`);
      writeFileSync(join(dir, "started"), "");
      while (!existsSync(join(dir, "go"))) await new Promise((r) => setTimeout(r, 10));
      return { receipt: "r-1" };
    },
    { name: "pay", description: "Pay the vendor", schema: z.object({}), metadata: { sideEffects: ["payment"] } },
  );
  const effects = { honoursKeys: honoursKeys ? ["pay"] : [] };
  return createPlanManager({ tools: [pay], planner: staticPlanner({ plan }), effects }).compile({
    checkpointer: saver,
  });
}

async function openSaver(where: string): Promise<{ saver: BaseCheckpointSaver; close: () => Promise<void> }> {
  if (/^postgres(ql)?:\/\//.test(where)) {
    const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
    const saver = PostgresSaver.fromConnString(where);
    await saver.setup();
    return { saver, close: () => saver.end() };
  }
  const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
  const saver = SqliteSaver.fromConnString(where);
  return {
    saver,
    close: async () => {
      saver.db.close();
    },
  };
}

async function main(): Promise<void> {
  const [where, thread, mode, dir] = process.argv.slice(2) as [string, string, string, string];
  const { saver, close } = await openSaver(where);
  const graph = paymentGraph(saver, dir, process.env.PAYMENT_KEYS !== "ignored");
  const config = { configurable: { thread_id: thread } };
  try {
    const out =
      mode === "answer"
        ? await graph.invoke(new Command({ resume: { action: "complete", output: {} } }), config)
        : mode === "resume"
          ? await resumeRun(graph, config, { action: "complete", output: {} })
          : await graph.invoke(null, config);
    process.stdout.write(`${JSON.stringify({ status: (out as { status: string }).status })}\n`);
  } catch (error) {
    if (!isPlanManagerError(error)) throw error;
    process.stdout.write(`${JSON.stringify({ code: error.code })}\n`);
  } finally {
    await close();
  }
}

if (process.argv[1]?.endsWith("payment-process.ts")) await main();

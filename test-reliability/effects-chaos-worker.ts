/**
 * One process of the effects chaos suite (effects-chaos.test.ts): starts or carries on one thread of
 * the send or booking plan (effects-scenario.ts) on a SqliteSaver file, answering with ANSWER (JSON)
 * when given, until the run ends or asks a question, and prints one JSON line: the status, the
 * question if any, the decisions' rules and the compensation records. KILL makes a tool SIGKILL the
 * process; CHAOS_KILL=checkpoint:N kills it inside the N-th checkpoint write.
 *   tsx test-reliability/effects-chaos-worker.ts <checkpoints.sqlite> <effects.sqlite> <thread> <send | booking>
 */
import { Command, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createPlanManager, staticPlanner } from "../src/index.js";
import { bookingPlan, effectTools, effectsDb, questionOf, sendPlan } from "./effects-scenario.js";

const [dbFile = "", effectsFile = "", thread = "t", which = "send"] = process.argv.slice(2);
const kill = process.env.KILL ?? "";
const die = () => process.kill(process.pid, "SIGKILL");

const saver = SqliteSaver.fromConnString(dbFile);
if (kill.startsWith("checkpoint:")) {
  const at = Number(kill.split(":")[1]);
  let puts = 0;
  const put = saver.put.bind(saver);
  saver.put = async (...args: Parameters<BaseCheckpointSaver["put"]>) => {
    if (++puts !== at) return put(...args);
    const result = put(...args);
    await Promise.resolve();
    die();
    return result;
  };
}
const db = effectsDb(effectsFile);
const graph = createPlanManager({
  tools: effectTools(db, kill),
  planner: staticPlanner({ plan: which === "booking" ? bookingPlan() : sendPlan() }),
  clock: { sleep: async () => undefined },
}).compile({ checkpointer: saver });
const config = { configurable: { thread_id: thread } };

const before = await graph.getState(config);
if (process.env.ANSWER) await graph.invoke(new Command({ resume: JSON.parse(process.env.ANSWER) }) as never, config);
else if (Object.keys(before.values ?? {}).length === 0)
  await graph.invoke({ goal: `chaos ${which}`, context: {} } as never, config);
else await graph.invoke(null as never, config);

const after = await graph.getState(config);
const v = after.values as Record<string, any>;
const pending = after.tasks.flatMap((t) => t.interrupts)[0];
process.stdout.write(
  JSON.stringify({
    status: v.status,
    question: questionOf(pending?.value as Record<string, any> | undefined),
    rules: (v.decisions ?? []).map((d: any) => `${d.stepId ?? "-"}:${d.rule}`),
    compensations: (v.compensations ?? []).map((c: any) => `${c.stepId}:${c.status}`),
  }) + "\n",
);
saver.db.close();
db.close();

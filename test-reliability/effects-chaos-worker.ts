/**
 * One process of the effects chaos suite (effects-chaos.test.ts): starts or carries on one thread of
 * the send or booking plan (effects-scenario.ts) on a SqliteSaver file until the run ends, answering
 * each question from the tools' tables and recording it, and prints one JSON line: the status, the
 * decisions' rules and the compensation records. KILL makes a tool SIGKILL the
 * process; CHAOS_KILL=checkpoint:N kills it inside the N-th checkpoint write.
 *   tsx test-reliability/effects-chaos-worker.ts <checkpoints.sqlite> <effects.sqlite> <thread> <send | booking>
 */
import { Command } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createPlanManager, staticPlanner } from "../src/index.js";
import { answerAndRecord, bookingPlan, effectTools, effectsDb, questionOf, sendPlan } from "./effects-scenario.js";

const [dbFile = "", effectsFile = "", thread = "t", which = "send"] = process.argv.slice(2);
const kill = process.env.KILL ?? "";
const die = () => process.kill(process.pid, "SIGKILL");

const saver = SqliteSaver.fromConnString(dbFile);
if (kill.startsWith("checkpoint:")) {
  const at = Number(kill.split(":")[1]);
  let puts = 0;
  const put = saver.put.bind(saver);
  saver.put = async (...args: Parameters<typeof put>) => {
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

// Carries the thread on until it ends, answering every question from the tools' tables as a person
// who can look at them would (effects-scenario.ts `answerFor`); each question is recorded for the test.
const before = await graph.getState(config);
if (Object.keys(before.values ?? {}).length === 0)
  await graph.invoke({ goal: `chaos ${which}`, context: {} } as never, config);
else await graph.invoke(null as never, config);
let after = await graph.getState(config);
for (let asked = 0; asked < 20; asked++) {
  const pending = after.tasks.flatMap((t) => t.interrupts)[0];
  const question = questionOf(pending?.value as Record<string, any> | undefined);
  if (!question) break;
  await graph.invoke(new Command({ resume: answerAndRecord(db, thread, question) }) as never, config);
  after = await graph.getState(config);
}
const v = after.values as Record<string, any>;
process.stdout.write(
  JSON.stringify({
    status: v.status,
    rules: (v.decisions ?? []).map((d: any) => `${d.stepId ?? "-"}:${d.rule}`),
    compensations: (v.compensations ?? []).map((c: any) => `${c.stepId}:${c.status}`),
  }) + "\n",
);
saver.db.close();
db.close();

/**
 * One worker process of the effects chaos suite on PostgreSQL (effects-chaos.test.ts): `createWorker`
 * runs the send plan (effects-scenario.ts, tools that do not honour keys) for the threads enqueued on
 * one database. KILL (e.g. `after:3`) makes it SIGKILL itself inside a send call.
 *   tsx test-reliability/effects-chaos-pg-worker.ts <postgres://…> <effects.sqlite>
 */
import { createPlanManager, staticPlanner } from "../src/index.js";
import { createWorker } from "../src/worker/index.js";
import { effectTools, effectsDb, sendPlan } from "./effects-scenario.js";

const [url = "", effectsFile = ""] = process.argv.slice(2);
const db = effectsDb(effectsFile);
const worker = createWorker({
  graph: createPlanManager({
    tools: effectTools(db, process.env.KILL ?? ""),
    planner: staticPlanner({ plan: sendPlan() }),
  }),
  connectionString: url,
  concurrency: 2,
  leaseSeconds: 4,
  maintenanceSeconds: 1,
});
await worker.start();
process.stdout.write(`ready ${process.pid}\n`);
process.on("SIGTERM", () => {
  void worker.stop({ graceful: false }).then(() => process.exit(0));
});

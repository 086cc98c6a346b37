/**
 * One worker process for workers.test.ts: the chaos scenarios' tools behind one plan manager
 * whose planner is chosen by the goal, run by `createWorker` on PostgreSQL. Every tool call is
 * logged with its thread, process and start/end times, so that the test can prove no two calls of
 * one thread overlapped. KILL_AT_TOOL=N makes the process SIGKILL itself during its N-th tool call.
 *   tsx test-reliability/workers-process.ts <postgres://…> <effects.sqlite> <concurrency>
 */
import { createPlanManager, type Planner } from "../src/index.js";
import { createWorker } from "../src/worker/index.js";
import { chaosTools, effectStore, SCENARIOS } from "./scenarios.js";

export const WORKER_SCENARIOS = ["loan", "fraud", "coding", "research", "chain"];

export function scenarioPlanner(): Planner {
  const byGoal = new Map(WORKER_SCENARIOS.map((name) => [SCENARIOS[name]!().goal, SCENARIOS[name]!().planner]));
  const pick = (goal: string) => byGoal.get(goal) ?? byGoal.get("loan A-1")!;
  return {
    plan: (req) => pick(req.goal).plan(req),
    replan: (req) => pick(req.goal).replan!(req),
  };
}

if (process.argv[1]?.endsWith("workers-process.ts")) {
  const [url = "", effectsFile = "", width = "4"] = process.argv.slice(2);
  const effects = effectStore(effectsFile);
  effects.db.pragma("busy_timeout = 30000");
  effects.db.exec(
    "CREATE TABLE IF NOT EXISTS spans (thread TEXT NOT NULL, pid INTEGER NOT NULL, tool TEXT NOT NULL, start REAL NOT NULL, end REAL NOT NULL)",
  );
  const span = effects.db.prepare("INSERT INTO spans (thread, pid, tool, start, end) VALUES (?, ?, ?, ?, ?)");
  const killAt = Number(process.env.KILL_AT_TOOL ?? 0);
  const clock = () => performance.timeOrigin + performance.now();
  let calls = 0;
  const tools = chaosTools(effects, 15).map((t) => {
    const invoke = t.invoke.bind(t);
    return Object.assign(t, {
      invoke: (async (input: unknown, config?: { configurable?: Record<string, unknown> }) => {
        calls += 1;
        if (calls === killAt) setTimeout(() => process.kill(process.pid, "SIGKILL"), 5);
        const start = clock();
        try {
          return await invoke(input as never, config as never);
        } finally {
          span.run(String(config?.configurable?.thread_id), process.pid, t.name, start, clock());
        }
      }) as typeof t.invoke,
    });
  });
  const worker = createWorker({
    // The side-effecting chaos tools dedupe by key (scenarios.ts): a call cut by a kill is made again under it.
    graph: createPlanManager({
      tools,
      planner: scenarioPlanner(),
      effects: { honoursKeys: tools.filter((t) => Array.isArray(t.metadata?.sideEffects)).map((t) => t.name) },
    }),
    connectionString: url,
    concurrency: Number(width),
    leaseSeconds: 6,
    maintenanceSeconds: 1,
  });
  await worker.start();
  process.stdout.write(`ready ${process.pid}\n`);
  process.on("SIGTERM", () => {
    void worker.stop({ graceful: false }).then(() => process.exit(0));
  });
}

/**
 * A chaos worker: runs (or resumes) one scenario thread on a SqliteSaver file and prints the
 * final summary as JSON. CHAOS_KILL=tool:N or checkpoint:N makes the process SIGKILL itself at
 * the N-th tool call or inside the N-th checkpoint write.
 *   tsx test-reliability/chaos-worker.ts <scenario> <checkpoints.sqlite | postgres://…> <effects.sqlite>
 */
import { Command, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createPlanManager } from "../src/index.js";
import { chaosTools, effectStore, SCENARIOS } from "./scenarios.js";

const [name = "loan", dbFile = "/tmp/chaos.sqlite", effectsFile = "/tmp/effects.sqlite"] = process.argv.slice(2);
const kill = process.env.CHAOS_KILL ?? "";
const [killKind, killAtText] = kill.split(":");
const killAt = Number(killAtText ?? 0);
const die = () => process.kill(process.pid, "SIGKILL");

/** SQLite file, or PostgreSQL when the first argument is a postgres:// connection string. */
async function openSaver(target: string): Promise<{ saver: BaseCheckpointSaver; close: () => Promise<void> }> {
  if (target.startsWith("postgres")) {
    const { PostgresSaver } = await import("@langchain/langgraph-checkpoint-postgres");
    const saver = PostgresSaver.fromConnString(target);
    await saver.setup();
    return { saver, close: () => saver.end() };
  }
  const saver = SqliteSaver.fromConnString(target);
  return { saver, close: async () => saver.db.close() };
}

const { saver, close } = await openSaver(dbFile);
let puts = 0;
const put = saver.put.bind(saver);
saver.put = async (...args: Parameters<BaseCheckpointSaver["put"]>) => {
  puts += 1;
  if (killKind === "checkpoint" && puts === killAt) {
    // Die in the middle of the write: the checkpoint is being stored, its pending writes are not cleaned up yet.
    const result = put(...args);
    await Promise.resolve();
    die();
    return result;
  }
  return put(...args);
};

const scenario = SCENARIOS[name]!();
const effects = effectStore(effectsFile);
let toolCalls = 0;
const tools = chaosTools(effects, 15).map((t) => {
  const invoke = t.invoke.bind(t);
  return Object.assign(t, {
    invoke: (async (input: unknown, config?: unknown) => {
      toolCalls += 1;
      if (killKind === "tool" && toolCalls === killAt) setTimeout(die, 5);
      return invoke(input as never, config as never);
    }) as typeof t.invoke,
  });
});
const graph = createPlanManager({
  tools,
  planner: scenario.planner,
  clock: { sleep: async () => undefined },
  ...(scenario.agents ? { agents: scenario.agents(tools) } : {}),
  // The side-effecting chaos tools dedupe by key (scenarios.ts): a call cut by a kill is made again under it.
  effects: { honoursKeys: tools.filter((t) => Array.isArray(t.metadata?.sideEffects)).map((t) => t.name) },
}).compile({ checkpointer: saver });
const config = { configurable: { thread_id: `chaos-${name}` } };

// Drive the thread to a terminal status, whatever state a killed process left it in.
const TERMINAL = new Set(["completed", "failed", "aborted"]);
let snapshot = await graph.getState(config);
let scopeInjected = false;
for (let rounds = 0; rounds < 30; rounds++) {
  const values = snapshot.values as Record<string, any>;
  const interrupt = snapshot.tasks.flatMap((t) => t.interrupts)[0]?.value as
    { kind: string; stepId?: string } | undefined;
  if (Object.keys(values ?? {}).length === 0) {
    await graph.invoke({ goal: scenario.goal, context: scenario.context } as never, config);
  } else if (TERMINAL.has(values.status) && snapshot.next.length === 0) {
    break;
  } else if (interrupt) {
    if (scenario.scopeChange && !scopeInjected && !(values.replans ?? []).length) {
      await graph.updateState(config, { scopeChanges: [scenario.scopeChange] });
      scopeInjected = true;
    }
    await graph.invoke(new Command({ resume: scenario.answer(interrupt) }) as never, config);
  } else {
    await graph.invoke(null as never, config);
  }
  snapshot = await graph.getState(config);
}
const v = snapshot.values as Record<string, any>;
// Sorted by key: steps running side by side write their records and facts in the order they end.
const byKey = <T>(entries: [string, T][]) => entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
const facts = Object.fromEntries(
  byKey(Object.entries(v.facts ?? {})).map(([k, f]: [string, any]) => [k, { value: f.value, label: f.label }]),
);
const effectRows = effects.db.prepare("SELECT key, what, commits FROM effects ORDER BY key").all();
const calls = effects.db.prepare("SELECT key, COUNT(*) AS n FROM calls GROUP BY key ORDER BY key").all();
process.stdout.write(
  JSON.stringify({
    status: v.status,
    facts,
    decisions: (v.decisions ?? []).map((d: any) => `${d.stepId ?? "-"}:${d.action}:${d.rule}`),
    steps: Object.fromEntries(byKey(Object.entries(v.steps ?? {})).map(([k, s]: [string, any]) => [k, s.status])),
    planVersion: v.plan?.version,
    // Model calls of agent steps, by step and attempt: a resume must not count one twice.
    usage: (v.usage ?? []).map((u: any) => `${u.stepId ?? u.purpose}:${u.attempt ?? "-"}`),
    effects: effectRows,
    calls,
  }) + "\n",
);
await close();
effects.db.close();

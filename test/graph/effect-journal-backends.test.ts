/**
 * The effect journal on every backend (src/storage/journal*.ts): what one saver's journal records,
 * another saver on the same database reads — SQLite and PostgreSQL keep it beside the checkpoints;
 * any other saver keeps it in this process. A call cut on PostgreSQL is answered from a fresh saver,
 * in the graph and inside createAgent.
 */
import { tool } from "@langchain/core/tools";
import { Command, interrupt, MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { resumeRun } from "../../src/index.js";
import { saverAdapter } from "../../src/storage/index.js";
import { startPostgres, type PgServer } from "../../test-reliability/helpers/postgres.js";
import { harness, type Loose } from "../helpers/graph.js";
import { createAgent } from "langchain";
import { planMiddleware } from "../../src/middleware/index.js";
import { scriptedAgentModel, type Turn } from "../helpers/agent-model.js";
import { countedTool, ledger } from "../helpers/agent-tools.js";

let pg: PgServer;
const closers: (() => Promise<void> | void)[] = [];
beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);
afterAll(async () => {
  for (const close of closers) await close();
  pg?.stop();
});
const dir = mkdtempSync(join(tmpdir(), "journal-backends-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let schemas = 0;
const pgSaver = async (schema: string) => {
  const saver = PostgresSaver.fromConnString(pg.url, { schema });
  await saver.setup();
  closers.push(() => saver.end());
  return saver;
};
const sqliteSaver = (file: string) => {
  const saver = SqliteSaver.fromConnString(file);
  closers.push(() => void saver.db.close());
  return saver;
};

/** Two savers on the same storage (two processes' view of it), or the same saver where storage is the process's. */
const BACKENDS: [string, () => Promise<[BaseCheckpointSaver, BaseCheckpointSaver]>][] = [
  [
    "SQLite",
    async () => {
      const file = join(dir, `j-${(schemas += 1)}.sqlite`);
      return [sqliteSaver(file), sqliteSaver(file)];
    },
  ],
  [
    "PostgreSQL",
    async () => {
      const schema = `journal${(schemas += 1)}`;
      return [await pgSaver(schema), await pgSaver(schema)];
    },
  ],
  [
    "MemorySaver",
    async () => {
      const saver = new MemorySaver();
      return [saver, saver];
    },
  ],
];

describe.each(BACKENDS)("the effect journal on %s", (_name, open) => {
  it("records an intent, then its result; a new intent of the key clears the result; threads are apart", async () => {
    const [one, two] = await open();
    const writer = saverAdapter(one).journal;
    const reader = saverAdapter(two).journal;
    const intent = { key: "t:k1", stepId: "pay", tool: "charge", args: { amount: 10 }, attempt: 1, at: "2026-01-01" };
    expect(await reader.lookup("t", "t:k1")).toBeUndefined();
    await writer.intent("t", intent);
    expect(await reader.lookup("t", "t:k1")).toEqual(intent);
    expect(await reader.lookup("other", "t:k1")).toBeUndefined();
    await writer.result("t", "t:k1", { ok: false, error: { name: "PermanentError", message: "declined" } });
    expect((await reader.lookup("t", "t:k1"))?.result).toEqual({
      ok: false,
      error: { name: "PermanentError", message: "declined" },
    });
    await writer.intent("t", { ...intent, attempt: 2 });
    expect(await reader.lookup("t", "t:k1")).toEqual({ ...intent, attempt: 2 });
    await writer.result("t", "t:k1", { ok: true, output: { receipt: "r-2", note: "ü \u0000 '\"" } });
    expect((await reader.lookup("t", "t:k1"))?.result).toEqual({
      ok: true,
      output: { receipt: "r-2", note: "ü \u0000 '\"" },
    });
    await writer.deleteThread("t");
    expect(await reader.lookup("t", "t:k1")).toBeUndefined();
  });

  it("lists a thread's intents with no result (calls in doubt), and only those", async () => {
    const [one, two] = await open();
    const writer = saverAdapter(one).journal;
    const reader = saverAdapter(two).journal;
    const cut = { key: "u:k1", stepId: "pay", tool: "charge", args: { amount: 10 }, attempt: 2, at: "2026-01-02" };
    const answered = { ...cut, key: "u:k2", stepId: "ship", attempt: 1 };
    await writer.intent("u", cut);
    await writer.intent("u", answered);
    await writer.result("u", "u:k2", { ok: true, output: { shipped: true } });
    await writer.intent("elsewhere", { ...cut, key: "e:k1" });
    expect(await reader.unsettled("u")).toEqual([cut]);
    expect(await reader.unsettled("nothing")).toEqual([]);
    await writer.result("u", "u:k1", { ok: true, output: { receipt: "r" } });
    expect(await reader.unsettled("u")).toEqual([]);
  });
});

describe("a charge cut by its deadline on PostgreSQL", () => {
  it("is asked about, and a fresh saver's answer retry calls it once more under the same key", async () => {
    const schema = `cut${(schemas += 1)}`;
    const keys: unknown[] = [];
    const charge = tool(
      async (_args: { amount: number }, config) => {
        keys.push(config.configurable?.idempotencyKey);
        if (keys.length === 1) await new Promise(() => undefined);
        return { receipt: `r-${keys.length}` };
      },
      { name: "charge", description: "charges the card", schema: z.object({ amount: z.number() }) },
    );
    const plan = {
      steps: [
        {
          id: "pay",
          goal: "Charge the card",
          tool: "charge",
          args: { amount: 10 },
          produces: ["receipt"],
          sideEffects: ["charges the card"],
          idempotent: false,
          timeoutMs: 30,
        },
      ],
    };
    const first = harness(plan, [charge], { checkpointer: await pgSaver(schema) });
    const asked = await first.run();
    expect(asked.status).toBe("awaiting_human");
    expect(asked.decisions.map((d: Loose) => d.rule)).toEqual(["effect.in-doubt"]);
    const fresh = harness(plan, [charge], { checkpointer: await pgSaver(schema) });
    const done = (await resumeRun(fresh.graph, fresh.config, { action: "retry" })) as Loose;
    expect(done.status).toBe("completed");
    expect(keys).toEqual([keys[0], keys[0]]);
  });
});

describe("a createAgent charge that dies inside the call on PostgreSQL", () => {
  it("a new agent on a fresh saver finds it in doubt, asks, and retry calls it once more under the key", async () => {
    const schema = `agent${(schemas += 1)}`;
    const l = ledger();
    const charge = (dies: boolean) =>
      countedTool(l, "charge", (n) => {
        if (dies && n === 1) interrupt("the process dies inside the call");
        return { receipt: `R-${n}` };
      });
    const plan = { steps: [{ id: "pay", goal: "Pay", tool: "charge", args: { amount: 40 }, produces: ["receipt"] }] };
    const agent = (turns: Turn[], dies: boolean, checkpointer: BaseCheckpointSaver) =>
      createAgent({
        model: scriptedAgentModel(turns),
        tools: [charge(dies)],
        middleware: [planMiddleware({ sleep: async () => {}, now: () => 0, sideEffectTools: ["charge"] })],
        checkpointer,
      });
    const config = { configurable: { thread_id: "pay-pg" } };
    const turns: Turn[] = [[{ name: "write_plan", args: plan }], [{ name: "charge", args: {} }], "never"];
    await agent(turns, true, await pgSaver(schema)).invoke({ messages: [{ role: "user", content: "pay" }] }, config);
    const second = agent([[{ name: "charge", args: {} }], "paid"], false, await pgSaver(schema));
    const asked = await second.invoke(new Command({ resume: "restarted" }), config);
    expect([l.calls, (asked.__interrupt__![0]!.value as { rule: string }).rule]).toEqual([
      { charge: 1 },
      "effect.in-doubt",
    ]);
    const out = await second.invoke(new Command({ resume: { action: "retry" } }), config);
    expect(l.calls).toEqual({ charge: 2 });
    expect(l.keys.charge).toEqual([l.keys.charge![0], l.keys.charge![0]]);
    expect([out.status, out.sideEffects.map((e) => e.output)]).toEqual(["completed", [{ receipt: "R-2" }]]);
  });
});

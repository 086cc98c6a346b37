/**
 * `npx tsx bench/delta-history-sqlite.ts [steps]`: what a saver-level `getDeltaChannelHistory`
 * would buy (decision record 0011, follow-up). A prototype, not library code: the base
 * implementation reads one checkpoint row (`getTuple`) per ancestor; this one reads the parent
 * chain with one recursive query and only the wanted channels' writes with a second. It returns
 * the same history (checked below) and is compared with the base on one manager thread.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RunnableConfig } from "@langchain/core/runnables";
import { tool } from "@langchain/core/tools";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { z } from "zod";
import { createPlanManager, staticPlanner } from "../src/index.js";
import { fmt, median } from "./lib.js";

type Write = [string, string, unknown];
interface Row {
  id: string;
  type: string | null;
  values: string | null;
}
interface WriteRow {
  checkpoint_id: string;
  task_id: string;
  channel: string;
  type: string | null;
  value: string;
}

export class OneQuerySqliteSaver extends SqliteSaver {
  override async getDeltaChannelHistory(options: { config: RunnableConfig; channels: string[] }) {
    const { config, channels } = options;
    if (channels.length === 0) return {};
    this.setup();
    const t = config.configurable?.thread_id as string;
    const ns = (config.configurable?.checkpoint_ns as string | undefined) ?? "";
    const latest =
      "SELECT checkpoint_id FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? ORDER BY checkpoint_id DESC";
    const id =
      (config.configurable?.checkpoint_id as string | undefined) ??
      (this.db.prepare(latest).get(t, ns) as { checkpoint_id: string } | undefined)?.checkpoint_id;
    const chain = this.db
      .prepare(
        `WITH RECURSIVE chain(id, depth) AS (
           SELECT parent_checkpoint_id, 1 FROM checkpoints WHERE thread_id = @t AND checkpoint_ns = @ns AND checkpoint_id = @id
           UNION ALL
           SELECT c.parent_checkpoint_id, chain.depth + 1 FROM checkpoints c
           JOIN chain ON c.thread_id = @t AND c.checkpoint_ns = @ns AND c.checkpoint_id = chain.id)
         SELECT chain.id AS id, c.type AS type,
                json_extract(CAST(c.checkpoint AS TEXT), '$.channel_values') AS "values"
         FROM chain JOIN checkpoints c ON c.thread_id = @t AND c.checkpoint_ns = @ns AND c.checkpoint_id = chain.id
         ORDER BY chain.depth`,
      )
      .all({ t, ns, id }) as Row[];
    const writes = this.db
      .prepare(
        `SELECT checkpoint_id, task_id, channel, type, CAST(value AS TEXT) AS value FROM writes
         WHERE thread_id = ? AND checkpoint_ns = ? AND channel IN (${channels.map(() => "?").join(",")})
           AND checkpoint_id IN (SELECT value FROM json_each(?)) ORDER BY checkpoint_id, task_id, idx`,
      )
      .all(t, ns, ...channels, JSON.stringify(chain.map((r) => r.id))) as WriteRow[];
    const byCheckpoint = new Map<string, WriteRow[]>();
    for (const w of writes) byCheckpoint.set(w.checkpoint_id, [...(byCheckpoint.get(w.checkpoint_id) ?? []), w]);
    const remaining = new Set(channels);
    const collected: Record<string, Write[]> = Object.fromEntries(channels.map((c) => [c, []]));
    const seeds: Record<string, unknown> = {};
    for (const row of chain) {
      if (remaining.size === 0) break;
      const own = byCheckpoint.get(row.id) ?? [];
      for (const w of own.reverse())
        if (remaining.has(w.channel))
          collected[w.channel]!.push([w.task_id, w.channel, await this.serde.loadsTyped(w.type ?? "json", w.value)]);
      const stored = row.values ? (JSON.parse(row.values) as Record<string, unknown>) : {};
      for (const ch of [...remaining]) {
        if (!Object.hasOwn(stored, ch)) continue;
        // Revived the way the saver revives a whole checkpoint (a DeltaSnapshot stays one).
        const wrapped = JSON.stringify({ channel_values: { [ch]: stored[ch] } });
        seeds[ch] = (
          (await this.serde.loadsTyped(row.type ?? "json", wrapped)) as { channel_values: Record<string, unknown> }
        ).channel_values[ch];
        remaining.delete(ch);
      }
    }
    return Object.fromEntries(
      channels.map((ch) => [
        ch,
        { writes: collected[ch]!.slice().reverse(), ...(Object.hasOwn(seeds, ch) ? { seed: seeds[ch] } : {}) },
      ]),
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const steps = Math.min(Number(process.argv[2] ?? 200), 200); // a plan's limit (LIMITS.maxSteps)
  const dir = mkdtempSync(join(tmpdir(), "delta-history-"));
  const file = join(dir, "thread.sqlite");
  const work = tool(async ({ index }: { index: number }) => ({ [`f${index}`]: `${index}`.padEnd(100, "x") }), {
    name: "work",
    description: "work",
    schema: z.object({ index: z.number() }).passthrough(),
  });
  const plan = {
    steps: Array.from({ length: steps }, (_, i) => ({
      id: `s${i}`,
      goal: `Step ${i}`,
      tool: "work",
      args: { index: i },
      produces: [`f${i}`],
      ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}),
    })),
  };
  const config = { configurable: { thread_id: "t" } };
  const graphOn = (saver: SqliteSaver) =>
    createPlanManager({ tools: [work], planner: staticPlanner({ plan }) }).compile({ checkpointer: saver });
  try {
    await graphOn(SqliteSaver.fromConnString(file)).invoke({ goal: "long" }, config);
    const channels = ["plan", "steps", "facts", "decisions"];
    const base = await SqliteSaver.fromConnString(file).getDeltaChannelHistory({ config, channels });
    const one = await new OneQuerySqliteSaver(SqliteSaver.fromConnString(file).db).getDeltaChannelHistory({
      config,
      channels,
    });
    if (JSON.stringify(base) !== JSON.stringify(one)) throw new Error("the one-query history differs from the base");
    const times: Record<string, number[]> = { base: [], "one query": [] };
    for (let k = 0; k < 7; k++)
      for (const [name, make] of [
        ["base", () => SqliteSaver.fromConnString(file)],
        ["one query", () => new OneQuerySqliteSaver(SqliteSaver.fromConnString(file).db)],
      ] as const) {
        const saver = make();
        const t0 = performance.now();
        await graphOn(saver).getState(config);
        times[name]!.push(performance.now() - t0);
        saver.db.close();
      }
    console.log(
      `${steps} steps, getState on a fresh connection (median of 7): base ${fmt(median(times.base!), 1)} ms, one query ${fmt(median(times["one query"]!), 1)} ms`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A thread's delta-channel history from rows a backend read in one query
 * (docs/decisions/0023-state-loads.md). Delta channels are rebuilt on every load by
 * `getDeltaChannelHistory`; the base class walks the thread with one `getTuple` per ancestor (all
 * of its blobs and writes, one query or round trip each), so a load costs the thread's length
 * times a query. The base class invites savers "with direct storage access" to override it, as
 * `MemorySaver` does; LangGraph's SQL savers do not (yet: it belongs upstream). The SQLite and
 * PostgreSQL adapters read the parent chain, the nearest stored seed of each wanted channel, and
 * only the wanted channels' writes in one query; this file turns those rows into the base walk's
 * result.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { BaseCheckpointSaver, MemorySaver } from "@langchain/langgraph";

/** One channel's replay, the shape of LangGraph's `DeltaChannelHistory`. */
export interface ChannelHistory {
  seed?: unknown;
  writes: [string, string, unknown][];
}
export type History = Record<string, ChannelHistory>;
/** A stored write or a stored whole value (`seed`); `depth` 1 is the target checkpoint's parent. */
export interface HistoryRow {
  kind: "write" | "seed";
  depth: number;
  taskId: string;
  channel: string;
  value: unknown;
}

export type HistoryOptions = Parameters<BaseCheckpointSaver["getDeltaChannelHistory"]>[0];
type Serde = BaseCheckpointSaver["serde"];

/** A row as a backend's history query returns it, its value still serialised. */
export interface StoredRow {
  kind: "write" | "seed";
  depth: number;
  taskId: string;
  channel: string;
  type: string | null;
  value: string | Uint8Array | null;
}

/**
 * The base walk's result from rows: for each channel, its nearest seed (smallest depth) and its
 * writes from the target's parent back to the seed's checkpoint included (to the root when there is
 * none), oldest checkpoint first and, within one, in the order the rows came (the saver's own).
 */
export function assembleHistory(channels: string[], rows: HistoryRow[]): History {
  const seedDepth = new Map<string, number>();
  const result: History = Object.fromEntries(channels.map((c) => [c, { writes: [] }]));
  for (const row of rows) {
    if (row.kind !== "seed" || (seedDepth.get(row.channel) ?? Infinity) <= row.depth) continue;
    seedDepth.set(row.channel, row.depth);
    result[row.channel]!.seed = row.value;
  }
  const writes = rows.filter((r) => r.kind === "write" && r.depth <= (seedDepth.get(r.channel) ?? Infinity));
  const ordered = writes.map((w, i) => ({ w, i })).sort((a, b) => b.w.depth - a.w.depth || a.i - b.i);
  for (const { w } of ordered) result[w.channel]?.writes.push([w.taskId, w.channel, w.value]);
  return result;
}

/** The checkpoint a history is asked for: thread, namespace, and id (none: the latest). */
export function target(config: RunnableConfig) {
  const c = config.configurable ?? {};
  return {
    t: String(c.thread_id),
    ns: typeof c.checkpoint_ns === "string" ? c.checkpoint_ns : "",
    id: typeof c.checkpoint_id === "string" ? c.checkpoint_id : null,
  };
}

/** The serializer every saver gets unless the caller passes one (LangGraph's `JsonPlusSerializer`). */
const defaultSerde = new MemorySaver().serde;
const decoder = new TextDecoder();

/**
 * A stored value as the saver's own `getTuple` deserialises it. LangGraph's default serializer
 * revives `lc` records (snapshots, sets, maps, messages) in an async walk over every node, which
 * costs ~40 times a plain `JSON.parse` (measured: 21 ms against 0.6 ms for a 200-step thread's 397
 * writes); text without an `"lc"` key holds no such record, so it parses to the same value directly.
 */
async function load(serde: Serde, type: string, raw: string | Uint8Array): Promise<unknown> {
  const plain =
    type === "json" && serde.constructor === defaultSerde.constructor && serde.loadsTyped === defaultSerde.loadsTyped;
  if (!plain) return serde.loadsTyped(type, raw);
  const text = typeof raw === "string" ? raw : decoder.decode(raw);
  return text.includes('"lc"') ? serde.loadsTyped(type, text) : JSON.parse(text);
}

/** Every row's value deserialised; `wrapped`: a seed is JSON text cut out of its checkpoint (SQLite). */
export async function revive(serde: Serde, rows: StoredRow[], wrapped: boolean): Promise<HistoryRow[]> {
  const out: HistoryRow[] = [];
  for (const r of rows) {
    const type = r.type ?? "json";
    const raw = r.value ?? "";
    const value =
      r.kind === "seed" && wrapped
        ? ((await load(serde, type, `{"v":${String(raw)}}`)) as { v: unknown }).v
        : await load(serde, type, raw);
    out.push({ kind: r.kind, depth: Number(r.depth), taskId: r.taskId, channel: r.channel, value });
  }
  return out;
}

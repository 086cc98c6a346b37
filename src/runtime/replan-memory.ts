/**
 * Replan memory's store access on LangGraph's store (docs/architecture.md "Replan memory"): read an entry and its
 * score, count one outcome. What to do with an entry is decided in policy/memory/memory.ts and
 * policy/replan/recall.ts; the replanner reads and writes through nodes/replanner/memory-read.ts.
 */
import type { BaseStore } from "@langchain/langgraph";
import {
  MemoryEntrySchema,
  outcomeKey,
  outcomesNamespace,
  tally,
  type MemoryEntry,
  type Score,
} from "../policy/memory/memory.js";

/** An entry from the store; a value that is not one (another writer, an old version) counts as none. */
export async function readEntry(store: BaseStore, namespace: string[], key: string): Promise<MemoryEntry | undefined> {
  const item = await store.get(namespace, key);
  const parsed = MemoryEntrySchema.safeParse(item?.value);
  return parsed.success ? parsed.data : undefined;
}

const PAGE = 500;

/**
 * Uses and successes of one revision, counted from its outcome items (paged: `search` returns 10
 * by default). By item key: PostgresStore lists the newest first, so an outcome written between
 * two pages pushes one already read onto the next page.
 */
export async function entryScore(store: BaseStore, namespace: string[], revision: string): Promise<Score> {
  const values = new Map<string, unknown>();
  for (let offset = 0; ; offset += PAGE) {
    const page = await store.search(outcomesNamespace(namespace, revision), { limit: PAGE, offset });
    for (const item of page) values.set(item.key, item.value);
    if (page.length < PAGE) return tally([...values.values()]);
  }
}

/** An entry with its score, or none. */
export async function readScored(store: BaseStore, namespace: string[], entry: MemoryEntry | undefined) {
  return entry ? { ...entry, ...(await entryScore(store, namespace, entry.revision)) } : undefined;
}

/**
 * Counts one settled use of one revision: its own item, keyed by the outcome id's hash, so
 * concurrent writers never overwrite each other's counts and a repeated report is one outcome.
 */
export async function scoreEntry(
  store: BaseStore,
  namespace: string[],
  revision: string,
  outcome: string,
  success: boolean,
) {
  await store.put(outcomesNamespace(namespace, revision), outcomeKey(outcome), { success });
}

/**
 * `thread:namespace:version`: one replan of one run, the same after a crash and a resume. A node
 * sees its own task in `checkpoint_ns` (`executor:<task id>`); the graph's namespace is the rest.
 */
export function outcomeId(configurable: Record<string, unknown> | undefined, version: number) {
  const ns = String(configurable?.checkpoint_ns ?? "")
    .split("|")
    .slice(0, -1)
    .join("|");
  return `${String(configurable?.thread_id ?? "")}:${ns}:${version}`;
}

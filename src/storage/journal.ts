/**
 * The effect journal (docs/decisions/0038-effect-journal.md): before a side-effecting call
 * its intent is made durable, after it its result. A recorded intent without a result is a call whose
 * outcome is unknown (the process died in it, or our deadline cut it): it is settled before the
 * operation may run again. Entries are keyed by thread and operation key, not by checkpoint, so every
 * branch of a thread's history (a fork, time travel) sees what any branch committed. One
 * implementation per backend, beside the saver's own tables (the contract: contracts/effect-journal.ts):
 * SQLite (journal-sqlite.ts), PostgreSQL (journal-postgres.ts), and for any other saver a map held by
 * this process (below).
 */
import type { EffectResult, JournalEntry, RunJournal } from "../contracts/effect-journal.js";

export type { EffectIntent, EffectResult, JournalEntry } from "../contracts/effect-journal.js";

export interface EffectJournal extends RunJournal {
  /** Forgets a thread's entries (with its checkpoints). */
  deleteThread(threadId: string): Promise<void>;
  /** The thread's intents with no result: calls whose outcome is unknown, for what a status shows of a cut run. */
  unsettled(threadId: string): Promise<JournalEntry[]>;
}

/**
 * The journal for a saver whose storage this package cannot see (MemorySaver, a Redis or MongoDB
 * checkpointer): entries live in this process. It covers what happens within the process — a call cut
 * by its deadline, a stopped run, a fork or time travel — but not a crash: a new process starts empty.
 */
export function memoryJournal(): EffectJournal {
  const entries = new Map<string, JournalEntry>();
  const at = (threadId: string, key: string) => `${threadId}\u0000${key}`;
  return {
    async intent(threadId, intent) {
      entries.set(at(threadId, intent.key), { ...intent });
    },
    async result(threadId, key, result) {
      const entry = entries.get(at(threadId, key));
      if (entry) entry.result = result;
    },
    async lookup(threadId, key) {
      const entry = entries.get(at(threadId, key));
      return entry ? { ...entry } : undefined;
    },
    async deleteThread(threadId) {
      for (const k of entries.keys()) if (k.startsWith(`${threadId}\u0000`)) entries.delete(k);
    },
    async unsettled(threadId) {
      return [...entries]
        .filter(([k, entry]) => k.startsWith(`${threadId}\u0000`) && entry.result === undefined)
        .map(([, entry]) => ({ ...entry }));
    },
  };
}

/** An entry as stored: the intent's fields, and the result as JSON text (null while in doubt). */
export interface StoredEntry {
  step_id: string;
  tool: string;
  args: string;
  attempt: number;
  at: string;
  result: string | null;
}

export function entryOf(key: string, row: StoredEntry): JournalEntry {
  const args = JSON.parse(row.args) as Record<string, unknown>;
  const entry: JournalEntry = {
    key,
    stepId: row.step_id,
    tool: row.tool,
    args,
    attempt: Number(row.attempt),
    at: row.at,
  };
  if (row.result !== null) entry.result = JSON.parse(row.result) as EffectResult;
  return entry;
}

export const JOURNAL_TABLE = "langgraph_replan_effects";

/**
 * The adapter for any other `BaseCheckpointSaver` (MemorySaver, or a Redis or MongoDB
 * checkpointer): only the saver's public methods, whose storage the plan manager cannot see.
 * A run's claim holds the thread in this process only (graph/thread-lock.ts holds it; another
 * process on the same storage is not stopped); history is LangGraph's own walk (one `getTuple`
 * per checkpoint unless the saver overrides `getDeltaChannelHistory`); listing reads every
 * checkpoint through `list`; deleting is the saver's `deleteThread`.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { memoryJournal } from "./journal.js";
import { checkListOptions } from "./list-options.js";
import type { ListThreadsOptions, SaverAdapter, ThreadSummary } from "./saver-adapter.js";

const free = { release: async () => undefined };

export function anySaverAdapter(saver: BaseCheckpointSaver): SaverAdapter {
  const journal = memoryJournal();
  return {
    name: "any saver",
    claims: "process",
    claimThread: async () => free,
    heldBy: async () => undefined,
    direct: {},
    journal,
    listThreads: (options) => listThreads(saver, options),
    async deleteThread(threadId, onlyIf) {
      if (onlyIf && !(await onlyIf())) return { deleted: false, declined: true };
      await saver.deleteThread(threadId);
      await journal.deleteThread(threadId);
      return { deleted: true };
    },
  };
}

async function listThreads(saver: BaseCheckpointSaver, options: ListThreadsOptions = {}): Promise<ThreadSummary[]> {
  const { limit, before } = checkListOptions(options);
  const latest = new Map<string, ThreadSummary>();
  for await (const tuple of saver.list({ configurable: {} })) {
    const c = tuple.config.configurable ?? {};
    if (c.checkpoint_ns) continue;
    const threadId = String(c.thread_id);
    const checkpointId = tuple.checkpoint.id;
    const known = latest.get(threadId);
    if (!known || known.checkpointId < checkpointId)
      latest.set(threadId, { threadId, checkpointId, metadata: tuple.metadata });
  }
  const newestFirst = [...latest.values()]
    .filter((t) => before === undefined || t.checkpointId < before)
    .sort((a, b) =>
      a.checkpointId < b.checkpointId ? 1 : a.checkpointId > b.checkpointId ? -1 : a.threadId < b.threadId ? -1 : 1,
    );
  return limit === undefined ? newestFirst : newestFirst.slice(0, limit);
}

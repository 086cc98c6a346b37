/**
 * Thread retention, for the command line and the MCP server
 * (docs/decisions/0036-thread-retention.md): threads a page at a time, newest first,
 * archived ones left out unless asked; archiving (a mark beside the checkpoints, nothing deleted);
 * deleting one thread; pruning the threads whose latest checkpoint is older than a duration.
 * Deleting refuses a thread a run holds — in this process, or on SQLite and PostgreSQL in another
 * one through the database claim (graph/process-claim.ts) — with `thread_busy`.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { isPlanManagerError, PlanManagerError } from "../errors.js";
import { RunStatusSchema, type RunStatus } from "../plan/schema/outcome.js";
import { saverAdapter, type ArchiveStore, type ThreadSummary } from "../storage/index.js";
import { deleteThread as deleteUnlessHeld } from "./process-claim.js";

/** A listed thread: its latest top-level checkpoint, and whether it is archived. */
export interface ListedThread extends ThreadSummary {
  archived: boolean;
}

/** A page of `listThreads`: the threads, newest first, and the cursor of the next page. */
export interface ThreadPage {
  threads: ListedThread[];
  /** Pass it as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
}

/** Which threads `listThreads` returns: how many, from where, archived or not. */
export interface ThreadListOptions {
  /** At most this many threads (default: all). */
  limit?: number;
  /** The `nextCursor` of the previous page (default: start with the newest thread). */
  cursor?: string;
  /** `"exclude"` (default) leaves archived threads out, `"only"` lists them alone, `"include"` lists both. */
  archived?: "exclude" | "only" | "include";
}

/** Which threads `pruneThreads` deletes: older than a duration, of some statuses, or a dry run. */
export interface PruneOptions {
  /** Prune the threads whose latest checkpoint is older than this many milliseconds. Required. */
  olderThanMs: number;
  /** Only threads whose run status is one of these (default: whatever their status). */
  statuses?: readonly RunStatus[];
  /** Epoch milliseconds the age is counted from (default: `Date.now()`). */
  now?: number;
  /** Say what would be pruned and delete nothing (default false). */
  dryRun?: boolean;
}

/** A thread old enough to prune: its id, its run status, and when its latest checkpoint was written. */
export interface PruneCandidate {
  threadId: string;
  status?: string;
  updatedAt: string;
}

/** A thread that matched but was kept: a run held it (`busy`), or it moved on meanwhile (`changed`). */
export interface PruneSkip {
  threadId: string;
  reason: "busy" | "changed";
  message: string;
}

/** What `pruneThreads` did: the threads that matched, those deleted, and those skipped because a run held them. */
export interface PruneResult {
  /** Every thread that matched, newest first. */
  matched: PruneCandidate[];
  /** The ids deleted (none on a dry run). */
  deleted: string[];
  skipped: PruneSkip[];
}

const invalid = (path: string, message: string) => new PlanManagerError("invalid_options", message, { path });

function checkThreadId(threadId: unknown): string {
  if (typeof threadId === "string" && threadId.length > 0) return threadId;
  throw invalid("threadId", `threadId must be a non-empty string, got ${JSON.stringify(String(threadId))}`);
}

const notFound = (threadId: string) =>
  new PlanManagerError("thread_not_found", `no thread "${threadId}" in this checkpointer (nothing was changed)`, {
    path: "threadId",
  });

async function latest(saver: BaseCheckpointSaver, threadId: string) {
  return saver.getTuple({ configurable: { thread_id: threadId, checkpoint_ns: "" } });
}

function archiveOf(saver: BaseCheckpointSaver): ArchiveStore {
  const adapter = saverAdapter(saver);
  if (adapter.archive) return adapter.archive;
  throw new PlanManagerError(
    "unsupported_saver",
    `archiving needs LangGraph's SqliteSaver or PostgresSaver, which keep the marks beside the checkpoints; ` +
      `this checkpointer (${adapter.name}) cannot keep them: delete or prune its threads instead`,
    { path: "checkpointer" },
  );
}

/** Marks a thread archived, so that `listThreads` leaves it out unless asked; nothing is deleted. */
export async function archiveThread(
  saver: BaseCheckpointSaver,
  threadId: string,
  options: { now?: number } = {},
): Promise<void> {
  const id = checkThreadId(threadId);
  const store = archiveOf(saver);
  if (!(await latest(saver, id))) throw notFound(id);
  await store.mark(id, options.now ?? Date.now());
}

/** Lists an archived thread again; resolves to whether it was archived. */
export async function unarchiveThread(saver: BaseCheckpointSaver, threadId: string): Promise<boolean> {
  const id = checkThreadId(threadId);
  const store = archiveOf(saver);
  const was = await store.unmark(id);
  if (!was && !(await latest(saver, id))) throw notFound(id);
  return was;
}

/**
 * Deletes the thread's checkpoints, writes and blobs in every namespace, its claim and its archive
 * mark; refuses with `thread_busy` while a run holds it, and with `thread_not_found` when there is
 * nothing to delete.
 */
export async function deleteThread(saver: BaseCheckpointSaver, threadId: string): Promise<void> {
  const id = checkThreadId(threadId);
  const store = saverAdapter(saver).archive;
  if (!(await latest(saver, id))) {
    // A mark left by a delete that stopped halfway would archive a new thread of the same id.
    if (!(await store?.unmark(id))) throw notFound(id);
    return;
  }
  await deleteUnlessHeld(saver, id);
  await store?.unmark(id);
}

const CURSOR = /^c1\.([A-Za-z0-9_-]+)$/;
const toCursor = (checkpointId: string) => `c1.${Buffer.from(checkpointId, "utf8").toString("base64url")}`;

/** The cursor of the page that starts right after `thread` (for a caller that filters a page further). */
export const cursorAfter = (thread: Pick<ThreadSummary, "checkpointId">) => toCursor(thread.checkpointId);

function fromCursor(cursor: unknown): string | undefined {
  if (cursor === undefined) return undefined;
  const match = typeof cursor === "string" ? CURSOR.exec(cursor) : null;
  if (!match) throw invalid("cursor", `cursor must be the nextCursor of an earlier page, got ${String(cursor)}`);
  return Buffer.from(match[1]!, "base64url").toString("utf8");
}

/**
 * The first page read while archived threads are skipped, doubled for each page after it: a few
 * marks cost one query more, a thousand newest threads archived four more, not one per mark.
 */
const CHUNK = 100;

/** Threads newest first (by their latest checkpoint), a page at a time; archived ones left out unless asked. */
export async function listThreads(saver: BaseCheckpointSaver, options: ThreadListOptions = {}): Promise<ThreadPage> {
  const { limit, archived = "exclude" } = options;
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 1))
    throw invalid("limit", `limit must be a whole number ≥ 1, got ${String(limit)}`);
  if (!["exclude", "only", "include"].includes(archived))
    throw invalid("archived", `archived must be "exclude", "only" or "include", got ${String(archived)}`);
  const adapter = saverAdapter(saver);
  const store = archived === "only" ? archiveOf(saver) : adapter.archive;
  const want = limit === undefined ? Infinity : limit + 1;
  const found: ListedThread[] = [];
  let before = fromCursor(options.cursor);
  for (let chunk = CHUNK; ; chunk *= 2) {
    const size = limit === undefined ? undefined : Math.max(want - found.length, chunk);
    const page = await adapter.listThreads({ limit: size, before });
    const marks = store ? await store.marked(page.map((t) => t.threadId)) : new Set<string>();
    for (const thread of page) {
      const isArchived = marks.has(thread.threadId);
      if (archived === "include" || isArchived === (archived === "only"))
        found.push({ ...thread, archived: isArchived });
    }
    if (found.length >= want || size === undefined || page.length < size) break;
    before = page.at(-1)!.checkpointId;
  }
  if (found.length < want) return { threads: found };
  const threads = found.slice(0, limit);
  return { threads, nextCursor: toCursor(threads.at(-1)!.checkpointId) };
}

function checkPrune(options: PruneOptions) {
  const { olderThanMs, statuses, now = Date.now(), dryRun = false } = options;
  if (!(Number.isSafeInteger(olderThanMs) && olderThanMs >= 0))
    throw invalid("olderThanMs", `olderThanMs must be a whole number of milliseconds ≥ 0, got ${String(olderThanMs)}`);
  if (!Number.isFinite(now)) throw invalid("now", `now must be epoch milliseconds, got ${String(now)}`);
  if (statuses !== undefined && !Array.isArray(statuses))
    throw invalid("statuses", `statuses must be a list of run statuses, got ${String(statuses)}`);
  for (const status of statuses ?? [])
    if (!RunStatusSchema.safeParse(status).success)
      throw invalid(
        "statuses",
        `unknown run status ${JSON.stringify(String(status))}: choose from ${RunStatusSchema.options.join(", ")}`,
      );
  return { cutoff: now - olderThanMs, statuses: statuses && new Set<string>(statuses), dryRun };
}

/**
 * Deletes the threads whose latest checkpoint was written before `now - olderThanMs` and whose run
 * status (read from that checkpoint alone, not the history) is one of `statuses`. A thread a run
 * holds is skipped and named, as is one that moved on between the look and the delete.
 */
export async function pruneThreads(saver: BaseCheckpointSaver, options: PruneOptions): Promise<PruneResult> {
  const { cutoff, statuses, dryRun } = checkPrune(options);
  const result: PruneResult = { matched: [], deleted: [], skipped: [] };
  const seen = new Map<string, string>();
  for (const { threadId } of await saverAdapter(saver).listThreads()) {
    const tuple = await latest(saver, threadId);
    if (!tuple) continue;
    const updatedAt = Date.parse(tuple.checkpoint.ts);
    const status = (tuple.checkpoint.channel_values as { status?: unknown } | undefined)?.status;
    const statusText = typeof status === "string" ? status : undefined;
    if (!(updatedAt < cutoff) || (statuses && !statuses.has(statusText ?? ""))) continue;
    result.matched.push({ threadId, status: statusText, updatedAt: tuple.checkpoint.ts });
    seen.set(threadId, tuple.checkpoint.id);
  }
  if (dryRun) return result;
  for (const { threadId } of result.matched) {
    const unchanged = async () => (await latest(saver, threadId))?.checkpoint.id === seen.get(threadId);
    try {
      if (await deleteUnlessHeld(saver, threadId, unchanged)) {
        await saverAdapter(saver).archive?.unmark(threadId);
        result.deleted.push(threadId);
      } else result.skipped.push({ threadId, reason: "changed", message: `thread "${threadId}" moved on meanwhile` });
    } catch (error) {
      if (!isPlanManagerError(error) || error.code !== "thread_busy") throw error;
      result.skipped.push({ threadId, reason: "busy", message: error.message });
    }
  }
  return result;
}

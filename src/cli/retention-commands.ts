/**
 * `threads`, `archive`, `unarchive`, `delete` and `prune`: the command line over the library's thread
 * retention (graph/retention.ts, docs/decisions/0036-thread-retention.md). `threads`
 * lists newest first, a page at a time with `--limit`, archived threads only with `--archived` or
 * `--all`; deleting refuses a thread a run holds (`thread_busy`, exit 1), and `prune` names each
 * such thread it skipped.
 */
import { parseDuration } from "../graph/duration.js";
import {
  archiveThread,
  deleteThread,
  listThreads,
  pruneThreads,
  unarchiveThread,
  type PruneCandidate,
} from "../graph/retention.js";
import type { RunStatus } from "../plan/schema/outcome.js";
import { agentSnapshot } from "./agent-thread.js";
import { pendingQuestion, type CliIo, type Context } from "./cli-context.js";
import { CliError, type Target } from "./target.js";
import { threadLine } from "./thread-line.js";

/** The flags these commands read, as `parseArgs` options. */
export const RETENTION_FLAGS = {
  limit: { type: "string" },
  cursor: { type: "string" },
  archived: { type: "boolean" },
  all: { type: "boolean" },
  "older-than": { type: "string" },
  status: { type: "string" },
  "dry-run": { type: "boolean" },
} as const;

/** Their values. */
export interface RetentionFlags {
  limit?: string;
  cursor?: string;
  archived?: boolean;
  all?: boolean;
  "older-than"?: string;
  status?: string;
  "dry-run"?: boolean;
}

export interface RetentionContext {
  target: Target;
  graph: Context["graph"];
  thread: string | undefined;
  flags: RetentionFlags;
  io: CliIo;
}

function needThread(ctx: RetentionContext, command: string): string {
  if (ctx.thread) return ctx.thread;
  throw new CliError(`${command} needs a thread id: langgraph-replan ${command} ${ctx.target.label} THREAD`);
}

function pageSize(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (/^\d+$/.test(text) && Number(text) >= 1 && Number.isSafeInteger(Number(text))) return Number(text);
  throw new CliError(`--limit must be a whole number ≥ 1, got "${text}"`);
}

async function threads(ctx: RetentionContext): Promise<number> {
  const { target, graph, flags, io } = ctx;
  if (flags.archived && flags.all) throw new CliError("give --archived (archived threads only) or --all, not both");
  const archived = flags.archived ? "only" : flags.all ? "include" : "exclude";
  const limit = pageSize(flags.limit);
  const page = await listThreads(target.saver, { limit, cursor: flags.cursor, archived });
  if (page.threads.length === 0) io.out(`no ${flags.archived ? "archived " : ""}threads in ${target.label}`);
  for (const { threadId, archived: isArchived } of page.threads) {
    const snapshot =
      (await agentSnapshot(target.saver, threadId)) ??
      (await graph.getState({ configurable: { thread_id: threadId } }));
    const asked = pendingQuestion(snapshot)?.value?.stepId;
    const line = threadLine(threadId, snapshot.values as Record<string, never>, io.now(), asked);
    io.out(isArchived ? `${line}  archived` : line);
  }
  // On stderr: stdout stays one line per thread for scripts.
  if (page.nextCursor) {
    const which = flags.archived ? " --archived" : flags.all ? " --all" : "";
    io.err(`more: langgraph-replan threads ${target.label}${which} --limit ${limit} --cursor ${page.nextCursor}`);
  }
  return 0;
}

async function archive(ctx: RetentionContext): Promise<number> {
  const thread = needThread(ctx, "archive");
  await archiveThread(ctx.target.saver, thread, { now: ctx.io.now() });
  ctx.io.out(`archived "${thread}": threads lists it with --archived or --all; unarchive lists it again`);
  return 0;
}

async function unarchive(ctx: RetentionContext): Promise<number> {
  const thread = needThread(ctx, "unarchive");
  const was = await unarchiveThread(ctx.target.saver, thread);
  ctx.io.out(was ? `unarchived "${thread}"` : `"${thread}" was not archived`);
  return 0;
}

async function remove(ctx: RetentionContext): Promise<number> {
  const thread = needThread(ctx, "delete");
  await deleteThread(ctx.target.saver, thread);
  ctx.io.out(`deleted "${thread}": its checkpoints, writes and claims in every namespace`);
  return 0;
}

const described = (t: PruneCandidate) => `"${t.threadId}" (${t.status ?? "no status"}, last checkpoint ${t.updatedAt})`;

async function prune(ctx: RetentionContext): Promise<number> {
  const { flags, io, target } = ctx;
  const olderThan = flags["older-than"];
  if (olderThan === undefined)
    throw new CliError(`prune needs --older-than DURATION: langgraph-replan prune ${target.label} --older-than 30d`);
  const statuses = flags.status
    ?.split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "") as RunStatus[] | undefined;
  if (statuses?.length === 0) throw new CliError("--status needs run statuses, e.g. --status completed,failed");
  const dryRun = flags["dry-run"] === true;
  const result = await pruneThreads(target.saver, {
    olderThanMs: parseDuration(olderThan, "--older-than"),
    statuses,
    now: io.now(),
    dryRun,
  });
  const deleted = new Set(result.deleted);
  for (const t of result.matched)
    if (dryRun || deleted.has(t.threadId)) io.out(`${dryRun ? "would delete" : "deleted"} ${described(t)}`);
  for (const s of result.skipped) io.out(`skipped "${s.threadId}" (${s.reason}): ${s.message}`);
  const which = statuses ? ` with status ${statuses.join(" or ")}` : "";
  io.out(
    dryRun
      ? `${result.matched.length} thread(s) older than ${olderThan}${which} would be deleted (dry run: nothing deleted)`
      : `deleted ${result.deleted.length} of ${result.matched.length} thread(s) older than ${olderThan}${which}` +
          (result.skipped.length ? `; skipped ${result.skipped.length}` : ""),
  );
  return 0;
}

/** The retention commands by name (`delete` is a reserved word, hence `remove`). */
export const RETENTION_COMMANDS: Readonly<Record<string, (ctx: RetentionContext) => Promise<number>>> = {
  threads,
  archive,
  unarchive,
  delete: remove,
  prune,
};

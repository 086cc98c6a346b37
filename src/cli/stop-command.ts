/**
 * `stop THREAD`: a thread no run holds is stopped at once (its checkpoint is written here); a
 * thread a worker is running gets a stop request that the worker takes at its next step boundary.
 * Over a SQLite file nothing tells a running process, so only a thread waiting for a person can be
 * stopped there.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { requestStop, stopProblem } from "../worker/stop-run.js";
import { pendingQuestion, snapshotOf, type Context } from "./cli-context.js";
import { loadPackage } from "./packages.js";
import { CliError } from "./target.js";

async function stopNow(ctx: Context, config: LangGraphRunnableConfig): Promise<void> {
  const problem = stopProblem(await ctx.graph.getState(config), ctx.thread);
  if (problem) throw new CliError(problem);
  await requestStop(ctx.graph, config, { reason: ctx.options.reason, now: ctx.io.now });
}

async function stopOnPostgres(ctx: Context, url: string, config: LangGraphRunnableConfig): Promise<boolean> {
  // Loaded here, not at the top: a SQLite file must not need PostgreSQL's packages.
  const { openThreadLocks } = await loadPackage("a postgresql:// URL", () => import("../worker/thread-locks.js"));
  const locks = await openThreadLocks(url, 2);
  try {
    await locks.addStopRequest(ctx.thread, ctx.options.reason);
    const lock = await locks.tryLock(ctx.thread);
    if (!lock) return false;
    try {
      await stopNow(ctx, config);
    } finally {
      await locks.clearStopRequest(ctx.thread);
      await lock.release();
    }
    return true;
  } finally {
    await locks.close();
  }
}

export async function stopThread(ctx: Context): Promise<number> {
  const config = { configurable: { thread_id: ctx.thread } };
  const snapshot = await snapshotOf(ctx);
  const problem = stopProblem(snapshot, ctx.thread);
  if (problem) throw new CliError(problem);
  const previous = (snapshot.values as { status: string }).status;
  if (ctx.target.postgres) {
    if (!(await stopOnPostgres(ctx, ctx.target.postgres, config))) {
      ctx.io.out(`stop requested: "${ctx.thread}" is running on a worker and stops at its next step boundary`);
      return 0;
    }
  } else {
    if (pendingQuestion(snapshot) === undefined)
      throw new CliError(
        `thread "${ctx.thread}" is ${previous}, not waiting for a person: over a SQLite file only a paused thread ` +
          "can be stopped (threads run by workers on PostgreSQL stop at their next step boundary)",
      );
    await stopNow(ctx, config);
  }
  ctx.io.out(
    `stopped "${ctx.thread}" (it was ${previous}); ` +
      `carry on with: langgraph-replan resume ${ctx.target.label} ${ctx.thread}`,
  );
  return 0;
}

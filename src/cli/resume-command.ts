/**
 * `resume THREAD [--value JSON]`: the answer is checked as `resumeRun` checks it, then queued
 * for the workers (PostgreSQL). A stopped thread is resumed without a value. Over a SQLite file the
 * command line cannot run the graph (it has no tools): a stopped thread is reopened for the
 * process that owns it, and an answer must be given there.
 */
import { answerProblemFor, type PausedValues } from "../graph/resume.js";
import type { ResumeValue } from "../plan/schema.js";
import { reopenStopped } from "../worker/stop.js";
import { pendingQuestion, snapshotOf, type Context } from "./context.js";
import { loadPackage } from "./packages.js";
import { CliError } from "./target.js";

/** The workers' queue, loaded only for a postgresql:// URL (a SQLite file must not need pg-boss). */
const queueModule = () => loadPackage("a postgresql:// URL", () => import("../worker/queue.js"));

async function resumeStopped(ctx: Context): Promise<number> {
  if (ctx.options.value !== undefined)
    throw new CliError(`thread "${ctx.thread}" is stopped: resume it without --value; it carries on where it stopped`);
  const config = { configurable: { thread_id: ctx.thread } };
  if (!ctx.target.postgres) {
    await reopenStopped(ctx.graph, config);
    const status = ((await ctx.graph.getState(config)).values as { status: string }).status;
    ctx.io.out(
      `reopened "${ctx.thread}" (status: ${status}); the process that owns its tools carries on with ` +
        `graph.invoke(null, { configurable: { thread_id: "${ctx.thread}" } })`,
    );
    return 0;
  }
  const queue = await (await queueModule()).openQueue(ctx.target.postgres);
  try {
    await queue.enqueueResumeStopped(ctx.thread);
  } finally {
    await queue.close();
  }
  ctx.io.out(`queued: "${ctx.thread}" carries on where it stopped (a worker takes it)`);
  return 0;
}

function parseValue(raw: string | undefined, options: readonly string[]): unknown {
  if (raw === undefined)
    throw new CliError(`resume needs --value JSON, e.g. --value '{"action":"${options[0] ?? "approve"}"}'`);
  try {
    return JSON.parse(raw);
  } catch {
    // The parser's own message differs between Node versions; the value itself says enough.
    throw new CliError(`--value is not valid JSON: ${raw.slice(0, 64)} (e.g. --value '{"action":"${options[0]}"}')`);
  }
}

export async function queueResume(ctx: Context): Promise<number> {
  const snapshot = await snapshotOf(ctx);
  const status = (snapshot.values as { status: string }).status;
  if (status === "stopped") return resumeStopped(ctx);
  const question = pendingQuestion(snapshot);
  if (!question?.value)
    throw new CliError(
      `thread "${ctx.thread}" has no pending question (status: ${status}): there is nothing to answer`,
    );
  const { kind, stepId, options } = question.value;
  const value = parseValue(ctx.options.value, options);
  const problem = answerProblemFor(value, question.value, snapshot.values as PausedValues);
  const about = `${kind}${stepId ? ` for step "${stepId}"` : ""}`;
  if (problem) throw new CliError(`thread "${ctx.thread}", ${about}: ${problem}`);
  if (!ctx.target.postgres)
    throw new CliError(
      `the answer is valid, but over a SQLite file it must be given by the process that owns the graph's tools: ` +
        `resumeRun(graph, { configurable: { thread_id: "${ctx.thread}" } }, value) ` +
        `(workers are answered through a postgresql:// URL)`,
    );
  const queue = await (await queueModule()).openQueue(ctx.target.postgres);
  try {
    await queue.enqueueResume(ctx.thread, value as ResumeValue, question.id);
  } finally {
    await queue.close();
  }
  ctx.io.out(`queued the answer to "${ctx.thread}" (${about}): a worker carries on`);
  return 0;
}

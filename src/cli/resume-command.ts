/**
 * `resume THREAD [--answer JSON | --value JSON]`: the answer is checked as `resumeRun` checks it,
 * then queued for the workers (PostgreSQL). Over a SQLite file `--answer` gives it here: the command
 * line has no tools, so the run it starts takes the answer and stops before any node that calls the
 * outside world, for the process that owns the tools to carry on; `--value` only checks it there.
 * A stopped thread is resumed without an answer: one that waited for a person asks its question
 * again, for `--answer`.
 */
import { Command, type StateSnapshot } from "@langchain/langgraph";
import { answerProblemFor, type PausedValues } from "../graph/resume-run.js";
import type { ResumeValue } from "../plan/schema/interrupts.js";
import { reopenStopped } from "../worker/stop-run.js";
import { pendingQuestion, snapshotOf, type Context } from "./cli-context.js";
import { loadPackage } from "./packages.js";
import { CliError, readerGraph } from "./target.js";
import { threadClock } from "./thread-clock.js";

/** The nodes that call tools, models or planners: a run the command line starts stops before them. */
const OWNER_NODES = ["planner", "executor", "classifier", "replanner", "extender"];

/** Statuses a run ends with (no owner needed to carry on). */
const ENDED = new Set(["completed", "partial", "failed", "aborted"]);

const carryOn = (thread: string) =>
  `the process that owns its tools carries on with graph.invoke(null, { configurable: { thread_id: "${thread}" } })`;

/** The question's kind and step, as messages name it. */
const aboutQuestion = (question: { kind: string; stepId?: string }) =>
  `${question.kind}${question.stepId ? ` for step "${question.stepId}"` : ""}`;

/** The workers' queue, loaded only for a postgresql:// URL (a SQLite file must not need pg-boss). */
const queueModule = () => loadPackage("a postgresql:// URL", () => import("../worker/queue.js"));

/**
 * The graph that gives an answer here: its stamps (the answer's decision, the step's end, a human step's
 * deadline) are on the run's clock, not the wall clock (thread-clock.ts).
 */
function answeringGraph(ctx: Context, snapshot: StateSnapshot) {
  return readerGraph(ctx.target.saver, threadClock(snapshot.values as never, snapshot.createdAt, ctx.io.now));
}

async function resumeStopped(ctx: Context, snapshot: StateSnapshot): Promise<number> {
  if (ctx.options.answer !== undefined)
    throw new CliError(
      `thread "${ctx.thread}" is stopped: resume it without --answer first; it asks its question again`,
    );
  if (ctx.options.value !== undefined)
    throw new CliError(`thread "${ctx.thread}" is stopped: resume it without --value; it carries on where it stopped`);
  const config = { configurable: { thread_id: ctx.thread } };
  if (!ctx.target.postgres) {
    const graph = answeringGraph(ctx, snapshot);
    await reopenStopped(graph, config);
    snapshot = await graph.getState(config);
    let status = (snapshot.values as { status: string }).status;
    if (status !== "awaiting_human" && status !== "awaiting_review") {
      ctx.io.out(`reopened "${ctx.thread}" (status: ${status}); ${carryOn(ctx.thread)}`);
      return 0;
    }
    // A thread that waited for a person needs an answer, not invoke(null): the question is asked
    // again here (the human node has no side effects before an answer), so --answer can give it.
    await graph.invoke(null, { ...config, interruptBefore: OWNER_NODES });
    snapshot = await graph.getState(config);
    status = (snapshot.values as { status: string }).status;
    const question = pendingQuestion(snapshot)?.value;
    if (!question) {
      ctx.io.out(`reopened "${ctx.thread}" (status: ${status}); ${carryOn(ctx.thread)}`);
      return 0;
    }
    ctx.io.out(
      `reopened "${ctx.thread}" (status: ${status}): it waits for a person (${aboutQuestion(question)}); ` +
        `answer with: langgraph-replan resume ${ctx.target.label} ${ctx.thread} --answer JSON`,
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

function parseValue(raw: string | undefined, options: readonly string[], flag = "--value"): unknown {
  if (raw === undefined)
    throw new CliError(`resume needs --value JSON, e.g. --value '{"action":"${options[0] ?? "approve"}"}'`);
  try {
    return JSON.parse(raw);
  } catch {
    // The parser's own message differs between Node versions; the value itself says enough.
    throw new CliError(`${flag} is not valid JSON: ${raw.slice(0, 64)} (e.g. ${flag} '{"action":"${options[0]}"}')`);
  }
}

/** Gives a checked answer over a SQLite file: the run takes it and stops before the owner's nodes. */
async function answerHere(ctx: Context, snapshot: StateSnapshot, value: unknown, about: string): Promise<number> {
  const config = { configurable: { thread_id: ctx.thread } };
  const graph = answeringGraph(ctx, snapshot);
  await graph.invoke(new Command({ resume: value }), { ...config, interruptBefore: OWNER_NODES });
  const values = (await graph.getState(config)).values as { status: string; outcome?: { summary?: string } };
  if (ENDED.has(values.status)) {
    const summary = values.outcome?.summary ? ` — ${values.outcome.summary}` : "";
    ctx.io.out(`answered "${ctx.thread}" (${about}): ${values.status}${summary}`);
  } else {
    ctx.io.out(`answered "${ctx.thread}" (${about}); ${carryOn(ctx.thread)}`);
  }
  return 0;
}

export async function queueResume(ctx: Context): Promise<number> {
  const { answer } = ctx.options;
  if (answer !== undefined && ctx.options.value !== undefined)
    throw new CliError(
      "give the answer once: --answer JSON (or --value JSON, which only checks it over a SQLite file)",
    );
  const snapshot = await snapshotOf(ctx);
  const status = (snapshot.values as { status: string }).status;
  if (status === "stopped") return resumeStopped(ctx, snapshot);
  const question = pendingQuestion(snapshot);
  if (!question?.value)
    throw new CliError(
      `thread "${ctx.thread}" has no pending question (status: ${status}): there is nothing to answer`,
    );
  const { options } = question.value;
  const value = answer !== undefined ? parseValue(answer, options, "--answer") : parseValue(ctx.options.value, options);
  const problem = answerProblemFor(value, question.value, snapshot.values as PausedValues);
  const about = aboutQuestion(question.value);
  if (problem) throw new CliError(`thread "${ctx.thread}", ${about}: ${problem}`);
  if (!ctx.target.postgres && answer !== undefined) return answerHere(ctx, snapshot, value, about);
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

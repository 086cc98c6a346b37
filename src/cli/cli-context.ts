/** What every command of the command line works with. */
import type { StateSnapshot } from "@langchain/langgraph";
import type { InterruptPayload } from "../plan/schema/interrupts.js";
import { agentSnapshot } from "./agent-thread.js";
import { CliError, type readerGraph, type Target } from "./target.js";

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** Epoch ms (tests pass a fixed clock). */
  now(): number;
  sleep(ms: number): Promise<void>;
}

export interface Context {
  target: Target;
  graph: ReturnType<typeof readerGraph>;
  thread: string;
  options: Record<string, string | undefined>;
  io: CliIo;
}

/** The thread's snapshot, or a CliError naming the thread and how to list the others. */
export async function snapshotOf(ctx: Pick<Context, "graph" | "thread" | "target">): Promise<StateSnapshot> {
  const snapshot =
    (await agentSnapshot(ctx.target.saver, ctx.thread)) ??
    (await ctx.graph.getState({ configurable: { thread_id: ctx.thread } }));
  if (!snapshot.values || (snapshot.values as { status?: string }).status === undefined)
    throw new CliError(
      `no thread "${ctx.thread}" in ${ctx.target.label} (list them with: langgraph-replan threads ${ctx.target.label})`,
    );
  return snapshot;
}

export const pendingQuestion = (snapshot: StateSnapshot) =>
  snapshot.tasks.flatMap((t) => t.interrupts ?? [])[0] as { id?: string; value?: InterruptPayload } | undefined;

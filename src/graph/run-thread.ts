/**
 * The thread and checkpointer a run of the plan manager works on, and where on the thread it starts
 * (graph/compiled-plan-manager.ts).
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { originalSaver } from "../storage/index.js";
import { lentCheckpointer } from "./langgraph-seam.js";

/** A thread's root namespace, where its own checkpoints are. */
export const threadRoot = (thread: string) => ({ thread_id: thread, checkpoint_ns: "" });

/**
 * The checkpointer a run uses, as LangGraph resolves it from the graph's (`own`): none for
 * `false`, else one a parent lends, else the graph's own.
 */
export function runCheckpointer(own: unknown, configurable: Record<string, unknown>): object | undefined {
  if (own === false) return undefined;
  const lent = lentCheckpointer(configurable);
  if (lent) return lent;
  return typeof own === "object" ? (originalSaver(own) as object) : undefined;
}

/** Where a run or update starts on its thread. */
export interface RunBranch {
  thread: string;
  /** The thread's latest status. */
  status: unknown;
  /** The thread has a checkpoint. */
  started: boolean;
  /** The earlier checkpoint it starts from instead of the latest, if so. */
  fork?: string;
}

/** Where a run or update starts (`RunBranch`). Undefined without a thread or a saver to read. */
export async function branchOf(
  saver: Partial<Pick<BaseCheckpointSaver, "getTuple">> | undefined,
  configurable: Record<string, unknown>,
): Promise<RunBranch | undefined> {
  const thread = configurable.thread_id;
  if (typeof thread !== "string" || !saver?.getTuple) return undefined;
  // The status channel is stored whole in every checkpoint: reading it costs one checkpoint read,
  // where `getState` would replay every delta channel (56 ms on a 200-step thread, measured).
  const latest = await saver.getTuple({ configurable: threadRoot(thread) });
  const asked = configurable.checkpoint_id;
  const other = typeof asked === "string" && latest !== undefined && latest.checkpoint.id !== asked;
  // A checkpoint id the thread does not have is LangGraph's to answer, as before.
  const fork = other && (await saver.getTuple({ configurable: { ...threadRoot(thread), checkpoint_id: asked } }));
  const status = latest?.checkpoint.channel_values.status;
  return { thread, status, started: latest !== undefined, ...(fork ? { fork: asked as string } : {}) };
}

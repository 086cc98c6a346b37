/**
 * Where a run from an earlier checkpoint (time travel) starts. LangGraph snapshots, on such a fork,
 * every delta channel the checkpoint's saved task writes touch (docs/decisions/0011-checkpoint-storage-delta-channels.md);
 * one that has no value there yet (the checkpoint right after the input, before the planner wrote
 * the plan and the step records) fails the snapshot with an `EmptyChannelError` that has no message.
 * Plain channels are not snapshotted, which is why bare LangGraph forks from the same point.
 *
 * Such a fork starts from a copy of the checkpoint instead: LangGraph's own `__copy__` update
 * writes a sibling with the same values, marked `source: "fork"` and without the saved task writes,
 * so the run from it is the same run, the one LangGraph would have made, and nothing is snapshotted.
 */
import { DeltaChannel } from "@langchain/langgraph";

interface TupleReader {
  getTuple(config: { configurable: Record<string, unknown> }): Promise<
    | {
        checkpoint: { channel_versions: Record<string, unknown> };
        pendingWrites?: readonly (readonly [string, string, unknown])[];
      }
    | undefined
  >;
}

/** Whether a run from `checkpointId` must start from a copy of it (see above). */
export async function forkNeedsCopy(
  saver: TupleReader,
  channels: Record<string, unknown>,
  thread: string,
  checkpointId: string,
): Promise<boolean> {
  const tuple = await saver.getTuple({
    configurable: { thread_id: thread, checkpoint_ns: "", checkpoint_id: checkpointId },
  });
  if (!tuple) return false;
  const versions = tuple.checkpoint.channel_versions;
  return (tuple.pendingWrites ?? []).some(
    ([, channel]) => channels[channel] instanceof DeltaChannel && versions[channel] === undefined,
  );
}

/** The update that copies a checkpoint as LangGraph's time travel would fork it. */
export const COPY_CHECKPOINT = [{ updates: [{ values: undefined, asNode: "__copy__" }] }];

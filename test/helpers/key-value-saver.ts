/**
 * A checkpointer of another shape, standing in for a Redis or MongoDB one: it subclasses
 * LangGraph's `BaseCheckpointSaver` and keeps its checkpoints somewhere the plan manager cannot
 * see (here a `MemorySaver` under a field of its own name), with no `db`, no `pool` and none of
 * LangGraph's SQL savers' methods. The plan manager must run on it with what any saver gets.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { BaseCheckpointSaver, MemorySaver, type CheckpointTuple } from "@langchain/langgraph";

type Put = Parameters<MemorySaver["put"]>;
type PutWrites = Parameters<MemorySaver["putWrites"]>;

export class KeyValueSaver extends BaseCheckpointSaver {
  /** What a Redis client would be: the saver's own storage, opaque to everyone else. */
  private readonly buckets = new MemorySaver();
  /** Calls per method, to show what the plan manager asked of the saver. */
  readonly calls: Record<string, number> = {};

  private count(method: string) {
    this.calls[method] = (this.calls[method] ?? 0) + 1;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    this.count("getTuple");
    return this.buckets.getTuple(config);
  }

  async *list(config: RunnableConfig, options?: Parameters<MemorySaver["list"]>[1]): AsyncGenerator<CheckpointTuple> {
    this.count("list");
    yield* this.buckets.list(config, options);
  }

  async put(...args: Put): Promise<RunnableConfig> {
    this.count("put");
    return this.buckets.put(...args);
  }

  async putWrites(...args: PutWrites): Promise<void> {
    this.count("putWrites");
    return this.buckets.putWrites(...args);
  }

  async deleteThread(threadId: string): Promise<void> {
    this.count("deleteThread");
    return this.buckets.deleteThread(threadId);
  }
}

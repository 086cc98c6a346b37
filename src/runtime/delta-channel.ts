/**
 * The one place that uses LangGraph's `DeltaChannel` (beta in 1.7.3, decision record 0011).
 *
 * A delta channel is left out of every checkpoint's `channel_values`: the saver keeps only each
 * step's writes (which it stores anyway, for resume), and the value is rebuilt on load by
 * replaying the writes since the nearest stored snapshot (`getDeltaChannelHistory`: one query
 * on SqliteSaver and PostgresSaver through graph/saver-history.ts, LangGraph's walk on any other
 * saver). So a step costs what it wrote, not the size of the whole plan, step records and facts.
 *
 * Replay applies a whole run of writes in one reducer call, so reducers here take a batch and
 * must give the same value however the writes are batched. Every write is validated like a
 * `CheckedChannel` write (`invalid_update`, nothing written); replayed writes were checked when
 * they were first written. test/storage-seam.test.ts pins what this module relies on, so an
 * upgrade that changes the beta behaviour fails there first.
 */
import { DeltaChannel } from "@langchain/langgraph";
import type { z } from "zod";
import { WriteChecks } from "./checked-channel.js";

/** `reducer(state, [w1, w2]) === reducer(reducer(state, [w1]), [w2])`: replay may batch differently. */
export type BatchReducer<V, U> = (current: V, writes: U[]) => V;

/**
 * Updates between full snapshots of a channel. A snapshot bounds replay but costs the whole value,
 * so it is rare: a run's storage stays linear in its steps (0011 has the measurements).
 */
export const SNAPSHOT_EVERY = 5000;

export class CheckedDeltaChannel<V, U = V> extends DeltaChannel<V, U> {
  private checks: WriteChecks;

  constructor(
    readonly key: string,
    readonly schema: z.ZodType,
    reducer: BatchReducer<V, U>,
    initialValueFactory: () => V,
    snapshotFrequency = SNAPSHOT_EVERY,
  ) {
    super(reducer, { snapshotFrequency, initialValueFactory });
    this.checks = new WriteChecks(key, schema);
  }

  override fromCheckpoint(checkpoint?: unknown): this {
    const restored = super.fromCheckpoint(checkpoint as V | undefined);
    const channel = new CheckedDeltaChannel<V, U>(
      this.key,
      this.schema,
      this.reducer,
      this.initialValueFactory,
      this.snapshotFrequency,
    );
    channel.value = restored.value;
    channel.checks = this.checks.copy();
    return channel as this;
  }

  // Checked before the base applies anything, so a rejected batch leaves the value as it was.
  override update(values: Parameters<DeltaChannel<V, U>["update"]>[0]): boolean {
    this.checks.check(values);
    return super.update(values);
  }
}

/** Per-key merge: later writes win; `undefined` writes are no-ops. Never mutates `current`. */
export function mergeBatch<T>(current: Record<string, T>, writes: (Record<string, T> | undefined)[]) {
  const present = writes.filter((w): w is Record<string, T> => w !== undefined);
  return present.length === 0 ? current : Object.assign({}, current, ...present);
}

/** Append-only log: each write is one entry or a list of entries. */
export function appendBatch<T>(current: T[], writes: (T[] | T | undefined)[]): T[] {
  const present = writes.filter((w) => w !== undefined) as (T[] | T)[];
  return present.length === 0 ? current : current.concat(...present);
}

/** Last write wins (a replaced value such as the current plan). */
export function replaceBatch<T>(current: T, writes: T[]): T {
  return writes.length === 0 ? current : writes[writes.length - 1]!;
}

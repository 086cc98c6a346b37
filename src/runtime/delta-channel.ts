/**
 * The one place that uses LangGraph's `DeltaChannel` (beta in 1.7.3, decision record 0011).
 *
 * A delta channel is left out of every checkpoint's `channel_values`: the saver keeps only each
 * step's writes (which it stores anyway, for resume), and the value is rebuilt on load by
 * replaying the writes since the nearest stored snapshot (`getDeltaChannelHistory`: one query
 * on SqliteSaver and PostgresSaver through their saver adapters (src/storage/), LangGraph's walk on any other
 * saver). So a step costs what it wrote, not the size of the whole plan, step records and facts.
 *
 * Replay applies a whole run of writes in one reducer call, so reducers here take a batch and
 * must give the same value however the writes are batched. Every write is validated like a
 * `CheckedChannel` write (`invalid_update`, nothing written); replayed writes were checked when
 * they were first written. test/storage-seam.test.ts pins what this module relies on, so an
 * upgrade that changes the beta behaviour fails there first.
 */
import { beforeWriting } from "../plan/pinned.js";
import { DeltaChannel } from "@langchain/langgraph";
import type { z } from "zod";
import { EMPTY, WriteChecks } from "./checked-channel.js";

/** `reducer(state, [w1, w2]) === reducer(reducer(state, [w1]), [w2])`: replay may batch differently. */
export type BatchReducer<V, U> = (current: V, writes: U[]) => V;

/**
 * Updates between full snapshots of a channel. A snapshot bounds replay but costs the whole value,
 * so it is rare: a run's storage stays linear in its steps (0011 has the measurements).
 */
export const SNAPSHOT_EVERY = 5000;

/**
 * How a channel may apply writes to its value in place, for runs whose values nobody outside the
 * run sees step by step (docs/decisions/0030-long-runs-per-step-cost.md): `reducer` changes `current`
 * itself; `own` copies a value the channel did not build (an `Overwrite` hands it the writer's object).
 */
export interface InPlace<V, U> {
  reducer: BatchReducer<V, U>;
  own: (value: V) => V;
}

export class CheckedDeltaChannel<V, U = V> extends DeltaChannel<V, U> {
  private checks: WriteChecks;

  constructor(
    readonly key: string,
    readonly schema: z.ZodType,
    reducer: BatchReducer<V, U>,
    initialValueFactory: () => V,
    snapshotFrequency = SNAPSHOT_EVERY,
    readonly inPlace?: InPlace<V, U>,
    /** This instance applies writes in place (`inPlace.reducer`). */
    readonly mutating = false,
    /**
     * The part of a write that still needs checking, given the value it replaces (already checked
     * when it was written): a plan extended by ten steps checks those ten, not the thousands before.
     */
    readonly unchecked: (current: V | undefined, write: unknown) => unknown = (_, write) => write,
  ) {
    super(mutating && inPlace ? inPlace.reducer : reducer, { snapshotFrequency, initialValueFactory });
    this.copying = reducer;
    this.checks = new WriteChecks(key, schema);
  }

  override get(): V {
    if (this.value === undefined) throw EMPTY;
    return this.value;
  }

  /** The reducer that never changes the value it is given. */
  private readonly copying: BatchReducer<V, U>;

  /**
   * The same channel applying writes in place, or this one when it has no in-place reducer. Its
   * value is shared with the channels LangGraph restores from it (the fresh read behind a
   * conditional edge applies the node's writes to such a copy first, then to the live channel):
   * an in-place reducer must give the same value when the same writes are applied twice.
   */
  mutatingTwin(): CheckedDeltaChannel<V, U> {
    if (!this.inPlace || this.mutating) return this;
    const { key, schema, copying, initialValueFactory, snapshotFrequency, inPlace } = this;
    return new CheckedDeltaChannel<V, U>(
      key,
      schema,
      copying,
      initialValueFactory,
      snapshotFrequency,
      inPlace,
      true,
      this.unchecked,
    );
  }

  override fromCheckpoint(checkpoint?: unknown): this {
    const restored = super.fromCheckpoint(checkpoint as V | undefined);
    const channel = new CheckedDeltaChannel<V, U>(
      this.key,
      this.schema,
      this.copying,
      this.initialValueFactory,
      this.snapshotFrequency,
      this.inPlace,
      this.mutating,
      this.unchecked,
    );
    channel.value = restored.value;
    channel.checks = this.checks.copy();
    return channel as this;
  }

  // Checked before the base applies anything, so a rejected batch leaves the value as it was.
  override update(values: Parameters<DeltaChannel<V, U>["update"]>[0]): boolean {
    // LangGraph offers every available channel an empty update at each step: nothing to check.
    if (values.length === 0) return false;
    const unchecked = values.map((v) => this.unchecked(this.value, v));
    try {
      this.checks.check(unchecked);
    } catch (error) {
      // The whole write again, so the error names the field as the caller wrote it.
      const whole = values.map((v) => this.unchecked(undefined, v));
      if (unchecked.some((u, i) => u !== whole[i])) this.checks.check(whole);
      throw error;
    }
    const changed = super.update(values);
    // An Overwrite made the writer's object the value: in-place writes must not change it.
    if (this.mutating && changed && values.some((v) => isOverwrite(v))) this.value = this.inPlace!.own(this.value as V);
    return changed;
  }

  // Replay on load starts from a stored snapshot, or from an Overwrite's value: owned first.
  override replayWrites(writes: Parameters<DeltaChannel<V, U>["replayWrites"]>[0]): void {
    if (this.mutating && writes.some((w) => isOverwrite(w[2]))) {
      const reducer = this.reducer;
      this.reducer = this.copying;
      try {
        super.replayWrites(writes);
      } finally {
        this.reducer = reducer;
      }
      return;
    }
    super.replayWrites(writes);
  }
}

/** LangGraph's `Overwrite`, as the class or its wire form (the test LangGraph's channels apply). */
function isOverwrite(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  const record = value as Record<string, unknown>;
  return "__overwrite__" in record || (record.type === "__overwrite__" && "value" in record);
}

/** Per-key merge: later writes win; `undefined` writes are no-ops. Never mutates `current`. */
export function mergeBatch<T>(current: Record<string, T>, writes: (Record<string, T> | undefined)[]) {
  const present = writes.filter((w): w is Record<string, T> => w !== undefined);
  return present.length === 0 ? current : Object.assign({}, current, ...present);
}

/**
 * `mergeBatch` applied to `current` itself: a step costs the keys it wrote, not the whole map.
 * Writing the same batch twice gives the same map (later writes win, key by key).
 */
export function mergeInPlace<T>(current: Record<string, T>, writes: (Record<string, T> | undefined)[]) {
  for (const w of writes) {
    if (w === undefined) continue;
    beforeWriting(current, Object.keys(w));
    Object.assign(current, w);
  }
  return current;
}

/** Append-only log: each write is one entry or a list of entries. */
export function appendBatch<T>(current: T[], writes: (T[] | T | undefined)[]): T[] {
  const present = writes.filter((w) => w !== undefined) as (T[] | T)[];
  return present.length === 0 ? current : current.concat(...present);
}

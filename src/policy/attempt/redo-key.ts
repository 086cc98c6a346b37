/**
 * The key an operation commits under once an effect of it was undone
 * (docs/decisions/0039-compensation.md). Pure. A compensated effect no longer stands: a later
 * step that makes the same operation again must not reuse its output (the cancelled booking), nor
 * call under its key (a tool that dedupes by key would answer with the cancelled booking again). It
 * gets the operation's key with `:redo-N`, N counting the undos of that operation, so every branch
 * and every resume derives the same key from the same records.
 */
import type { CompensationRecord } from "../../plan/schema/run.js";

/** The keys whose effects were undone (`done`); a waived, pending or failed undo leaves the effect standing. */
export function undoneKeys(compensations: readonly CompensationRecord[] | undefined): Set<string> {
  return new Set((compensations ?? []).filter((c) => c.status === "done").map((c) => c.idempotencyKey));
}

/** `key` itself while no effect under it was undone; else the first `<key>:redo-N` not undone. */
export function liveKey(key: string, undone: ReadonlySet<string>): string {
  let live = key;
  for (let n = 1; undone.has(live); n++) live = `${key}:redo-${n}`;
  return live;
}

/**
 * Replan memory on LangGraph's store (docs/architecture.md "Replan memory"), read for one replan:
 * the entry under the replan's key and the broken assumption's template, each with its score.
 * What to make of them is decided in policy/replan/recall.ts; the failures it counts are written
 * by the replanner once the replan is decided (`writeMemory`). The port holds both on this
 * invocation's store (`memoryOn`). Without a store
 * (`compile({ store })`) or with mode `off`, nothing here runs.
 */
import type { BaseStore, LangGraphRunnableConfig } from "@langchain/langgraph";
import { templateEntry } from "../../policy/memory/memory.js";
import type { MemoryRead, MemoryWrite } from "../../policy/replan/recall.js";
import { capText } from "../../plan/json-safe.js";
import { emit } from "../../runtime/events.js";
import type { Runtime } from "../../runtime/options.js";
import { readEntry, readScored, scoreEntry } from "../../runtime/replan-memory.js";

/** An error as text for a decision or an event: capped, and never a second throw (a hostile `toString`). */
export function message(error: unknown): string {
  try {
    return capText(error instanceof Error ? String(error.message) : String(error));
  } catch {
    return "unprintable error";
  }
}

/** Replan memory on one store, for one replan: its entries read, the failures it counts written. */
export interface ReplanMemory {
  read(key: string, assumption: string | undefined, at: string): Promise<MemoryRead>;
  write(writes: readonly MemoryWrite[]): Promise<void>;
}

/** The run's replan memory on the store of this invocation, under its namespace. */
export function memoryOn(memory: Runtime["memory"], store: BaseStore, config: LangGraphRunnableConfig): ReplanMemory {
  return {
    read: (key, assumption, at) => readMemory(memory, store, key, assumption, at),
    write: (writes) => writeMemory(store, memory.namespace, writes, config),
  };
}

/** The entry under `key` and the template for `assumption` (from the options: nothing is written to use it). */
export async function readMemory(
  memory: Runtime["memory"],
  store: BaseStore,
  key: string,
  assumption: string | undefined,
  at: string,
): Promise<MemoryRead> {
  const { namespace } = memory;
  const template = memory.templates.find((t) => t.assumption === assumption);
  try {
    const learned = await readScored(store, namespace, await readEntry(store, namespace, key));
    return { found: [learned, await readScored(store, namespace, template && templateEntry(template, at))] };
  } catch (error) {
    return { error: message(error) };
  }
}

/**
 * The decided replan's failure counts. A write that fails loses one count, not the run: it is
 * reported as a `memory` event naming the entry, and the rest are still written.
 */
export async function writeMemory(
  store: BaseStore,
  namespace: string[],
  writes: readonly MemoryWrite[],
  config: LangGraphRunnableConfig,
): Promise<void> {
  for (const w of writes) {
    try {
      await scoreEntry(store, namespace, w.revision, w.outcome, w.success);
    } catch (error) {
      const reason = `the failure of revision ${w.revision} was not counted: ${message(error)}`;
      emit(config, { type: "memory", op: "error", key: w.key, reason });
    }
  }
}

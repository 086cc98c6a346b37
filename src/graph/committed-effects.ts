/**
 * A committed side effect never runs again on any branch of a thread's history
 * (docs/decisions/0006-idempotency-keys-name-the-operation.md). A run or an `updateState` that
 * starts from an earlier checkpoint than the thread's latest would otherwise forget what was
 * committed since and call the tool again: the effects committed on the latest checkpoint go
 * with it into the new branch, where the executor reuses them instead of calling again.
 */
import { Command, isCommand } from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";
import type { SideEffectRecord } from "../plan/schema/run.js";

interface StateReader {
  getState(config: { configurable: Record<string, unknown> }): Promise<{ values: unknown }>;
}

const effectsOf = (values: unknown): SideEffectRecord[] =>
  ((values as { sideEffects?: SideEffectRecord[] } | undefined)?.sideEffects ?? []).slice();

/** The effects the thread's latest checkpoint holds and `checkpointId` lacks (read only for such a fork). */
export async function missingEffects(
  graph: StateReader,
  threadId: string,
  checkpointId: string,
): Promise<SideEffectRecord[]> {
  const thread = { thread_id: threadId, checkpoint_ns: "" };
  const latest = effectsOf((await graph.getState({ configurable: thread })).values);
  if (latest.length === 0) return [];
  const here = effectsOf((await graph.getState({ configurable: { ...thread, checkpoint_id: checkpointId } })).values);
  const known = new Set(here.map((e) => e.idempotencyKey));
  return latest.filter((e) => !known.has(e.idempotencyKey));
}

/**
 * The run's input with the missing effects written first: `null` becomes a `Command` whose update
 * writes them (LangGraph applies it, then carries on from the checkpoint); a `Command` gets them
 * added to its update. A new goal cannot carry them, so it is refused.
 */
export function carryEffects(input: unknown, missing: readonly SideEffectRecord[], thread: string): unknown {
  if (missing.length === 0) return input;
  if (input === null || input === undefined) return new Command({ update: { sideEffects: missing } });
  if (!isCommand(input)) {
    throw new PlanManagerError(
      "invalid_input",
      `thread "${thread}": a new goal from an earlier checkpoint would forget ${missing.length} side effect(s) ` +
        "committed since; carry on from it with invoke(null), or start a new run on a new thread_id",
      { path: "goal" },
    );
  }
  const update: unknown = input.update;
  const pairs: [string, unknown][] = Array.isArray(update)
    ? [...(update as [string, unknown][])]
    : Object.entries((update ?? {}) as Record<string, unknown>);
  const { resume, goto, graph } = input;
  return new Command({
    ...(resume !== undefined ? { resume } : {}),
    ...(goto !== undefined ? { goto } : {}),
    ...(graph !== undefined ? { graph } : {}),
    update: [...pairs, ["sideEffects", missing]],
  });
}

/** An `updateState` value with the missing effects added (values an outside caller may write are objects or null). */
export function withEffects(values: unknown, missing: readonly SideEffectRecord[]): unknown {
  if (missing.length === 0) return values;
  if (values === null || values === undefined) return { sideEffects: missing };
  return typeof values === "object" && !Array.isArray(values) ? { ...values, sideEffects: missing } : values;
}

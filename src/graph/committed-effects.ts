/**
 * A committed side effect never runs again on any branch of a thread's history
 * (docs/decisions/0006-idempotency-keys-name-the-operation.md). A run or an `updateState` that
 * starts from an earlier checkpoint than the thread's latest would otherwise forget what was
 * committed since and call the tool again: the effects committed on the latest checkpoint go
 * with it into the new branch, where the executor reuses them instead of calling again. So do the
 * undos done since (docs/decisions/0039-compensation.md): an effect undone on any branch no longer
 * stands, so the branch neither reuses it nor undoes it again, and its operation made again gets a
 * fresh key.
 */
import { Command, isCommand } from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";
import type { CompensationRecord, SideEffectRecord } from "../plan/schema/run.js";

interface StateReader {
  getState(config: { configurable: Record<string, unknown> }): Promise<{ values: unknown }>;
}

const effectsOf = (values: unknown): SideEffectRecord[] =>
  ((values as { sideEffects?: SideEffectRecord[] } | undefined)?.sideEffects ?? []).slice();
const compensationsOf = (values: unknown): CompensationRecord[] =>
  ((values as { compensations?: CompensationRecord[] } | undefined)?.compensations ?? []).slice();

/**
 * What a branch lacks: the effects committed since, and, when undos were done since, the branch's
 * compensations with those added (the channel holds the whole list).
 */
export interface Missing {
  sideEffects: SideEffectRecord[];
  compensations?: CompensationRecord[];
}

/** Whether a branch lacks nothing. */
export function nothingMissing(m: Missing): boolean {
  return m.sideEffects.length === 0 && m.compensations === undefined;
}

/** The effects and done undos the thread's latest checkpoint holds and `checkpointId` lacks (read only for such a fork). */
export async function missingEffects(graph: StateReader, threadId: string, checkpointId: string): Promise<Missing> {
  const thread = { thread_id: threadId, checkpoint_ns: "" };
  const latestValues = (await graph.getState({ configurable: thread })).values;
  const latest = effectsOf(latestValues);
  if (latest.length === 0) return { sideEffects: [] };
  const hereValues = (await graph.getState({ configurable: { ...thread, checkpoint_id: checkpointId } })).values;
  const known = new Set(effectsOf(hereValues).map((e) => e.idempotencyKey));
  const sideEffects = latest.filter((e) => !known.has(e.idempotencyKey));
  const here = compensationsOf(hereValues);
  const recorded = new Set(here.map((c) => c.compensationKey));
  const undone = compensationsOf(latestValues).filter((c) => c.status === "done" && !recorded.has(c.compensationKey));
  return undone.length === 0 ? { sideEffects } : { sideEffects, compensations: [...undone, ...here] };
}

/** The channel writes of what is missing. */
function writes(missing: Missing): [string, unknown][] {
  const out: [string, unknown][] = [];
  if (missing.sideEffects.length > 0) out.push(["sideEffects", missing.sideEffects]);
  if (missing.compensations) out.push(["compensations", missing.compensations]);
  return out;
}

/**
 * The run's input with the missing effects written first: `null` becomes a `Command` whose update
 * writes them (LangGraph applies it, then carries on from the checkpoint); a `Command` gets them
 * added to its update. A new goal cannot carry them, so it is refused.
 */
export function carryEffects(input: unknown, missing: Missing, thread: string): unknown {
  if (nothingMissing(missing)) return input;
  if (input === null || input === undefined) return new Command({ update: Object.fromEntries(writes(missing)) });
  if (!isCommand(input)) {
    // A new goal starts over; only committed effects make it lose something.
    if (missing.sideEffects.length === 0) return input;
    throw new PlanManagerError(
      "invalid_input",
      `thread "${thread}": a new goal from an earlier checkpoint would forget ${missing.sideEffects.length} side effect(s) ` +
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
    update: [...pairs, ...writes(missing)],
  });
}

/** An `updateState` value with the missing effects added (values an outside caller may write are objects or null). */
export function withEffects(values: unknown, missing: Missing): unknown {
  if (nothingMissing(missing)) return values;
  const carried = Object.fromEntries(writes(missing));
  if (values === null || values === undefined) return carried;
  return typeof values === "object" && !Array.isArray(values) ? { ...values, ...carried } : values;
}

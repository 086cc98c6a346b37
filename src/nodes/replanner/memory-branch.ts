/**
 * When a replan's replacement branch settles, replan memory learns it — at that moment, not at
 * the end of the run, so other threads can reuse it while this one carries on. Settling is read
 * off a node's update (the executor's step records, the classifier's decisions): a planner's
 * branch that completed is saved under its key; a branch taken from memory scores its entry.
 * Store errors never fail the run: they are reported as `memory` events.
 */
import type { BaseStore, LangGraphRunnableConfig } from "@langchain/langgraph";
import { entryFromBranch } from "../../policy/memory/entry.js";
import { branchOutcome, shouldSave } from "../../policy/memory/memory.js";
import type { ReplanRecord } from "../../plan/schema/decision.js";
import type { Fact, SideEffectRecord, StepRun } from "../../plan/schema/run.js";
import type { Decision } from "../../policy/ladder/decision.js";
import { emit } from "../../runtime/events.js";
import { message } from "./memory-read.js";
import type { Runtime } from "../../runtime/options.js";
import { outcomeId, readEntry, readScored, scoreEntry } from "../../runtime/replan-memory.js";
import type { PlanManagerStateType, PlanManagerUpdate } from "../../runtime/state.js";

type Node = (state: PlanManagerStateType, config: LangGraphRunnableConfig) => Promise<PlanManagerUpdate>;
/** What the executor and the classifier write: plain values (they never overwrite a channel). */
interface Written {
  steps?: Record<string, StepRun>;
  facts?: Record<string, Fact>;
  decisions?: Decision | Decision[];
  sideEffects?: SideEffectRecord | SideEffectRecord[];
}

/** The node, followed by memory bookkeeping for the branches its update settles. */
export function settlingBranches(rt: Runtime, node: Node): Node {
  if (rt.memory.mode === "off") return node;
  return async (state, config) => {
    const update = await node(state, config);
    if (config.store && state.replans.some((r) => r.memoryKey !== undefined))
      await settle(rt, state, update as Written, config, config.store);
    return update;
  };
}

async function settle(
  rt: Runtime,
  state: PlanManagerStateType,
  update: Written,
  config: LangGraphRunnableConfig,
  store: BaseStore,
) {
  if (!update || typeof update !== "object") return;
  const after = { ...state.steps, ...(update.steps ?? {}) };
  const decisions = update.decisions === undefined ? [] : [update.decisions].flat();
  for (const record of state.replans) {
    const outcome = branchOutcome(record, state.steps, after, decisions);
    if (!outcome) continue;
    const key = record.memoryKey!;
    try {
      if (record.source === "memory") {
        // A record without a revision (written before revisions) cannot say which answer it used: not scored.
        if (record.memoryRevision === undefined) continue;
        const id = outcomeId(config.configurable, record.toVersion);
        await scoreEntry(store, rt.memory.namespace, record.memoryRevision, id, outcome === "succeeded");
        emit(config, { type: "memory", op: "scored", key, reason: outcome });
      } else if (outcome === "succeeded") await save(rt, state, update, config, store, record);
    } catch (error) {
      emit(config, {
        type: "memory",
        op: "error",
        key,
        reason: message(error),
      });
    }
  }
}

async function save(
  rt: Runtime,
  state: PlanManagerStateType,
  update: Written,
  config: LangGraphRunnableConfig,
  store: BaseStore,
  record: ReplanRecord,
) {
  const key = record.memoryKey!;
  const plan = state.plan;
  const ids = new Set(record.memorySteps);
  const steps = (plan?.steps ?? []).filter((s) => ids.has(s.id));
  if (!plan || steps.length !== ids.size || record.brokenAssumption === undefined)
    return emit(config, { type: "memory", op: "not_saved", key, reason: "the branch is no longer in the plan" });
  const existing = await readScored(store, rt.memory.namespace, await readEntry(store, rt.memory.namespace, key));
  if (!shouldSave(existing)) return;
  const facts: Record<string, unknown> = { ...state.context };
  for (const [k, f] of Object.entries({ ...state.facts, ...(update.facts ?? {}) })) facts[k] = f.value;
  const effects = [...state.sideEffects, ...(update.sideEffects === undefined ? [] : [update.sideEffects].flat())];
  const made = entryFromBranch({
    key,
    assumption: record.brokenAssumption,
    steps,
    planAssumptions: plan.assumptions,
    facts,
    secrets: effects.map((e) => e.idempotencyKey),
    ...(record.memoryKept ? { kept: record.memoryKept } : {}),
    at: new Date(rt.clock.now()).toISOString(),
    ...(existing ? { replaces: existing.revision } : {}),
  });
  if ("refused" in made) return emit(config, { type: "memory", op: "not_saved", key, reason: made.refused });
  await store.put(rt.memory.namespace, key, made.entry);
  emit(config, { type: "memory", op: "saved", key });
}

/**
 * Compact extension records (docs/decisions/0050-compact-extension-records.md). A rolling run extends its plan
 * hundreds of times; an extension's record lists what it added — its new steps, how many it kept,
 * and the facts new or relabelled since the run's previous record — so the record does not grow
 * with the run. `replanRecords` reads every record back in the full shape (kept steps, every
 * fact by label), whichever shape it was written in.
 */
import type { ReplanRecord } from "./schema/decision.js";
import type { Fact, FactLabel } from "./schema/run.js";
import { ordersBefore, type PlanVersionEntry } from "./history.js";
import type { Plan } from "./schema/plan.js";
import { factsWrittenSince, watchFactWrites } from "./facts.js";

type Labels = Map<string, FactLabel>;
type FactLists = ReplanRecord["facts"];

/** A record in the full shape: the steps kept, and every fact of the run by its label then. */
export type FullReplanRecord = Omit<ReplanRecord, "preservedSteps" | "keptCount"> & { preservedSteps: string[] };

/** Whether a record is a compact extension record (the rest list every kept step and fact). */
export const isCompact = (r: ReplanRecord): boolean => r.kind === "extend" && r.keptCount !== undefined;

/** The labels every fact had at each record, folded forwards: a full record states them, a compact one changes them. */
function foldLabels(labels: Labels, record: ReplanRecord): Labels {
  const next: Labels = isCompact(record) ? labels : new Map();
  for (const label of ["trusted", "suspect", "invalidated"] as const)
    for (const key of record.facts[label]) {
      // A relabelled fact moves to the end of the map; reads order by the run's facts, not by the map.
      next.delete(key);
      next.set(key, label);
    }
  return next;
}

/**
 * Labels as of the newest record, remembered by that record: the next extension's record reads
 * them, then they move to it. A record seen for the first time (a thread loaded from a checkpoint,
 * a replan's record) folds the records from the newest full one.
 */
const labelsAt = new WeakMap<ReplanRecord, Labels>();

function labelsAfter(replans: readonly ReplanRecord[]): Labels {
  const last = replans.at(-1);
  if (last === undefined) return new Map();
  const known = labelsAt.get(last);
  if (known !== undefined) return known;
  // A full record states every label: the fold starts at the newest one.
  let start = replans.length - 1;
  while (start > 0 && isCompact(replans[start]!)) start -= 1;
  let labels: Labels = new Map();
  for (let i = start; i < replans.length; i++) labels = foldLabels(labels, replans[i]!);
  return labels;
}

/**
 * The `facts` of an extension's compact record: the facts new or relabelled since the previous
 * record. One look at each fact's label, no lists of them; call `rememberLabels` with the record
 * once it is made.
 */
export function changedFacts(
  facts: Readonly<Record<string, Fact>>,
  replans: readonly ReplanRecord[],
): { lists: FactLists; labels: Labels } {
  const last = replans.at(-1);
  // The labels of the record before, remembered in this process: then only the facts written in place
  // since they were taken can differ from them (plan/facts.ts `watchFactWrites`). Otherwise every fact.
  const written = last !== undefined && labelsAt.has(last) ? factsWrittenSince(facts) : undefined;
  const labels = labelsAfter(replans);
  if (last !== undefined) labelsAt.delete(last);
  const lists: FactLists = { trusted: [], suspect: [], invalidated: [] };
  const look = (key: string) => {
    const label = facts[key]?.label;
    if (label === undefined || labels.get(key) === label) return;
    lists[label].push(key);
    labels.set(key, label);
  };
  if (written) for (const key of written) look(key);
  else for (const key in facts) look(key);
  watchFactWrites(facts);
  // By key, so that the record is the same whichever way its keys were found (the written keys come
  // in write order, a look at every fact in the run's order).
  for (const list of Object.values(lists)) list.sort();
  return { lists, labels };
}

/** The labels as of `record`, for the next extension's record. */
export function rememberLabels(record: ReplanRecord, labels: Labels): void {
  labelsAt.set(record, labels);
}

type RecordState = {
  replans: readonly ReplanRecord[];
  facts: Readonly<Record<string, Fact>>;
  plan?: Plan | undefined;
  planHistory: readonly PlanVersionEntry[];
};

/**
 * Every record of the run in the full shape, as every version before compact extension records
 * wrote them: an extension's kept steps rebuilt from the history, its facts from the records
 * before it, listed in the order the run first had them.
 */
export function replanRecords(state: RecordState): FullReplanRecord[] {
  if (!state.replans.some(isCompact)) return state.replans as FullReplanRecord[];
  const position = new Map(Object.keys(state.facts).map((key, i) => [key, i]));
  const at = (key: string) => position.get(key) ?? Number.MAX_SAFE_INTEGER;
  const orders = ordersBefore(state);
  const kept = new Map([...orders].map(([entry, order]) => [entry.version, order]));
  let labels: Labels = new Map();
  return state.replans.map((r) => {
    labels = foldLabels(labels, r);
    if (!isCompact(r)) return r as FullReplanRecord;
    const lists: FactLists = { trusted: [], suspect: [], invalidated: [] };
    for (const [key, label] of labels) lists[label].push(key);
    for (const list of Object.values(lists)) list.sort((a, b) => at(a) - at(b));
    const { keptCount, kind: _kind, ...rest } = r;
    const preservedSteps = [...(kept.get(r.toVersion) ?? [])].slice(0, keptCount);
    return { ...rest, preservedSteps, facts: lists };
  });
}

/**
 * Replan memory on LangGraph's store (docs/architecture.md "Replan memory"), the phase before asking the planner: look
 * the replan's key up (and the broken assumption's template), then reuse the entry as the draft,
 * hand it to the planner as a hint, or pass it over — each visible as a `replan.memory`
 * decision. A reused draft goes on through the same validation and guards as a planner's.
 * Without a store (`compile({ store })`) or with mode `off`, nothing here runs.
 */
import type { BaseStore } from "@langchain/langgraph";
import { formatIssues } from "../../plan/validate.js";
import type { PlanDraft } from "../../plan/schema.js";
import { noProgressGuard, type GuardHit } from "../../policy/replan-guards.js";
import {
  chooseEntry,
  memoryDecision,
  memoryKey,
  templateEntry,
  withUniqueIds,
  type ScoredEntry,
} from "../../policy/replan-memory.js";
import { fingerprint } from "../../policy/scope.js";
import type { ReplanHint } from "../../contracts/planner.js";
import type { Decision } from "../../policy/decision.js";
import type { Runtime } from "../../runtime/options.js";
import { outcomeId, readEntry, readScored, scoreEntry } from "../../runtime/replan-memory.js";
import { validateReplanDraft, type Replan } from "./context.js";

/** The assumption's template, from the options: nothing is written to use it. */
function templateFor(rt: Runtime, assumption: string, at: string) {
  const template = rt.memory.templates.find((t) => t.assumption === assumption);
  return template ? templateEntry(template, at) : undefined;
}

/** What replan memory made of this replan: where the draft comes from, hints for the planner, its decisions. */
export interface Recall {
  /** The key, where the draft came from, which revision; a reused entry's score and the decision that said so. */
  memory?: { key: string; source: "planner" | "memory"; revision?: string; score?: string; note?: Decision };
  /** A learned entry (another thread's answer) was reused or shown: its values are untrusted here. */
  learned?: boolean;
  hints?: ReplanHint[];
  /** Decisions this replan adds before its outcome (rule `replan.memory`). */
  notes: Decision[];
  /** A remembered draft (reuse). */
  draft?: PlanDraft;
}

/** `recall` with one more `replan.memory` decision. */
function noted(r: Replan, recall: Recall, reason: string): Recall {
  const at = r.state.decisions.length + recall.notes.length;
  return { ...recall, notes: [...recall.notes, memoryDecision(r.trigger, reason, at, r.at())] };
}

/** The phase before the planner: a draft from memory (reuse), or none (the planner is asked, perhaps with hints). */
export async function recallReplan(r: Replan): Promise<Recall> {
  const store = r.config.store;
  const byPerson = r.trigger.by === "person" || r.trigger.rule.startsWith("human.");
  if (r.rt.memory.mode === "off" || !store || r.assumption === undefined || byPerson) return { notes: [] };
  const recall: Recall = { memory: { key: memoryKey(r.assumption, r.affected), source: "planner" }, notes: [] };
  let choice;
  try {
    const { namespace } = r.rt.memory;
    const learned = await readScored(store, namespace, await readEntry(store, namespace, recall.memory!.key));
    const found = [learned, await readScored(store, namespace, templateFor(r.rt, r.assumption, r.at()))];
    choice = chooseEntry(r.rt.memory.mode, found, r.rt.toolNames);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return noted(r, recall, `replan memory unavailable (${why}); planner asked`);
  }
  if (!choice) return recall;
  if ("skipped" in choice) return noted(r, recall, `${choice.skipped}; planner asked`);
  const entry = choice.use;
  const score = `${entry.successes} of ${entry.uses} uses succeeded`;
  if (choice.mode === "hint") {
    const hints = [{ key: entry.key, steps: entry.steps, uses: entry.uses, successes: entry.successes }];
    const shown = { ...recall, hints, learned: entry.origin === "learned" };
    return noted(r, shown, `entry ${entry.key} (${score}) passed to the planner as a hint`);
  }
  return reuse(r, recall, store, entry, score);
}

async function reuse(r: Replan, recall: Recall, store: BaseStore, entry: ScoredEntry, score: string) {
  // A step the fix kept takes the id of the affected step at its position, which the replan replaces.
  const preferred = new Map<string, string>();
  for (const [id, at] of Object.entries(entry.kept ?? {})) {
    const own = r.affectedIds[at];
    if (own !== undefined && entry.steps.some((s) => s.id === id)) preferred.set(id, own);
  }
  const mine = new Set(preferred.values());
  const ids = [...r.plan.steps.map((s) => s.id), ...Object.keys(r.state.steps)].filter((id) => !mine.has(id));
  const declared = new Set(r.plan.assumptions.map((a) => a.id));
  const draft: PlanDraft = { steps: withUniqueIds(entry.steps, new Set(ids), preferred) };
  const assumptions = (entry.assumptions ?? []).filter((a) => !declared.has(a.id));
  if (assumptions.length > 0) draft.assumptions = assumptions;
  const validation = validateReplanDraft(r, draft);
  if (!validation.ok) {
    const id = `${outcomeId(r.config.configurable, r.plan.version)}:invalid`;
    await scoreEntry(store, r.rt.memory.namespace, entry.revision, id, false).catch(() => undefined);
    const issues = formatIssues(validation.issues);
    return noted(
      r,
      recall,
      `entry ${entry.key} failed validation (${issues}); discarded, counted as a failure; planner asked`,
    );
  }
  // The same steps that just failed, or an answer already tried in this run: no progress, so the planner answers.
  const print = fingerprint(validation.draft.steps, r.assumption);
  if (noProgressGuard(print, fingerprint(r.affected, r.assumption), r.guards.fingerprints, r.assumption, false))
    return noted(r, recall, `entry ${entry.key} proposes steps already tried in this run; planner asked`);
  const withNote = noted(r, recall, `reused entry ${entry.key} (${score}): planner not called`);
  const note = withNote.notes[withNote.notes.length - 1]!;
  return {
    ...withNote,
    draft,
    learned: entry.origin === "learned",
    memory: { key: entry.key, source: "memory" as const, revision: entry.revision, score, note },
  };
}

/**
 * A reused draft that a later guard stopped (backtracking bound, …): discarded and counted as a
 * failure of its entry, like one that fails validation; the replan goes back to the planner, filed
 * under its own key. The reuse decision is rewritten, so the record does not say "planner not called".
 */
export async function rejectRecalled(r: Replan, recall: Recall, hit: GuardHit): Promise<Recall> {
  const store = r.config.store;
  const used = recall.memory;
  if (!store || used?.source !== "memory" || used.revision === undefined || r.assumption === undefined) return recall;
  const id = `${outcomeId(r.config.configurable, r.plan.version)}:rejected`;
  await scoreEntry(store, r.rt.memory.namespace, used.revision, id, false).catch(() => undefined);
  const reason =
    `entry ${used.key} (${used.score}) stopped by ${hit.rule} (${hit.reason.split("\n").join(" ")}); ` +
    "discarded, counted as a failure; planner asked";
  const memory = { key: memoryKey(r.assumption, r.affected), source: "planner" as const };
  const { draft: _discarded, ...rest } = recall;
  if (!used.note) return { ...noted(r, rest, reason), memory };
  const notes = recall.notes.map((n) => (n === used.note ? { ...n, reason } : n));
  return { ...rest, notes, memory };
}

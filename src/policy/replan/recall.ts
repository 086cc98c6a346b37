/**
 * What replan memory makes of one replan (docs/architecture.md "Replan memory"), from what was
 * read from the store: reuse an entry as the draft, hand it to the planner as a hint, or pass it
 * over — each visible as a `replan.memory` decision. A reused draft goes on through the same
 * checks as a planner's. An entry that fails them is counted as a failure: that count is a write
 * this returns, made by the replanner once the replan is decided. Pure: nothing here reads a
 * store or a clock.
 */
import { formatIssues } from "../../plan/validate.js";
import type { PlanDraft } from "../../plan/schema/plan.js";
import type { Step } from "../../plan/schema/step.js";
import type { Decision } from "../ladder/decision.js";
import { noProgressGuard, type GuardHit } from "../ladder/guards.js";
import { affectedSteps, byPerson, validateReplanDraft, type DraftRules, type ReplanFrame } from "./draft.js";
import { chooseEntry, memoryDecision, memoryKey, withUniqueIds, type ScoredEntry } from "../memory/memory.js";
import type { ReplanMemoryMode } from "../options.js";
import { fingerprint } from "./scope.js";

/** What the store held for this replan's key and its assumption's template, or why it could not be read. */
export type MemoryRead = { found: readonly (ScoredEntry | undefined)[] } | { error: string };

/** One failed use of an entry's revision, counted once the replan is decided (runtime/replan-memory.ts). */
export interface MemoryWrite {
  /** The entry's key: what a failed write is reported under. */
  key: string;
  revision: string;
  /** The outcome id: the same replan counts once, however often it is written. */
  outcome: string;
  success: false;
}

/** An entry shown to the planner (the planner contract's `ReplanHint`). */
export interface MemoryHint {
  key: string;
  steps: Step[];
  uses: number;
  successes: number;
}

/** What replan memory made of this replan: where the draft comes from, hints for the planner, its decisions. */
export interface Recall {
  /** The key, where the draft came from, which revision; a reused entry's score and the decision that said so. */
  memory?: { key: string; source: "planner" | "memory"; revision?: string; score?: string; note?: Decision };
  /** A learned entry (another thread's answer) was reused or shown: its values are untrusted here. */
  learned?: boolean;
  hints?: MemoryHint[];
  /** Decisions this replan adds before its outcome (rule `replan.memory`). */
  notes: Decision[];
  /** A remembered draft (reuse). */
  draft?: PlanDraft;
  /** Failure counts to write once the replan is decided. */
  writes: MemoryWrite[];
}

/**
 * The key replan memory is consulted under, or none: memory off or without a store, a trigger
 * with no broken assumption, or one a person caused (their answer is theirs, not a pattern).
 */
export function recallKey(
  f: Pick<ReplanFrame, "assumption" | "trigger" | "plan" | "affectedIds">,
  mode: ReplanMemoryMode,
): string | undefined {
  if (mode === "off" || f.assumption === undefined || byPerson(f.trigger)) return undefined;
  return memoryKey(f.assumption, affectedSteps(f));
}

/** `recall` with one more `replan.memory` decision. */
function noted(f: Pick<ReplanFrame, "trigger" | "decisions" | "at">, recall: Recall, reason: string): Recall {
  const at = f.decisions.length + recall.notes.length;
  return { ...recall, notes: [...recall.notes, memoryDecision(f.trigger, reason, at, f.at)] };
}

/**
 * What memory offers, from what was read under `key`. `outcomeId` names this replan's outcome,
 * under which a discarded entry's failure is counted.
 */
export function recallFrom(
  rules: DraftRules,
  f: ReplanFrame,
  mode: ReplanMemoryMode,
  key: string,
  read: MemoryRead,
  outcomeId: string,
): Recall {
  const recall: Recall = { memory: { key, source: "planner" }, notes: [], writes: [] };
  if ("error" in read) return noted(f, recall, `replan memory unavailable (${read.error}); planner asked`);
  const choice = chooseEntry(mode, read.found, rules.tools);
  if (!choice) return recall;
  if ("skipped" in choice) return noted(f, recall, `${choice.skipped}; planner asked`);
  const entry = choice.use;
  const score = `${entry.successes} of ${entry.uses} uses succeeded`;
  if (choice.mode === "hint") {
    const hints = [{ key: entry.key, steps: entry.steps, uses: entry.uses, successes: entry.successes }];
    const shown = { ...recall, hints, learned: entry.origin === "learned" };
    return noted(f, shown, `entry ${entry.key} (${score}) passed to the planner as a hint`);
  }
  return reuse(rules, f, recall, entry, score, outcomeId);
}

function reuse(
  rules: DraftRules,
  f: ReplanFrame,
  recall: Recall,
  entry: ScoredEntry,
  score: string,
  outcomeId: string,
): Recall {
  // A step the fix kept takes the id of the affected step at its position, which the replan replaces.
  const preferred = new Map<string, string>();
  for (const [id, at] of Object.entries(entry.kept ?? {})) {
    const own = f.affectedIds[at];
    if (own !== undefined && entry.steps.some((s) => s.id === id)) preferred.set(id, own);
  }
  const mine = new Set(preferred.values());
  const ids = [...f.plan.steps.map((s) => s.id), ...Object.keys(f.steps)].filter((id) => !mine.has(id));
  const declared = new Set(f.plan.assumptions.map((a) => a.id));
  const draft: PlanDraft = { steps: withUniqueIds(entry.steps, new Set(ids), preferred) };
  const assumptions = (entry.assumptions ?? []).filter((a) => !declared.has(a.id));
  if (assumptions.length > 0) draft.assumptions = assumptions;
  const validation = validateReplanDraft(rules, f, draft);
  if (!validation.ok) {
    const write = failure(entry.key, entry.revision, `${outcomeId}:invalid`);
    const issues = formatIssues(validation.issues);
    const reason = `entry ${entry.key} failed validation (${issues}); discarded, counted as a failure; planner asked`;
    return noted(f, { ...recall, writes: [...recall.writes, write] }, reason);
  }
  // The same steps that just failed, or an answer already tried in this run: no progress, so the planner answers.
  const print = fingerprint(validation.draft.steps, f.assumption);
  if (noProgressGuard(print, fingerprint(affectedSteps(f), f.assumption), f.guards.fingerprints, f.assumption, false))
    return noted(f, recall, `entry ${entry.key} proposes steps already tried in this run; planner asked`);
  const withNote = noted(f, recall, `reused entry ${entry.key} (${score}): planner not called`);
  const note = withNote.notes[withNote.notes.length - 1]!;
  return {
    ...withNote,
    draft,
    learned: entry.origin === "learned",
    memory: { key: entry.key, source: "memory" as const, revision: entry.revision, score, note },
  };
}

const failure = (key: string, revision: string, outcome: string): MemoryWrite => ({
  key,
  revision,
  outcome,
  success: false,
});

/**
 * A reused draft that a later guard stopped (backtracking bound, …): discarded and counted as a
 * failure of its entry, like one that fails validation; the replan goes back to the planner, filed
 * under its own key. The reuse decision is rewritten, so the record does not say "planner not called".
 */
export function rejectRecalled(
  f: Pick<ReplanFrame, "assumption" | "trigger" | "plan" | "affectedIds" | "decisions" | "at">,
  recall: Recall,
  hit: GuardHit,
  outcomeId: string,
): Recall {
  const used = recall.memory;
  if (used?.source !== "memory" || used.revision === undefined || f.assumption === undefined) return recall;
  const writes = [...recall.writes, failure(used.key, used.revision, `${outcomeId}:rejected`)];
  const reason =
    `entry ${used.key} (${used.score}) stopped by ${hit.rule} (${hit.reason.split("\n").join(" ")}); ` +
    "discarded, counted as a failure; planner asked";
  const memory = { key: memoryKey(f.assumption, affectedSteps(f)), source: "planner" as const };
  const { draft: _discarded, ...rest } = recall;
  if (!used.note) return { ...noted(f, { ...rest, writes }, reason), memory };
  const notes = recall.notes.map((n) => (n === used.note ? { ...n, reason } : n));
  return { ...rest, notes, writes, memory };
}

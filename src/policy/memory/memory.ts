/**
 * Replan memory (docs/architecture.md "Replan memory"), the pure part: the key a replan is filed under, the entry saved
 * for it, its score and retirement, the choice between reusing, hinting or asking the planner,
 * and the renaming that makes a saved branch fit another thread's plan. Store access lives in
 * runtime/replan-memory.ts; nothing here reads a clock or a store.
 */
import { executorOf } from "../../plan/executor-of.js";
import { createHash } from "node:crypto";
import { z } from "zod";
import { canonical } from "../../plan/diff.js";
import { type ReplanRecord } from "../../plan/schema/decision.js";
import { AssumptionSchema } from "../../plan/schema/plan.js";
import { LIMITS } from "../../plan/schema/primitives.js";
import { type StepRun } from "../../plan/schema/run.js";
import { StepSchema, type Step } from "../../plan/schema/step.js";
import type { Decision } from "../ladder/decision.js";
import { decide } from "../ladder/decide.js";
import type { ReplanMemoryMode, ReplanTemplate } from "../options.js";

/** An entry is no longer reused once it has this many settled uses and a success rate below `MEMORY_MIN_RATE`. */
export const MEMORY_MIN_USES = 3;
export const MEMORY_MIN_RATE = 0.5;

const sha = (text: string, hex: number) => createHash("sha256").update(text).digest("hex").slice(0, hex);

/**
 * An entry holds the steps, never counts: each settled use is its own store item (see
 * `outcomesNamespace`), so concurrent threads and processes add outcomes without a
 * read-modify-write, and a new revision of the entry starts from none.
 */
export const MemoryEntrySchema = z.object({
  key: z.string().min(1),
  assumption: z.string().min(1),
  /** `learned`: saved when a thread's replacement branch completed; `template`: given up front. */
  origin: z.enum(["learned", "template"]),
  /** Which answer this is: outcomes are filed under it, so a late outcome never scores a replacement. */
  revision: z.string().regex(/^[0-9a-f]{16}$/),
  steps: z.array(StepSchema).min(1).max(LIMITS.maxSteps),
  /** Assumptions the steps rest on that the replan introduced (definitions travel with the steps). */
  assumptions: z.array(AssumptionSchema).max(LIMITS.maxAssumptions).optional(),
  /**
   * Steps the fix handed back under the id of a step it replaced, with that step's position among the
   * affected steps: a reusing thread gives them its own id for that position (the key fixes the shape).
   */
  kept: z.record(z.string(), z.number().int().min(0).max(LIMITS.maxSteps)).optional(),
  savedAt: z.string(),
});
/** A replan memory entry: the steps that fixed a broken assumption, keyed by it. */
export type MemoryEntry = z.infer<typeof MemoryEntrySchema>;

/** Settled uses from memory (reused drafts whose branch completed or was given up) and their successes. */
export interface Score {
  uses: number;
  successes: number;
}
export type ScoredEntry = MemoryEntry & Score;

/**
 * The revision of an entry: its content and the revision it replaces. Two threads saving the same
 * answer at once write the same revision (their outcomes add up); the same answer saved again
 * after its predecessor was retired is a new revision that starts from no outcomes.
 */
export function entryRevision(entry: Omit<MemoryEntry, "revision" | "savedAt">, replaces?: string): string {
  const { key, assumption, origin, steps, assumptions, kept } = entry;
  const content = { key, assumption, origin, steps, assumptions: assumptions ?? [], replaces: replaces ?? "" };
  return sha(canonical(kept ? { ...content, kept } : content), 16);
}

/** Where the outcomes of one revision live: one item per outcome, so the namespace lists them all. */
export const outcomesNamespace = (namespace: readonly string[], revision: string) => [
  ...namespace,
  "outcomes",
  revision,
];

/**
 * The store key of one outcome: a truncated sha-256 of its id (`thread:namespace:version`), so
 * writing it twice is one outcome, and no thread id reaches the shared store.
 */
export const outcomeKey = (outcomeId: string) => sha(outcomeId, 32);

export const OutcomeSchema = z.object({ success: z.boolean() });

/** The score of an entry from its outcome items. */
export function tally(outcomes: readonly unknown[]): Score {
  let uses = 0;
  let successes = 0;
  for (const o of outcomes) {
    const parsed = OutcomeSchema.safeParse(o);
    if (!parsed.success) continue;
    uses += 1;
    if (parsed.data.success) successes += 1;
  }
  return { uses, successes };
}

/**
 * The key of a replan: the broken assumption and the shape of the steps it affects — tools and
 * dependency shape, not ids, goals or arguments, which differ from thread to thread.
 */
export function memoryKey(assumption: string, affected: readonly Step[]): string {
  const index = new Map(affected.map((s, i) => [s.id, i]));
  const shape = affected.map((s) => ({
    tool: executorOf(s),
    deps: (s.dependsOn ?? []).map((d) => (index.has(d) ? `#${index.get(d)}` : d)).sort(),
  }));
  return `${assumption}:${sha(canonical(shape), 16)}`;
}

/** A template answers any replan of its assumption, whatever the affected steps look like. */
export const templateKey = (assumption: string) => `${assumption}:template`;

/**
 * A template as an entry. It is never written to the store (the options are its source, so a store
 * that cannot write still serves it); its revision follows its content, so every process scores
 * the same template together and a changed template starts afresh.
 */
export function templateEntry(t: ReplanTemplate, at: string): MemoryEntry {
  const content: Omit<MemoryEntry, "revision" | "savedAt"> = {
    key: templateKey(t.assumption),
    assumption: t.assumption,
    origin: "template",
    steps: t.steps,
  };
  if (t.assumptions?.length) content.assumptions = t.assumptions;
  return { ...content, revision: entryRevision(content), savedAt: at };
}

export const successRate = (e: Score) => (e.uses === 0 ? 1 : e.successes / e.uses);

/** Whether a replan memory entry has failed too often to be reused. */
export const isRetired = (e: Score) => e.uses >= MEMORY_MIN_USES && successRate(e) < MEMORY_MIN_RATE;

/** A learned answer replaces an entry only when there is none or the old one is retired. */
export const shouldSave = (existing: ScoredEntry | undefined) => !existing || isRetired(existing);

/** Tools an entry names (steps and fallbacks) that the registry no longer has. */
export function unregisteredTools(steps: readonly Step[], registered: ReadonlySet<string>): string[] {
  const named = steps.flatMap((s) => [...(s.tool ? [s.tool] : []), ...(s.fallback ? [s.fallback.tool] : [])]);
  return [...new Set(named.filter((t) => !registered.has(t)))];
}

export type MemoryChoice = { use: ScoredEntry; mode: "reuse" | "hint" } | { skipped: string } | undefined;

/**
 * What memory offers a replan: the exact entry first, then the assumption's template; retired or
 * broken ones are passed over.
 */
export function chooseEntry(
  mode: ReplanMemoryMode,
  candidates: readonly (ScoredEntry | undefined)[],
  registered: ReadonlySet<string>,
): MemoryChoice {
  if (mode === "off") return undefined;
  const passed: string[] = [];
  for (const entry of candidates) {
    if (!entry) continue;
    const missing = unregisteredTools(entry.steps, registered);
    if (missing.length > 0) passed.push(`entry ${entry.key} skipped: tool ${missing.join(", ")} is not registered`);
    else if (isRetired(entry))
      passed.push(`entry ${entry.key} retired: ${entry.successes} of ${entry.uses} uses succeeded`);
    else return { use: entry, mode };
  }
  return passed.length > 0 ? { skipped: passed.join("; ") } : undefined;
}

/**
 * Steps from memory with ids no step of this thread has used (plan or records): a saved id may
 * name a kept step here, or a finished one whose record a reused id would overwrite.
 */
export function withUniqueIds(
  steps: readonly Step[],
  taken: ReadonlySet<string>,
  preferred: ReadonlyMap<string, string> = new Map(),
): Step[] {
  const used = new Set(taken);
  const renamed = new Map<string, string>();
  for (const s of steps) {
    let id = preferred.get(s.id) ?? s.id;
    for (let n = 2; used.has(id); n++) id = `${s.id.slice(0, LIMITS.maxIdLength - 1 - String(n).length)}_${n}`;
    used.add(id);
    renamed.set(s.id, id);
  }
  return steps.map((s) => {
    const out: Step = { ...s, id: renamed.get(s.id)! };
    if (s.dependsOn) out.dependsOn = s.dependsOn.map((d) => renamed.get(d) ?? d);
    return out;
  });
}

/** Actions after which a step of a reused branch is still on its way to success. */
const STILL_TRYING = new Set(["retry", "fallback"]);

/**
 * How a node's update settles a replacement branch: `succeeded` when its last step succeeds
 * (every step of it now has), `failed` when a decision gives up on one of its steps (a replan,
 * an escalation, a skip, an abort). Transitions only, so a branch settles once per run.
 */
export function branchOutcome(
  record: Pick<ReplanRecord, "memoryKey" | "memorySteps">,
  before: Readonly<Record<string, StepRun>>,
  after: Readonly<Record<string, StepRun>>,
  decisions: readonly Pick<Decision, "stepId" | "action">[],
): "succeeded" | "failed" | undefined {
  const ids = record.memorySteps ?? [];
  if (!record.memoryKey || ids.length === 0) return undefined;
  const done = (runs: Readonly<Record<string, StepRun>>) => ids.every((id) => runs[id]?.status === "succeeded");
  if (done(after)) return done(before) ? undefined : "succeeded";
  const gaveUp = decisions.some((d) => d.stepId !== undefined && ids.includes(d.stepId) && !STILL_TRYING.has(d.action));
  return gaveUp ? "failed" : undefined;
}

/** The decision that makes a use of memory visible: same trigger, rule `replan.memory`. */
export function memoryDecision(trigger: Decision, reason: string, after: number, at: string): Decision {
  const { stepId, attempt, failureClass, action, planVersion, brokenAssumption } = trigger;
  return decide("replan.memory", {
    after,
    stepId,
    attempt,
    failureClass,
    action,
    reason,
    planVersion,
    at,
    brokenAssumption,
  });
}

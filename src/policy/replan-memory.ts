/**
 * Replan memory (DESIGN §7.4), the pure part: the key a replan is filed under, the entry saved
 * for it, its score and retirement, the choice between reusing, hinting or asking the planner,
 * and the renaming that makes a saved branch fit another thread's plan. Store access lives in
 * runtime/replan-memory.ts; nothing here reads a clock or a store.
 */
import { createHash } from "node:crypto";
import { z } from "zod";
import { canonical } from "../plan/diff.js";
import { AssumptionSchema, LIMITS, StepSchema, type ReplanRecord, type Step, type StepRun } from "../plan/schema.js";
import type { Decision } from "./decision.js";

export type ReplanMemoryMode = "reuse" | "hint" | "off";

/** An entry is no longer reused once it has this many settled uses and a success rate below `MIN_RATE`. */
export const MEMORY_MIN_USES = 3;
export const MEMORY_MIN_RATE = 0.5;
/** Outcome ids an entry remembers, so an outcome counted once is not counted again after a crash. */
const COUNTED_MAX = 64;

export const MemoryEntrySchema = z.object({
  key: z.string().min(1),
  assumption: z.string().min(1),
  /** `learned`: saved when a thread's replacement branch completed; `template`: given up front. */
  origin: z.enum(["learned", "template"]),
  steps: z.array(StepSchema).min(1).max(LIMITS.maxSteps),
  /** Assumptions the steps rest on that the replan introduced (definitions travel with the steps). */
  assumptions: z.array(AssumptionSchema).max(LIMITS.maxAssumptions).optional(),
  /** Settled uses from memory (reused drafts whose branch completed or was given up) and their successes. */
  uses: z.number().int().min(0),
  successes: z.number().int().min(0),
  counted: z.array(z.string()).max(COUNTED_MAX),
  savedAt: z.string(),
});
export type MemoryEntry = z.infer<typeof MemoryEntrySchema>;

export const ReplanTemplateSchema = z
  .object({
    assumption: z.string().min(1).max(LIMITS.maxIdLength),
    steps: z.array(StepSchema).min(1).max(LIMITS.maxSteps),
    assumptions: z.array(AssumptionSchema).max(LIMITS.maxAssumptions).optional(),
  })
  .strict();
export type ReplanTemplate = z.infer<typeof ReplanTemplateSchema>;

/**
 * The key of a replan: the broken assumption and the shape of the steps it affects — tools and
 * dependency shape, not ids, goals or arguments, which differ from thread to thread.
 */
export function memoryKey(assumption: string, affected: readonly Step[]): string {
  const index = new Map(affected.map((s, i) => [s.id, i]));
  const shape = affected.map((s) => ({
    tool: s.human ? "<human>" : (s.tool ?? ""),
    deps: (s.dependsOn ?? []).map((d) => (index.has(d) ? `#${index.get(d)}` : d)).sort(),
  }));
  return `${assumption}:${createHash("sha256").update(canonical(shape)).digest("hex").slice(0, 16)}`;
}

/** A template answers any replan of its assumption, whatever the affected steps look like. */
export const templateKey = (assumption: string) => `${assumption}:template`;

export function templateEntry(t: ReplanTemplate, at: string): MemoryEntry {
  const entry: MemoryEntry = {
    key: templateKey(t.assumption),
    assumption: t.assumption,
    origin: "template",
    steps: t.steps,
    uses: 0,
    successes: 0,
    counted: [],
    savedAt: at,
  };
  if (t.assumptions?.length) entry.assumptions = t.assumptions;
  return entry;
}

export const successRate = (e: Pick<MemoryEntry, "uses" | "successes">) => (e.uses === 0 ? 1 : e.successes / e.uses);

export const isRetired = (e: Pick<MemoryEntry, "uses" | "successes">) =>
  e.uses >= MEMORY_MIN_USES && successRate(e) < MEMORY_MIN_RATE;

/** One settled use, counted once per outcome id (`thread:version`), however often it is reported. */
export function countOutcome(entry: MemoryEntry, outcomeId: string, success: boolean): MemoryEntry {
  if (entry.counted.includes(outcomeId)) return entry;
  return {
    ...entry,
    uses: entry.uses + 1,
    successes: entry.successes + (success ? 1 : 0),
    counted: [...entry.counted, outcomeId].slice(-COUNTED_MAX),
  };
}

/** A learned answer replaces an entry only when there is none or the old one is retired. */
export const shouldSave = (existing: MemoryEntry | undefined) => !existing || isRetired(existing);

/** Tools an entry names (steps and fallbacks) that the registry no longer has. */
export function unregisteredTools(steps: readonly Step[], registered: ReadonlySet<string>): string[] {
  const named = steps.flatMap((s) => [...(s.tool ? [s.tool] : []), ...(s.fallback ? [s.fallback.tool] : [])]);
  return [...new Set(named.filter((t) => !registered.has(t)))];
}

export type MemoryChoice = { use: MemoryEntry; mode: "reuse" | "hint" } | { skipped: string } | undefined;

/** What memory offers a replan: the exact entry first, then the assumption's template; retired or broken ones are passed over. */
export function chooseEntry(
  mode: ReplanMemoryMode,
  candidates: readonly (MemoryEntry | undefined)[],
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
export function withUniqueIds(steps: readonly Step[], taken: ReadonlySet<string>): Step[] {
  const used = new Set(taken);
  const renamed = new Map<string, string>();
  for (const s of steps) {
    let id = s.id;
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
export function memoryDecision(trigger: Decision, reason: string, seq: number, at: string): Decision {
  const d: Decision = {
    seq,
    attempt: trigger.attempt,
    failureClass: trigger.failureClass,
    action: trigger.action,
    rule: "replan.memory",
    reason,
    planVersion: trigger.planVersion,
    at,
  };
  if (trigger.stepId !== undefined) d.stepId = trigger.stepId;
  if (trigger.brokenAssumption !== undefined) d.brokenAssumption = trigger.brokenAssumption;
  return d;
}

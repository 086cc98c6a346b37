/**
 * What the ladder decides and what a replan records: failure classes, actions, a decision's
 * shape, and what changed between two plan versions.
 */
import { z } from "zod";
import type { Step } from "./step.js";

/** What changed between two plan versions. */
export interface PlanDiff {
  added: string[];
  removed: string[];
  changed: { id: string; fields: (keyof Step)[] }[];
  unchanged: string[];
}

export const FailureClassSchema = z.enum([
  "transient",
  "deterministic",
  "precondition_failed",
  "success_signal_unmet",
  "assumption_broken",
  "scope_changed",
  "budget_exhausted",
  "unknown",
  /** No failure: a person's choice at a plan review or a human step (decisions with `by: "person"`). */
  "none",
]);
/** What kind of failure a deviation is; the ladder's answer depends on it. */
export type FailureClass = z.infer<typeof FailureClassSchema>;

export const ActionSchema = z.enum([
  "retry",
  "fallback",
  "replan_local",
  "replan_global",
  "skip",
  "escalate",
  "abort",
  /** A person supplied what the step was to produce (`provide`). Never chosen by the rules. */
  "provide",
  /** A person approved the plan at its review. Never chosen by the rules. */
  "approve",
  /** A person did a human step (`complete`). Never chosen by the rules. */
  "complete",
  /** A step's operation had committed already: its output was reused, the tool not called (`effect.reused`). */
  "reuse",
  /** An abandoned side effect's compensation ran (`compensate.run`). */
  "compensate",
  /** Stale inputs: the steps that produced them run again before the step that read them (`evidence.stale`). */
  "refresh",
  /**
   * A step starts on an assumption its watcher could not check (`assumption.watch-unreadable`): a record that
   * drift went undetected, never a rung.
   */
  "proceed",
]);
/** What a decision does: a rung of the ladder, or what a person chose. */
export type Action = z.infer<typeof ActionSchema>;

/**
 * A decision's shape, every field but the rule's type: `rule` is an id of the rule table, which
 * lives in the policy layer above this one. `DecisionSchema` and `Decision` (policy/ladder/decision.ts)
 * add it; use those.
 */
export const DecisionShapeSchema = z.object({
  seq: z.number().int(),
  stepId: z.string().optional(),
  attempt: z.number().int(),
  failureClass: FailureClassSchema,
  action: ActionSchema,
  rule: z.string(),
  reason: z.string(),
  planVersion: z.number().int(),
  at: z.string(),
  /** Backoff chosen for a retry. */
  delayMs: z.number().optional(),
  /** The assumption a replan decision names. */
  brokenAssumption: z.string().optional(),
  /** The evidence rule that named the failure class (`transient.http-5xx`, …); see `policy/ladder/evidence-rules.ts`. */
  evidence: z.string().optional(),
  /** Who decided: absent for the rules, `"llm"` for the LLM classifier, `"person"` for an answer at an interrupt. */
  by: z.enum(["llm", "person"]).optional(),
});

/** The schema of a record of `replans`. */
export const ReplanRecordSchema = z.object({
  /**
   * `"extend"`: a compact extension record (docs/decisions/0050-compact-extension-records.md) — it
   * lists what the extension added, not what it kept: `keptCount` instead of `preservedSteps`, and
   * in `facts` only the facts new or relabelled since the run's previous record. Absent on replans
   * (and on extension records written before 0.2), which list everything.
   * `replanRecords` (langgraph-replan/views) reads both shapes as full records.
   */
  kind: z.enum(["local", "global", "extend"]).optional(),
  trigger: z.string(),
  brokenAssumption: z.string().optional(),
  /** `extend`: a rolling horizon's next steps appended (trigger "horizon"); not a repair. */
  scope: z.enum(["local", "global", "extend"]),
  fromVersion: z.number().int(),
  toVersion: z.number().int(),
  invalidatedSteps: z.array(z.string()),
  /** Steps the new version kept, in order; absent on a compact extension record (`keptCount`). */
  preservedSteps: z.array(z.string()).optional(),
  /** A compact extension record's kept steps: the first `keptCount` steps of version `toVersion`. */
  keptCount: z.number().int().min(0).optional(),
  newSteps: z.array(z.string()),
  facts: z.object({
    trusted: z.array(z.string()),
    suspect: z.array(z.string()),
    invalidated: z.array(z.string()),
  }),
  /** Steps the replan kept by id but changed (tool, arguments, inputs, dependencies, …): they run again. */
  changedSteps: z.array(z.string()).optional(),
  /** Completed steps the replan re-runs (backtracking) to re-validate their facts. */
  revalidatedSteps: z.array(z.string()).optional(),
  /** Other assumptions that may share the blame (recorded as suspect). */
  suspectAssumptions: z.array(z.string()).optional(),
  at: z.string().optional(),
  /** Replan memory (§7.4): where the replacement came from, when memory is on. */
  source: z.enum(["planner", "memory"]).optional(),
  /** The memory entry this replan was filed under (planner) or taken from (memory). */
  memoryKey: z.string().optional(),
  /** The revision of the entry taken from memory: its outcome scores that revision only, not a later replacement. */
  memoryRevision: z.string().optional(),
  /** The replacement branch: saved to memory (or scored) when all of these succeed. */
  memorySteps: z.array(z.string()).optional(),
  /**
   * Steps of the answer that the planner handed back under the id of a step they replace, with that
   * step's position among the affected steps: where the answer is reused, they keep the reusing
   * thread's id for that position.
   */
  memoryKept: z.record(z.string(), z.number().int().min(0)).optional(),
});
/**
 * A record of `replans`: what triggered it, its scope, the versions, the steps invalidated, kept and added,
 * and the facts by label.
 */
export type ReplanRecord = z.infer<typeof ReplanRecordSchema>;

/**
 * The plan manager's state (DESIGN §4 "State keys"). Kept small on purpose: every checkpoint
 * serialises every channel (DESIGN §6), so no defaults are stored per step and old plan
 * versions are kept as diffs (`planHistory`), not copies.
 */
import { Annotation } from "@langchain/langgraph";
import type { Deviation } from "../policy/deviation.js";
import type {
  Budget,
  Decision,
  Fact,
  InterruptPayload,
  Outcome,
  Plan,
  ReplanRecord,
  RunStatus,
  SideEffectRecord,
  StepRun,
} from "../plan/schema.js";
import type { PlanVersionEntry } from "../plan/history.js";

/** Guardrail bookkeeping for replans and backtracking. */
export interface ReplanGuards {
  /** Replans attempted (failed ones included). */
  count: number;
  /** Assumptions proven false; never checked again, never rested on again. */
  falsified: string[];
  /** Per assumption: the success counter at its last replan (for `replanCooldownSteps`). */
  lastReplanAt: Record<string, number>;
  /** Per step: how often backtracking re-ran it. */
  backtracks: Record<string, number>;
  /** No-progress fingerprints of the replans made so far. */
  fingerprints: string[];
  /** Steps that succeeded in this run (drives the cooldown). */
  successes: number;
  /** Approaches already tried and failed, handed to the planner as `excluded`. */
  tried: string[];
  /** Constraints given by people (plan review or escalation "replan" answers). */
  constraints: string[];
}

/** A human interrupt waiting to be shown, written by the node before `human` (whose own writes are discarded on interrupt). */
export interface PendingHuman extends InterruptPayload {
  /** Epoch ms after which a human step's answer escalates instead of completing. */
  deadline?: number;
}

/** Token and cost accounting for model calls (filled by LLM planners and classifiers). */
export interface UsageEntry {
  purpose: "plan" | "replan" | "classify";
  model?: string;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  cost: number;
  at: string;
  errorId?: string;
}

const mergeRecord = <T>(current: Record<string, T>, update: Record<string, T> | undefined): Record<string, T> =>
  update === undefined ? current : { ...current, ...update };

const append = <T>(current: T[], update: T[] | T | undefined): T[] =>
  update === undefined ? current : current.concat(update);

/** `[]` clears the pending scope changes; anything else is appended (duplicates dropped). */
const scopeReducer = (current: string[], update: string[] | undefined): string[] => {
  if (update === undefined) return current;
  if (update.length === 0) return [];
  return [...current, ...update.filter((u) => !current.includes(u))];
};

export const PlanManagerState = Annotation.Root({
  goal: Annotation<string>,
  /** Input facts: each entry becomes a trusted fact produced by "input". */
  context: Annotation<Record<string, unknown> | undefined>,
  status: Annotation<RunStatus>({ reducer: (_, b) => b, default: () => "planning" }),
  plan: Annotation<Plan | undefined>,
  /** Compact history: one reverse diff per replan (`planAtVersion` rebuilds any version). */
  planHistory: Annotation<PlanVersionEntry[], PlanVersionEntry[] | PlanVersionEntry>({ reducer: append, default: () => [] }),
  /** Step records by id; a step without a record has not run yet (pending). */
  steps: Annotation<Record<string, StepRun>, Record<string, StepRun>>({ reducer: mergeRecord, default: () => ({}) }),
  facts: Annotation<Record<string, Fact>, Record<string, Fact>>({ reducer: mergeRecord, default: () => ({}) }),
  decisions: Annotation<Decision[], Decision[] | Decision>({ reducer: append, default: () => [] }),
  replans: Annotation<ReplanRecord[], ReplanRecord[] | ReplanRecord>({ reducer: append, default: () => [] }),
  sideEffects: Annotation<SideEffectRecord[], SideEffectRecord[] | SideEffectRecord>({ reducer: append, default: () => [] }),
  budget: Annotation<Budget>({ reducer: (_, b) => b, default: () => ({ spent: 0, replanSpent: 0 }) }),
  scopeChanges: Annotation<string[], string[]>({ reducer: scopeReducer, default: () => [] }),
  outcome: Annotation<Outcome | undefined>,
  usage: Annotation<UsageEntry[], UsageEntry[] | UsageEntry>({ reducer: append, default: () => [] }),
  /** The deviation waiting for the classifier (internal). */
  deviation: Annotation<Deviation | null>({ reducer: (_, b) => b, default: () => null }),
  /** The interrupt the human node will raise (internal). */
  pendingHuman: Annotation<PendingHuman | null>({ reducer: (_, b) => b, default: () => null }),
  /** Replan and backtracking guardrail counters (internal). */
  guards: Annotation<ReplanGuards>({
    reducer: (_, b) => b,
    default: (): ReplanGuards => ({ count: 0, falsified: [], lastReplanAt: {}, backtracks: {}, fingerprints: [], successes: 0, tried: [], constraints: [] }),
  }),
});

export type PlanManagerStateType = typeof PlanManagerState.State;
export type PlanManagerUpdate = typeof PlanManagerState.Update;

/**
 * The plan manager's state (docs/architecture.md "State and channels"). Kept small on purpose: every checkpoint
 * serialises every channel (docs/architecture.md "Durability"), so no defaults are stored per step and old plan
 * versions are kept as diffs (`planHistory`), not copies.
 */
import { Annotation } from "@langchain/langgraph";
import { z } from "zod";
import type { UsageEntry } from "../contracts/usage.js";
import { CheckedChannel } from "./checked-channel.js";
import { appendBatch, CheckedDeltaChannel, mergeBatch, type BatchReducer } from "./delta-channel.js";
import { planWrites, uncheckedPlan, type PlanWrite } from "./plan-channel.js";
import { mergeFactsInPlace } from "../plan/facts.js";
import { mergeStepsInPlace } from "../plan/ready.js";

export type { UsageEntry } from "../contracts/usage.js";
import { DeviationSchema as DeviationUnionSchema, type Deviation } from "../policy/ladder/deviation.js";
import { ReplanRecordSchema, type ReplanRecord } from "../plan/schema/decision.js";
import { InterruptKindSchema, type InterruptPayload } from "../plan/schema/interrupts.js";
import { OutcomeSchema, RunStatusSchema, type Outcome, type RunStatus } from "../plan/schema/outcome.js";
import { PlanDraftSchema, PlanSchema, type Plan, type PlanDraft } from "../plan/schema/plan.js";
import { FactKeySchema, LIMITS } from "../plan/schema/primitives.js";
import {
  BudgetSchema,
  CompensationRecordSchema,
  FactSchema,
  SideEffectRecordSchema,
  StepRunSchema,
  WatchRecordSchema,
  type WatchRecord,
  type Budget,
  type CompensationRecord,
  type Fact,
  type SideEffectRecord,
  type StepRun,
} from "../plan/schema/run.js";
import { DecisionSchema, type Decision } from "../policy/ladder/decision.js";
import type { PlanVersionEntry } from "../plan/history.js";
import { StopRequestSchema, type StopRequest } from "../policy/ladder/stop.js";
import { QualityStateSchema, type QualityState } from "../policy/quality/findings.js";
import type { ReplanGuards } from "../policy/ladder/guards.js";
import type { ProposedVersion } from "../policy/replan/replan.js";

export type { ReplanGuards } from "../policy/ladder/guards.js";

/** Dispatch bookkeeping that must survive a crash (see `dispatch` below). */
export interface DispatchState {
  queue: Deviation[];
  limits: Record<string, number>;
}

/**
 * A human interrupt waiting to be shown, written by the node before `human` (whose own writes
 * are discarded on interrupt).
 */
export type PendingHuman = InterruptPayload & {
  /** Epoch ms after which a human step's answer escalates instead of completing. */
  deadline?: number;
};
/** A pending interrupt of one kind. */
export type PendingOf<K extends PendingHuman["kind"]> = Extract<PendingHuman, { kind: K }>;

const replace = <T>(_: T, update: T): T => update;

/** Findings are appended, however replay batches the writes. */
const appendFindings = (current: QualityState | undefined, writes: QualityState[]): QualityState | undefined =>
  writes.length === 0 ? current : { findings: [...(current?.findings ?? []), ...writes.flatMap((w) => w.findings)] };

/** `[]` clears the pending scope changes; anything else is appended (duplicates dropped). */
const scopeReducer = (current: string[], update: string[] | undefined): string[] => {
  if (update === undefined) return current;
  if (update.length === 0) return [];
  return [...current, ...update.filter((u) => !current.includes(u))];
};

const oneOrMany = <T extends z.ZodType>(item: T) => z.union([item, z.array(item)]);
const recordOf = <T extends z.ZodType>(key: z.ZodString, item: T) => z.record(key, item);

/** A replacing channel whose every write is validated (see `CheckedChannel`). */
function lastValue<V>(key: string, schema: z.ZodType, initial?: () => V) {
  return new CheckedChannel<V, V>(key, schema, replace, initial);
}

/*
 * The channels that grow with the run (the plan, per-step records, facts, logs) are delta
 * channels: a checkpoint stores what a step wrote, not the whole value (decision record 0011).
 * The small ones stay plain: storing them whole costs less than replaying them.
 */
const logOf = <T>(key: string, item: z.ZodType) =>
  new CheckedDeltaChannel<T[], T[] | T>(key, oneOrMany(item), appendBatch<T>, () => []);
// Maps may be merged in place in runs whose steps nobody watches (docs/decisions/0030-long-runs-per-step-cost.md).
const mapOf = <T>(key: string, schema: z.ZodType, inPlace: BatchReducer<Record<string, T>, Record<string, T>>) =>
  new CheckedDeltaChannel<Record<string, T>>(key, schema, mergeBatch<T>, () => ({}), undefined, {
    reducer: inPlace,
    own: (value) => ({ ...value }),
  });

// Shapes of what may be written, checked on every write (a few microseconds per step). Internal
// channels are checked loosely: they are written by the nodes and are not part of the contract.
const PlanHistoryEntrySchema = z.looseObject({
  version: z.number().int(),
  replaced: z.array(z.unknown()),
  order: z.array(z.string()).optional(),
  keptCount: z.number().int().min(0).optional(),
});
const UsageEntrySchema = z.looseObject({
  purpose: z.string(),
  inputTokens: z.number(),
  outputTokens: z.number(),
  cost: z.number(),
});
const DeviationSchema = DeviationUnionSchema.nullable();
const PendingHumanSchema = z
  .looseObject({ kind: InterruptKindSchema, options: z.array(z.string()), context: z.record(z.string(), z.unknown()) })
  .nullable();
const DispatchSchema = z.looseObject({
  queue: z.array(DeviationSchema.unwrap()),
  limits: z.record(z.string(), z.number().int().min(1)),
});
const GuardsSchema = z.looseObject({
  count: z.number().int(),
  falsified: z.array(z.string()),
  successes: z.number().int(),
});
const HeldReplanSchema = z
  .object({
    plan: PlanSchema,
    record: ReplanRecordSchema,
    affected: z.array(z.string()),
    replacement: z.array(z.string()),
    scopeChanges: z.array(z.string()),
  })
  .nullable();
const ScopeChangesSchema = z.array(z.string().min(1).max(LIMITS.maxTextLength)).max(LIMITS.maxListLength);

const ProgressSchema = z.object({ lastProgressAt: z.string().optional() });
export type Progress = z.infer<typeof ProgressSchema>;

/** What a caller writes to start a run: the goal and the input facts. */
export const PlanManagerInput = Annotation.Root({
  goal: lastValue<string>("goal", z.string()),
  /** Input facts: each entry becomes a trusted fact produced by "input". */
  context: lastValue<Record<string, unknown> | undefined>("context", z.record(z.string(), z.unknown()).optional()),
  /** A plan draft to run instead of asking the planner; validated like the planner's (graph/boundary.ts, nodes/planner.ts). */
  draft: lastValue<PlanDraft | undefined>("draft", PlanDraftSchema.optional()),
});

/**
 * What a run reports (docs/architecture.md "State and channels"): all an embedding graph needs to declare to read it.
 */
export const PlanManagerOutput = Annotation.Root({
  goal: PlanManagerInput.spec.goal,
  status: lastValue<RunStatus>("status", RunStatusSchema, () => "planning"),
  /** A whole plan, or an extension's append (runtime/plan-channel.ts); the value is always the whole plan. */
  plan: new CheckedDeltaChannel<Plan | undefined, PlanWrite>(
    "plan",
    PlanSchema.optional(),
    planWrites,
    () => undefined,
    undefined,
    undefined,
    false,
    uncheckedPlan,
  ),
  /** Compact history: one reverse diff per replan (`planAtVersion` rebuilds any version). */
  planHistory: logOf<PlanVersionEntry>("planHistory", PlanHistoryEntrySchema),
  /** Step records by id; a step without a record has not run yet (pending). */
  steps: mapOf<StepRun>("steps", recordOf(z.string(), StepRunSchema), mergeStepsInPlace),
  facts: mapOf<Fact>("facts", recordOf(FactKeySchema, FactSchema), mergeFactsInPlace),
  decisions: logOf<Decision>("decisions", DecisionSchema),
  replans: logOf<ReplanRecord>("replans", ReplanRecordSchema),
  sideEffects: logOf<SideEffectRecord>("sideEffects", SideEffectRecordSchema),
  /** Every call of an assumption's watcher, in order (docs/decisions/0041-evidence-freshness-and-drift.md). */
  watches: logOf<WatchRecord>("watches", WatchRecordSchema),
  /**
   * Compensations of abandoned side effects, in the order they run (docs/decisions/0039-compensation.md).
   * No default: a run that never abandons an effect stores nothing for it.
   */
  compensations: lastValue<CompensationRecord[] | undefined>(
    "compensations",
    z.array(CompensationRecordSchema).optional(),
  ),
  budget: lastValue<Budget>("budget", BudgetSchema, () => ({ spent: 0, replanSpent: 0 })),
  /**
   * Scope changes not yet planned for: the one channel users write while a run is paused
   * (docs/guides/human-review.md).
   */
  scopeChanges: new CheckedChannel<string[], string[]>("scopeChanges", ScopeChangesSchema, scopeReducer, () => []),
  /**
   * When a step last finished (docs/architecture.md "Long goals": the time since the last progress tells a stalled
   * run).
   */
  progress: lastValue<Progress>("progress", ProgressSchema, (): Progress => ({})),
  outcome: lastValue<Outcome | undefined>("outcome", OutcomeSchema.optional()),
  /**
   * The plan quality gate's findings, every version's (docs/decisions/0040-plan-quality-gate.md): a write
   * appends its findings. A delta channel, so checkpoints do not store them again at every step; undefined
   * until a version has a finding.
   */
  quality: new CheckedDeltaChannel<QualityState | undefined, QualityState>(
    "quality",
    QualityStateSchema,
    appendFindings,
    () => undefined,
  ),
  usage: logOf<UsageEntry>("usage", UsageEntrySchema),
});

/** The manager's whole state: input, output, and the internal channels the nodes hand each other. */
export const PlanManagerState = Annotation.Root({
  ...PlanManagerOutput.spec,
  context: PlanManagerInput.spec.context,
  draft: PlanManagerInput.spec.draft,
  /** The deviation waiting for the classifier (internal). */
  deviation: lastValue<Deviation | null>("deviation", DeviationSchema, () => null),
  /** The interrupt the human node will raise (internal). */
  pendingHuman: lastValue<PendingHuman | null>("pendingHuman", PendingHumanSchema, () => null),
  /**
   * Steps running at once (internal, docs/architecture.md "Parallel steps"): deviations waiting for the classifier in
   * the order they happened, and per-tool concurrency lowered by rate limits.
   */
  dispatch: lastValue<DispatchState>("dispatch", DispatchSchema, (): DispatchState => ({ queue: [], limits: {} })),
  /**
   * A proposed version the capability guard held for a person (internal): the plan review shows its diff and
   * steps; approving commits exactly this proposal. Cleared by whatever answer the review gets.
   */
  // No default: a run that never holds a proposal stores nothing for it in any checkpoint.
  heldReplan: lastValue<ProposedVersion | null | undefined>("heldReplan", HeldReplanSchema),
  /** An operator's stop request (policy/ladder/stop.ts); written from outside a run, cleared by `resumeStopped`. */
  stop: lastValue<StopRequest | null>("stop", StopRequestSchema, () => null),
  /** Replan and backtracking guardrail counters (internal). */
  guards: lastValue<ReplanGuards>("guards", GuardsSchema, (): ReplanGuards => ({
    count: 0,
    falsified: [],
    lastReplanAt: {},
    backtracks: {},
    fingerprints: [],
    successes: 0,
    tried: [],
    constraints: [],
  })),
});

/** The whole state of a plan manager run. */
export type PlanManagerStateType = typeof PlanManagerState.State;
export type PlanManagerUpdate = typeof PlanManagerState.Update;
/** What a run takes as input: `goal`, `context`, and optionally a `draft`. */
export type PlanManagerInputType = typeof PlanManagerInput.Update;
/** What a run returns: status, plan, steps, facts, decisions, replans, outcome, …. */
export type PlanManagerOutputType = typeof PlanManagerOutput.State;

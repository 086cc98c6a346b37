/**
 * The plan state `planMiddleware` adds to a `createAgent` graph. The keys and shapes are the
 * plan manager's own (`plan`, `steps`, `facts`, `decisions`, `replans`, `sideEffects`, …), so the
 * views and the report read an agent's state as they read a plan manager's. Every key has a
 * reducer: an agent runs the tool calls of one model turn side by side, each as its own task, and
 * each returns its own update.
 */
import { ReducedValue, StateSchema } from "@langchain/langgraph";
import { z } from "zod";
import { ReplanRecordSchema, type ReplanRecord } from "../plan/schema/decision.js";
import { OutcomeSchema, RunStatusSchema, type RunStatus } from "../plan/schema/outcome.js";
import { PlanSchema, type Plan } from "../plan/schema/plan.js";
import {
  BudgetSchema,
  CompensationRecordSchema,
  FactSchema,
  SideEffectRecordSchema,
  StepRunSchema,
  type Budget,
  type CompensationRecord,
  type Fact,
  type SideEffectRecord,
  type StepRun,
} from "../plan/schema/run.js";
import type { PlanVersionEntry } from "../plan/history.js";
import { DecisionSchema, type Decision } from "../policy/ladder/decision.js";
import { QualityStateSchema, type QualityState } from "../plan/schema/quality.js";
import { WatchRecordSchema, type WatchRecord } from "../plan/schema/run.js";

/** A failure a person must look at; raised as an interrupt before the next model call. */
export const EscalationSchema = z.object({
  stepId: z.string(),
  tool: z.string(),
  args: z.record(z.string(), z.unknown()),
  /** The identical-call key of the call that failed (see `callKey`). */
  call: z.string(),
  rule: z.string(),
  reason: z.string(),
  /** The call's outcome is unknown (`effect.in-doubt`): the key it went out under; answered happened, retry or abort. */
  inDoubt: z
    .object({
      key: z.string(),
      /** The journal attempt of the intent asked about (another branch of the thread may have numbered it). */
      attempt: z.number().int().min(0).optional(),
    })
    .optional(),
});
/** A question waiting for a person inside `createAgent`. */
export type Escalation = z.infer<typeof EscalationSchema>;

/** A broken assumption (or failed step) waiting for a `write_plan` revision. */
export const TriggerSchema = z.object({
  stepId: z.string(),
  assumption: z.string().optional(),
  scope: z.enum(["local", "global"]),
  affected: z.array(z.string()),
  reason: z.string(),
});
/** A broken assumption or failed step waiting for a `write_plan` revision. */
export type Trigger = z.infer<typeof TriggerSchema>;

/** The guards' memory: what no later decision may forget. */
export const PlanRunSchema = z.object({
  /** Assumptions proven false; no step of a later version may rest on them. */
  falsified: z.array(z.string()),
  /** No-progress fingerprints of the revisions made so far. */
  fingerprints: z.array(z.string()),
  /** Identical-call keys of calls that failed for good (true) or that a person allowed again (false). */
  failedCalls: z.record(z.string(), z.boolean()),
  trigger: TriggerSchema.nullable(),
  /** Escalations waiting for a person, by step id (null: answered). */
  escalations: z.record(z.string(), EscalationSchema.nullable()),
  /**
   * One id per step success (`VERSION:STEP:ATTEMPT`): the success count the cooldown reads. A set,
   * not a counter, so the successes of side-by-side calls all land and a hook's write-back adds none.
   */
  successes: z.array(z.string()).default(() => []),
  /** Per assumption: the success count when a revision last answered it (for `replanCooldownSteps`). */
  lastReplanAt: z.record(z.string(), z.number()).default(() => ({})),
  /** Refused calls per `VERSION:STEP` (for `policy.maxRefusedCalls`); a person's answer sets it back to 0. */
  refusals: z.record(z.string(), z.number()).default(() => ({})),
  /**
   * A plan sent back over `budget.maxCost`, until a plan is recorded: the tools its costed steps call,
   * which a call no recorded step governs may not run (middleware/plan-budget.ts).
   */
  overBudget: z
    .object({ reason: z.string(), steps: z.array(z.object({ stepId: z.string(), tool: z.string() })) })
    .nullable()
    .default(null),
  /**
   * Times each producer ran again to refresh a stale input (`evidence.stale`), by step id: the bound
   * `policy.maxBacktracksPerStep` counts (docs/decisions/0053-middleware-quality-freshness-watch.md).
   */
  backtracks: z.record(z.string(), z.number()).default(() => ({})),
  /** Held drafts sent back to the model under the quality gate since the last recorded version (`policy.replanDraftRetries`). */
  qualityReturns: z.number().int().min(0).default(0),
});
export type PlanRun = z.infer<typeof PlanRunSchema>;

/** The key of a step's refused calls in `planRun.refusals`: a new plan version starts them again. */
export const refusalKey = (version: number, stepId: string) => `${version}:${stepId}`;
export type PlanRunUpdate = Partial<PlanRun>;

export const EMPTY_RUN: PlanRun = {
  falsified: [],
  fingerprints: [],
  failedCalls: {},
  trigger: null,
  escalations: {},
  successes: [],
  lastReplanAt: {},
  refusals: {},
  overBudget: null,
  backtracks: {},
  qualityReturns: 0,
};

const union = (a: readonly string[], b: readonly string[]) => [...a, ...b.filter((x) => !a.includes(x))];

function mergeRun(current: PlanRun, next: PlanRunUpdate): PlanRun {
  const escalations = { ...current.escalations, ...next.escalations };
  for (const [id, e] of Object.entries(escalations)) if (e === null) delete escalations[id];
  return {
    falsified: union(current.falsified, next.falsified ?? []),
    fingerprints: union(current.fingerprints, next.fingerprints ?? []),
    failedCalls: { ...current.failedCalls, ...next.failedCalls },
    trigger: next.trigger === undefined ? current.trigger : next.trigger,
    escalations,
    successes: union(current.successes ?? [], next.successes ?? []),
    lastReplanAt: { ...current.lastReplanAt, ...next.lastReplanAt },
    refusals: { ...current.refusals, ...next.refusals },
    overBudget: next.overBudget === undefined ? (current.overBudget ?? null) : next.overBudget,
    backtracks: { ...current.backtracks, ...next.backtracks },
    qualityReturns: next.qualityReturns ?? current.qualityReturns ?? 0,
  };
}

const lastWins = <T>(_: T, next: T): T => next;
const merge = <T>(a: Record<string, T>, b: Record<string, T>) => ({ ...a, ...b });
/**
 * Logs append what they do not hold yet. createAgent's hook nodes write the whole state back as
 * their update, so a log's reducer sees its own entries again and must not append them twice.
 */
const appendNew =
  <T>(key: (item: T) => string) =>
  (a: T[], b: T[]): T[] => {
    const held = new Set(a.map(key));
    return [...a, ...b.filter((item) => !held.has(key(item)))];
  };
/** A record set to null is removed: a revision clears the records of steps it changed or dropped. */
function mergeSteps(current: Record<string, StepRun>, next: Record<string, StepRun | null>): Record<string, StepRun> {
  const out = { ...current };
  for (const [id, run] of Object.entries(next)) {
    if (run === null) delete out[id];
    else out[id] = run;
  }
  return out;
}
/** A finding's identity: a hook's write-back of the state must not append it twice. */
const findingKey = (f: QualityState["findings"][number]) =>
  `${f.planVersion}|${f.rule}|${f.stepId ?? ""}|${f.assumptionId ?? ""}|${f.message}`;

/** A watcher call's identity: two calls at one instant differ in what they found. */
const watchKey = (r: WatchRecord) =>
  `${r.assumptionId}|${r.stepId}|${r.at}|${r.planVersion}|${r.held}|${r.error?.message ?? ""}`;

/** Decisions are numbered as they land (`seq` 0 is new), so side-by-side calls never share a `seq`. */
const appendDecisions = (a: Decision[], b: Decision[]): Decision[] => {
  const fresh = b.filter((d) => d.seq === 0 || d.seq > a.length);
  return [...a, ...fresh.map((d, i) => ({ ...d, seq: a.length + i + 1 }))];
};

/**
 * What a step call charges to `budget.spent` (its attempts' costs). Side-by-side calls each send a
 * charge and all of them add up; a whole budget (a hook's write-back of the state) replaces it.
 */
export const BudgetChargeSchema = z.object({ charge: z.number().finite().min(0), maxCost: z.number().optional() });
export type BudgetCharge = z.infer<typeof BudgetChargeSchema>;

function chargeBudget(current: Budget | undefined, next: Budget | BudgetCharge): Budget {
  if (!("charge" in next)) return next;
  const base = current ?? { spent: 0, replanSpent: 0 };
  if (next.charge === 0 && next.maxCost === undefined) return base;
  const limit = next.maxCost === undefined ? {} : { maxCost: next.maxCost };
  return { ...base, spent: base.spent + next.charge, ...limit };
}

const HistorySchema = z.array(z.custom<PlanVersionEntry>((v) => typeof v === "object" && v !== null));

/** The agent's outcome: the graph's, whose summary is set only when it says more than the status. */
export const AgentOutcomeSchema = OutcomeSchema.extend({ summary: z.string().optional() });
export type AgentOutcome = z.infer<typeof AgentOutcomeSchema>;

/**
 * The state `planMiddleware` adds to a `createAgent` agent: the manager's keys (`plan`, `steps`, `facts`,
 * `decisions`, `replans`, `sideEffects`, `status`, …) beside the agent's messages.
 */
export const AgentPlanState = new StateSchema({
  goal: new ReducedValue(z.string().default(""), { reducer: lastWins<string> }),
  status: new ReducedValue(RunStatusSchema.default("planning"), { reducer: lastWins<RunStatus> }),
  plan: new ReducedValue(PlanSchema.optional(), { reducer: lastWins<Plan | undefined> }),
  planHistory: new ReducedValue(
    HistorySchema.default(() => []),
    { reducer: appendNew<PlanVersionEntry>((e) => String(e.version)) },
  ),
  steps: new ReducedValue(
    z.record(z.string(), StepRunSchema).default(() => ({})),
    {
      inputSchema: z.record(z.string(), StepRunSchema.nullable()).default(() => ({})),
      reducer: mergeSteps,
    },
  ),
  facts: new ReducedValue(
    z.record(z.string(), FactSchema).default(() => ({})),
    { reducer: merge<Fact> },
  ),
  decisions: new ReducedValue(
    z.array(DecisionSchema).default(() => []),
    { reducer: appendDecisions },
  ),
  replans: new ReducedValue(
    z.array(ReplanRecordSchema).default(() => []),
    {
      reducer: appendNew<ReplanRecord>((r) => `${r.fromVersion}>${r.toVersion}`),
    },
  ),
  sideEffects: new ReducedValue(
    z.array(SideEffectRecordSchema).default(() => []),
    {
      reducer: appendNew<SideEffectRecord>((e) => `${e.stepId}|${e.idempotencyKey}`),
    },
  ),
  compensations: new ReducedValue(
    // No default: an agent that abandons nothing stores nothing, as in the graph.
    z.array(CompensationRecordSchema).optional(),
    {
      // One record per compensation key: a later one (done after failed, say) replaces it in place.
      reducer: (a: CompensationRecord[] | undefined, b: CompensationRecord[] | undefined) => {
        const out = [...(a ?? [])];
        for (const c of b ?? []) {
          const i = out.findIndex((x) => x.compensationKey === c.compensationKey);
          if (i < 0) out.push(c);
          else out[i] = c;
        }
        return out;
      },
    },
  ),
  /** The plan quality gate's findings, every version's (docs/decisions/0040-plan-quality-gate.md). No default. */
  quality: new ReducedValue(QualityStateSchema.optional(), {
    reducer: (a: QualityState | undefined, b: QualityState | undefined) => {
      if (!b) return a;
      const held = new Set((a?.findings ?? []).map(findingKey));
      return { findings: [...(a?.findings ?? []), ...b.findings.filter((f) => !held.has(findingKey(f)))] };
    },
  }),
  /** Assumption watchers called before steps (docs/decisions/0041-evidence-freshness-and-drift.md). No default. */
  watches: new ReducedValue(z.array(WatchRecordSchema).optional(), {
    reducer: (a: WatchRecord[] | undefined, b: WatchRecord[] | undefined) =>
      b ? appendNew<WatchRecord>(watchKey)(a ?? [], b) : a,
  }),
  budget: new ReducedValue(
    BudgetSchema.default(() => ({ spent: 0, replanSpent: 0 })),
    {
      // Every invoke writes each key's input default: a zero charge, so a new message keeps what was spent.
      inputSchema: z.union([BudgetChargeSchema, BudgetSchema]).default(() => ({ charge: 0 })),
      reducer: chargeBudget,
    },
  ),
  /**
   * How the agent's plan ended: `quality` (docs/decisions/0040-plan-quality-gate.md), and a `summary` when it
   * completed degraded (the `finished` event has it always). No default.
   */
  outcome: new ReducedValue(AgentOutcomeSchema.optional(), { reducer: lastWins<AgentOutcome | undefined> }),
  planRun: new ReducedValue(
    PlanRunSchema.default(() => EMPTY_RUN),
    {
      inputSchema: PlanRunSchema.partial().default(() => ({})),
      reducer: mergeRun,
    },
  ),
});

/** The plan state as the middleware reads it. */
export interface AgentPlanValues {
  goal: string;
  status: RunStatus;
  plan?: Plan | undefined;
  planHistory: PlanVersionEntry[];
  steps: Record<string, StepRun>;
  facts: Record<string, Fact>;
  decisions: Decision[];
  replans: ReplanRecord[];
  sideEffects: SideEffectRecord[];
  /** Undos of committed effects a revision abandoned (docs/decisions/0043-effects-in-the-middleware.md). */
  compensations?: CompensationRecord[] | undefined;
  budget: Budget;
  outcome?: AgentOutcome | undefined;
  planRun: PlanRun;
  /** The quality gate's findings on the model's plan versions. */
  quality?: QualityState | undefined;
  /** Calls of assumption watchers. */
  watches?: WatchRecord[] | undefined;
}

/** An update the middleware writes (any subset of keys; `planRun` partially, `budget` as a charge). */
export type AgentPlanUpdate = Partial<Omit<AgentPlanValues, "planRun" | "steps" | "budget">> & {
  planRun?: PlanRunUpdate;
  steps?: Record<string, StepRun | null>;
  budget?: BudgetCharge;
};

/**
 * One step attempt, judged the same way wherever it runs — the graph's executor or the createAgent
 * middleware (docs/architecture.md, "The ladder"; docs/decisions/0033-one-attempt-function.md).
 * Pure: no LangGraph, no clock, no I/O; times and the committed effects come in as values.
 *
 * - `beforeAttempt`: the checks before a call (trusted inputs, preconditions, the budget, a
 *   committed operation) and the operation's key: call, reuse the committed output, or refuse.
 * - `attempt`: the call's result (or error) → the judged output, or a deviation and, when the
 *   caller hands in where the run stands, the ladder's verdict (`classify`, every rule of the table).
 * - `effectKey`: the one idempotency key of a side-effecting call
 *   (docs/decisions/0006-idempotency-keys-name-the-operation.md).
 */
import { operationKey, sideEffecting, stepKey } from "../../plan/operation.js";
import type { Plan } from "../../plan/schema/plan.js";
import type { CompensationRecord, ErrorInfo, Fact, SideEffectRecord, StepRun } from "../../plan/schema/run.js";
import type { ModelTier, Step } from "../../plan/schema/step.js";
import { activeAssumptionChecks, assumptionDeviation } from "../trust/assumptions.js";
import { classify, retriedOnUnmet, type ReplanStanding, type Verdict } from "../ladder/classify.js";
import { validationFailure, type ValidationOutcome } from "./agent-validation.js";
import { producerAssumptions, type Deviation } from "../ladder/deviation.js";
import type { ResolvedPolicy } from "../options.js";
import type { Decision } from "../ladder/decision.js";
import { coolingDown } from "../ladder/guards.js";
import { liveKey, undoneKeys } from "./redo-key.js";
import { checkFreshness } from "./freshness.js";
import {
  checkBudget,
  checkCommittedEffect,
  checkInputs,
  checkPreconditions,
  judgeOutput,
  preview,
  type CheckFailure,
  type EffectKey,
  type ReusedEffect,
} from "./checks.js";

export { sideEffecting };

/**
 * The idempotency key of a call of `step` (its tool or its fallback) with the resolved `args`:
 * `thread:<16 hex of sha-256 over tool, args and the step's operation label>`, and the key 0.x gave
 * the same call. Undefined for a step without side effects.
 */
export function effectKey(
  threadId: string,
  step: Step,
  tool: string,
  args: Readonly<Record<string, unknown>>,
): EffectKey | undefined {
  if (!sideEffecting(step)) return undefined;
  return { key: operationKey(threadId, tool, args, step.operation), legacy: stepKey(threadId, step.id, tool, args) };
}

export interface BeforeAttempt {
  step: Step;
  /** The step's record so far (undefined before its first attempt). */
  run: StepRun | undefined;
  threadId: string;
  /** The call about to be made: the step's tool or its fallback, with the resolved arguments. */
  tool: string;
  args: Readonly<Record<string, unknown>>;
  facts: Readonly<Record<string, Fact>>;
  trusted: Readonly<Record<string, unknown>>;
  /** What the run has spent, and what this attempt would be charged. */
  spent: number;
  charge: number;
  maxCost: number | undefined;
  /** Every committed side effect of the run. */
  committed: readonly SideEffectRecord[];
  /** The run's compensations: an effect undone (`done`) no longer stands, and its operation made again gets a fresh key. */
  compensations?: readonly CompensationRecord[] | undefined;
  steps: Readonly<Record<string, StepRun>>;
  /** The checkpoint shows this attempt running with no call in flight: it is called again, not charged again. */
  again?: boolean;
  /** The run's clock (ms): given, inputs older than the step's `freshFor` stop the call (freshness.ts). */
  now?: number;
}

export type Before =
  /** A check failed: the deviation for the ladder and the error for the record; nothing is called. */
  | { kind: "refused"; failure: CheckFailure }
  /** The same operation committed before: its output is this call's result; the tool is not called. */
  | ({ kind: "reuse"; key: string } & ReusedEffect)
  /**
   * Call the tool, under `key` when it has side effects. `operation`: the operation's key whether or
   * not it has side effects, for an agent step (it hands it to the tools its agent calls); undefined
   * for a step with neither, which needs no key (its digest was a measurable part of a step's cost).
   */
  | { kind: "call"; key: string | undefined; operation: string | undefined };

export function beforeAttempt(b: BeforeAttempt): Before {
  const { step } = b;
  // A call made again was fresh when it first started: its inputs are not judged twice.
  const stale = b.now === undefined || b.again ? undefined : checkFreshness(step, b.facts, b.now);
  const pre = checkInputs(step, b.facts, b.trusted) ?? stale ?? checkPreconditions(step, b.trusted);
  if (pre) return { kind: "refused", failure: pre };
  const undone = undoneKeys(b.compensations);
  const keys = liveKeys(effectKey(b.threadId, step, b.tool, b.args), undone);
  const committed = undone.size === 0 ? b.committed : b.committed.filter((e) => !undone.has(e.idempotencyKey));
  const known = checkCommittedEffect(step, keys, b.run, committed, b.steps, `${b.tool} ${preview(b.args)}`);
  // A committed operation's output is reused at no cost, so the budget does not stand in its way.
  if (known && "reuse" in known) return { kind: "reuse", key: known.reuse.idempotencyKey, ...known };
  if (known) return { kind: "refused", failure: known };
  const over = b.again ? undefined : checkBudget(step, b.spent, b.maxCost, b.charge);
  if (over) return { kind: "refused", failure: over };
  // An operation committed before outputs were kept is called again under its committed key.
  const key = keys && (committed.some((e) => e.idempotencyKey === keys.legacy) ? keys.legacy : keys.key);
  const operation =
    keys?.key ?? (step.agent === undefined ? undefined : operationKey(b.threadId, b.tool, b.args, step.operation));
  return { kind: "call", key, operation };
}

/** The keys an operation commits under now: past the undone ones (policy/attempt/redo-key.ts). */
function liveKeys(keys: EffectKey | undefined, undone: ReadonlySet<string>): EffectKey | undefined {
  if (!keys || undone.size === 0) return keys;
  return { key: liveKey(keys.key, undone), legacy: liveKey(keys.legacy, undone) };
}

/**
 * What one call gave back — the one outcome type of a call, on both faces and in the effect journal's
 * driver (runtime/run-attempt.ts). `timeout`: our deadline cut it; `cut`: its outcome is unknown (the
 * deadline, or the tool gave up waiting: `cutByTheTool`); `message`: how the failure is worded for the
 * record (default: the error's message); `text`: the tool message's own text (createAgent); `calls`:
 * how often the tool ran in this attempt (a retrying middleware below may call it more than once).
 */
export type CallOutcome = (
  | { ok: true; output: unknown; text?: string }
  | { ok: false; error: ErrorInfo; timeout?: boolean; cut?: boolean; message?: string }
) & { calls?: number };

/** Where the run stands, for the ladder's verdict on a deviation. */
export interface RunStanding {
  policy: ResolvedPolicy;
  replan: ReplanStanding;
  /** Ladder decisions already taken in the run. */
  decisionCount: number;
  tiers?: readonly ModelTier[];
  /** The run's decisions, so far: `retryOnUnmet` counts the step's unmet results in them (`retriedOnUnmet`). */
  decisions?: readonly Decision[];
}

export interface AttemptInput {
  step: Step;
  /** The step's record with this attempt counted. */
  run: StepRun;
  result: CallOutcome;
  plan: Plan;
  facts: Readonly<Record<string, Fact>>;
  trusted: Readonly<Record<string, unknown>>;
  /** For the assumption checks a success settles: the other steps' records and the assumptions already false. */
  steps?: Readonly<Record<string, StepRun>>;
  falsified?: readonly string[];
  /** An agent step's validation tool's outcome, checked once its answer passed (docs/decisions/0021-agent-steps.md). */
  validation?: ValidationOutcome;
  /** Given: a deviation also gets the ladder's verdict. */
  standing?: RunStanding;
}

export type Attempt =
  | {
      kind: "succeeded";
      output: unknown;
      values: Record<string, unknown>;
      /** The success proved an assumption false that steps not yet run rest on. */
      broken?: Deviation;
      verdict?: Verdict;
    }
  | {
      kind: "deviation";
      deviation: Deviation;
      error: ErrorInfo;
      /** What the tool returned, when it returned something storable. */
      output?: unknown;
      verdict?: Verdict;
    };

/**
 * An attempt's result judged: a failed call, an output that cannot be stored, misses its success
 * signal or a produced field, is a deviation; a success may still break an assumption. With the
 * run's standing, the deviation (or the broken assumption) gets the ladder's verdict.
 */
export function attempt(a: AttemptInput): Attempt {
  const judged = judge(a);
  const deviation = judged.kind === "deviation" ? judged.deviation : judged.broken;
  if (!deviation || !a.standing) return judged;
  return { ...judged, verdict: ladderVerdict(a.step, a.run, a.plan, a.facts, deviation, a.standing) };
}

/** The ladder's verdict on a deviation of `step`, where the run stands: the rule table's row that applies. */
export function ladderVerdict(
  step: Step,
  run: StepRun,
  plan: Plan,
  facts: Readonly<Record<string, Fact>>,
  deviation: Deviation,
  s: RunStanding,
): Verdict {
  return classify({
    deviation,
    step,
    run,
    policy: s.policy,
    replan: s.replan,
    decisionCount: s.decisionCount,
    producerAssumptions: producerAssumptions(plan, facts, deviation),
    ...(s.tiers ? { tiers: s.tiers } : {}),
    ...(s.decisions ? { unmetRetried: retriedOnUnmet(s.decisions, step.id, plan.version) } : {}),
  });
}

function judge(a: AttemptInput): Attempt {
  const { step, run, result } = a;
  const at = run.attempts;
  if (!result.ok) {
    const { error } = result;
    const message = result.message ?? error.message;
    const kind = result.timeout ? "timeout" : "error";
    return { kind: "deviation", deviation: { kind, stepId: step.id, attempt: at, message, error }, error };
  }
  const judged = judgeOutput(step, result.output, a.trusted);
  if (!judged.ok) {
    const deviation = { ...judged.deviation, stepId: step.id, attempt: at } as Deviation;
    return {
      kind: "deviation",
      deviation,
      error: judged.error,
      ...(judged.output !== undefined ? { output: judged.output } : {}),
    };
  }
  const invalid = validationFailure(step, a.validation, a.trusted);
  if (invalid) {
    const deviation = { ...invalid.deviation, stepId: step.id, attempt: at } as Deviation;
    return { kind: "deviation", deviation, error: invalid.error, output: judged.output };
  }
  const done = { kind: "succeeded" as const, output: judged.output, values: judged.values };
  if (!a.steps) return done;
  const after = { ...a.steps, [step.id]: { ...run, status: "succeeded" as const, output: judged.output } };
  const broken = activeAssumptionChecks(a.plan, after, a.falsified ?? [], { ...a.trusted, ...judged.values });
  const deviation = assumptionDeviation(broken, step.id, at);
  return deviation ? { ...done, broken: deviation } : done;
}

/** The decisions the `policy.maxDecisions` guard counts: `rate.limit` records are the dispatcher's bookkeeping. */
export function ladderDecisionCount(decisions: readonly { rule: string }[]): number {
  return decisions.filter((d) => d.rule !== "rate.limit").length;
}

/**
 * Where the run stands on replanning: how many replans (failed ones count), what they cost, the
 * assumptions still cooling down after a replan (`policy.replanCooldownSteps`) and the ones false.
 */
export function replanStanding(
  r: {
    available: boolean;
    count: number;
    spent: number;
    lastReplanAt: Readonly<Record<string, number>>;
    successes: number;
    falsified: readonly string[];
  },
  policy: Pick<ResolvedPolicy, "replanCooldownSteps">,
): ReplanStanding {
  return {
    available: r.available,
    count: r.count,
    spent: r.spent,
    coolingDown: coolingDown(r.lastReplanAt, r.successes, policy),
    falsified: r.falsified,
  };
}

/**
 * The decision for a committed operation handed back again: its output is reused and the tool is
 * not called. `tool` prefixes the reason where the caller names the tool (the graph does).
 */
export function reuseVerdict(stepId: string, committedBy: string, key: string, tool?: string) {
  const by = committedBy === stepId ? "this step" : `step "${committedBy}"`;
  const reason = `the same operation was committed by ${by} under key ${key}; its output is reused and the tool is not called again`;
  return { rule: "effect.reused", failureClass: "none", reason: tool ? `${tool}: ${reason}` : reason } as const;
}

/** The decision for an identical call that already failed for good: it is held, not run again. */
export function repeatVerdict(stepId: string, tool: string, args: unknown, error: string | undefined) {
  const reason =
    `the identical call ${tool} ${JSON.stringify(args)} already failed for step "${stepId}" ` +
    `(${error ?? "failed"}); it was not run again`;
  return { rule: "guard.no-progress", reason } as const;
}

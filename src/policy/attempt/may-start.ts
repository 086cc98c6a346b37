/**
 * "May this step start?", answered in one place for both faces (docs/architecture.md "Parallel steps";
 * docs/decisions/0069-one-start-verdict-for-both-faces.md): `mayStart`, one pure verdict the graph's
 * dispatcher and the createAgent middleware's routing both ask. Its clauses, each with a rule id
 * (`START_RULES`): a hold; the step's readiness (an assumption found false, a failed step, dependencies
 * and `when`); then the dispatcher's capacity (slots, shared resources, tool limits), which only the
 * graph has. Also here: the per-tool concurrency limits that rate limits lower and successes raise
 * again (AIMD), and the order queued deviations reach the ladder. The checks on the call itself
 * (trusted inputs, freshness, preconditions, a committed operation, the budget) are `beforeAttempt`'s
 * (attempt.ts), which the one attempt driver asks on both faces. No LangGraph, no clock, no I/O.
 */
import { selectReady } from "../../plan/ready.js";
import type { Plan } from "../../plan/schema/plan.js";
import type { ErrorInfo, StepRun } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import type { Deviation } from "../ladder/deviation.js";
import type { CheckFailure } from "./checks.js";

/** Every clause of the start verdict by its rule id, in the order they are checked, with when it refuses. */
export const START_RULES = {
  "start.held": "nothing new may start: a deviation waits for the ladder, or a scope change to be planned for",
  "start.false-assumption":
    "the step rests on an assumption found false, and no person allowed it another round at an escalation",
  "start.failed": "the step failed and its ladder has not made it ready again",
  "start.not-ready": "its dependencies have not succeeded, or its `when` does not hold yet",
  "start.no-slot": "every one of policy.maxConcurrency slots is in use",
  "start.resource-busy": "an earlier step naming the same `sideEffects` entry has not finished",
  "start.tool-limit": "its tool already runs as many calls as a rate limit lowered its concurrency to",
} as const;

/** The rule id of a start clause. */
export type StartRule = keyof typeof START_RULES;

/**
 * Whether a step may start, and if not, which clause refused it. `reason` is the sentence a caller is
 * told; a refusal for a false assumption names it (`assumptionId`), which the graph hands its ladder.
 */
export type StartVerdict =
  | { ok: true }
  | { ok: false; rule: "start.false-assumption"; reason: string; assumptionId: string }
  | { ok: false; rule: Exclude<StartRule, "start.false-assumption">; reason: string };

/** A refusal of the start verdict. */
export type StartRefusal = Extract<StartVerdict, { ok: false }>;

/** A tool call in flight: which step, on which tool, holding which resources. */
export interface RunningCall {
  stepId: string;
  tool: string;
}

/**
 * The graph's dispatcher: its calls in flight, its slots and tool limits, and a hold. Inside createAgent
 * the model's turn decides what is called together, so the middleware asks without one.
 */
export interface DispatchStanding {
  running: readonly RunningCall[];
  maxConcurrency: number;
  /** Per-tool concurrency lowered by rate limits; a tool not listed may use every slot. */
  toolLimits: Readonly<Record<string, number>>;
  /** Why nothing new may start at all (a deviation waiting, a scope change), if so. */
  hold?: string;
}

/** Where the run stands for the start verdict (`readinessOf` builds all but `dispatch`). */
export interface StartStanding {
  plan: Plan;
  steps: Readonly<Record<string, StepRun>>;
  /** The steps whose dependencies and `when` allow them to start (plan/ready.ts `selectReady`). */
  ready: ReadonlySet<string>;
  /** The assumptions found false. */
  falsified: readonly string[];
  /** The graph's dispatcher; absent inside createAgent. */
  dispatch?: DispatchStanding;
}

/** @deprecated the dispatcher's part of the standing: use `StartStanding` with `dispatch`. */
export type StartContext = Pick<StartStanding, "plan" | "steps"> & DispatchStanding;
/** @deprecated use `StartStanding`. */
export type Readiness = StartStanding;
/** @deprecated use `StartVerdict`. */
export type ReadyVerdict = StartVerdict;

/** The standing of a plan's steps over trusted `values`, without a dispatcher. */
export function readinessOf(
  plan: Plan,
  steps: Readonly<Record<string, StepRun>>,
  values: Readonly<Record<string, unknown>>,
  falsified: readonly string[],
): StartStanding {
  const readiness = selectReady(plan, steps, values);
  const ready = new Set(readiness.kind === "ready" ? readiness.steps.map((s) => s.id) : []);
  return { plan, steps, ready, falsified };
}

/**
 * May `step` (calling `tool`, when the dispatcher limits tools) start now? The one gate of both faces: a
 * new start condition (an operator's stop, a quota) is one more clause here, with its rule id. A hold
 * comes first: the answer it waits for may change the step itself (a replan replaces it).
 */
export function mayStart(step: Step, s: StartStanding, tool?: string): StartVerdict {
  const hold = s.dispatch?.hold;
  if (hold !== undefined) return { ok: false, rule: "start.held", reason: hold };
  return readinessRefusal(step, s) ?? (s.dispatch ? dispatchRefusal(step, s, s.dispatch, tool) : undefined) ?? OK;
}

/** @deprecated `mayStart` without a dispatcher: the readiness clauses only. */
export function readyToStart(step: Step, s: StartStanding): StartVerdict {
  return mayStart(step, { ...s, dispatch: undefined });
}

const OK: StartVerdict = { ok: true };

/**
 * Not while it rests on an assumption found false (unless a person allowed it another round at an
 * escalation: that outranks the assumption, for this step), nor before its dependencies and `when`
 * make it ready. A failed step is refused with its error.
 */
function readinessRefusal(step: Step, s: StartStanding): StartRefusal | undefined {
  const run = s.steps[step.id];
  const allowed = run?.status === "pending" && run.retryBase !== undefined;
  const assumptionId = allowed ? undefined : (step.assumptions ?? []).find((a) => s.falsified.includes(a));
  if (assumptionId !== undefined) {
    const reason = `step "${step.id}" rests on assumption "${assumptionId}", which is false`;
    return { ok: false, rule: "start.false-assumption", reason, assumptionId };
  }
  if (s.ready.has(step.id)) return undefined;
  if (run?.status === "failed")
    return {
      ok: false,
      rule: "start.failed",
      reason: `step "${step.id}" failed (${run.error?.message ?? "no result"})`,
    };
  const waiting = (step.dependsOn ?? []).filter((d) => s.steps[d]?.status !== "succeeded");
  const reason = `step "${step.id}" is not ready: it waits for ${waiting.join(", ") || "its inputs"}`;
  return { ok: false, rule: "start.not-ready", reason };
}

/** The dispatcher's capacity: a free slot, the step's shared resources, its tool's limit. */
function dispatchRefusal(
  step: Step,
  s: StartStanding,
  d: DispatchStanding,
  tool: string | undefined,
): StartRefusal | undefined {
  if (d.running.length >= d.maxConcurrency)
    return { ok: false, rule: "start.no-slot", reason: `${d.running.length} of ${d.maxConcurrency} slots in use` };
  const blocker = resourceBlocker(step, s.plan, s.steps, d.running);
  if (blocker) return { ok: false, rule: "start.resource-busy", reason: blocker };
  if (tool === undefined) return undefined;
  const limit = limitOf(d.toolLimits, tool);
  const calls = d.running.filter((r) => r.tool === tool).length;
  if (limit !== undefined && calls >= limit)
    return { ok: false, rule: "start.tool-limit", reason: `${tool} is limited to ${limit} at a time` };
  return undefined;
}

/** The error a step refused for a false assumption records; the graph hands its deviation to the ladder. */
export const FALSE_ASSUMPTION = "FalseAssumption";

/** A refusal for a false assumption, as a check's failure: the step's error and the deviation for its ladder. */
export function falseAssumptionFailure(
  refusal: Extract<StartRefusal, { rule: "start.false-assumption" }>,
): CheckFailure {
  const { reason: message, assumptionId } = refusal;
  return {
    error: { name: FALSE_ASSUMPTION, message, assumptionId },
    deviation: { kind: "assumption_broken", assumptionId, message },
  };
}

/**
 * Steps naming the same `sideEffects` entry never overlap and start in plan order: an earlier
 * step on a shared resource that has not finished (running, pending, or waiting for a retry)
 * holds this one back, unless the earlier one itself depends on this one.
 */
function resourceBlocker(
  step: Step,
  plan: Plan,
  steps: Readonly<Record<string, StepRun>>,
  running: readonly RunningCall[],
): string | undefined {
  const mine = new Set(step.sideEffects ?? []);
  if (mine.size === 0) return undefined;
  const shares = (s: Step) => (s.sideEffects ?? []).some((r) => mine.has(r));
  const byId = new Map(plan.steps.map((s) => [s.id, s]));
  for (const call of running) {
    const other = byId.get(call.stepId);
    if (other && other.id !== step.id && shares(other)) return `"${other.id}" holds ${shared(step, other)}`;
  }
  for (const other of plan.steps) {
    if (other.id === step.id) break;
    if (!shares(other) || settled(steps[other.id]) || dependsOn(other, step.id, byId)) continue;
    return `"${other.id}" comes first on ${shared(step, other)}`;
  }
  return undefined;
}

function settled(run: StepRun | undefined): boolean {
  return run !== undefined && run.status !== "pending" && run.status !== "running";
}

function shared(a: Step, b: Step): string {
  return (a.sideEffects ?? []).filter((r) => (b.sideEffects ?? []).includes(r)).join(", ");
}

/** Whether `step` depends on `target`, directly or transitively. */
function dependsOn(step: Step, target: string, byId: ReadonlyMap<string, Step>): boolean {
  const seen = new Set<string>();
  const stack = [...(step.dependsOn ?? [])];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (id === target) return true;
    if (seen.has(id)) continue;
    seen.add(id);
    stack.push(...(byId.get(id)?.dependsOn ?? []));
  }
  return false;
}

/** A tool's own limit: a tool named like an Object.prototype member must not read the prototype's. */
function limitOf(limits: Readonly<Record<string, number>>, tool: string): number | undefined {
  return Object.hasOwn(limits, tool) ? limits[tool] : undefined;
}

/** A change of one tool's concurrency limit, recorded as a decision with rule `rate.limit`. */
export interface LimitChange {
  tool: string;
  from: number;
  to: number;
  why: string;
}

/** The per-tool limits after a rate-limit signal or a success, and the change made. */
export interface LimitUpdate {
  limits: Record<string, number>;
  change?: LimitChange;
}

/** A rate limit: HTTP 429, or a transient error that says when to come back. */
export function isRateLimit(error: ErrorInfo | undefined): boolean {
  if (!error) return false;
  return error.status === 429 || (error.name === "TransientError" && error.retryAfterMs !== undefined);
}

/**
 * Multiplicative decrease: the tool's concurrency (the calls it had running when it answered,
 * this one included, at most its limit) is halved, at least 1. With one call running there is
 * nothing to halve, so a rate limit on a lone call changes nothing.
 */
export function lowerLimit(
  limits: Readonly<Record<string, number>>,
  tool: string,
  callsRunning: number,
  maxConcurrency: number,
): LimitUpdate {
  const from = limitOf(limits, tool) ?? maxConcurrency;
  if (callsRunning < 2) return { limits: { ...limits } };
  const to = Math.max(1, Math.floor(Math.min(from, callsRunning) / 2));
  if (to >= from) return { limits: { ...limits } };
  const why = `rate limited with ${callsRunning} call${callsRunning === 1 ? "" : "s"} running`;
  return { limits: { ...limits, [tool]: to }, change: { tool, from, to, why } };
}

/** Additive increase: each success gives a lowered tool one slot back, up to `maxConcurrency`. */
export function raiseLimit(
  limits: Readonly<Record<string, number>>,
  tool: string,
  maxConcurrency: number,
): LimitUpdate {
  const from = limitOf(limits, tool);
  if (from === undefined || from >= maxConcurrency) return { limits: { ...limits } };
  const to = from + 1;
  const rest = Object.fromEntries(Object.entries(limits).filter(([t]) => t !== tool));
  return {
    limits: to >= maxConcurrency ? rest : { ...rest, [tool]: to },
    change: { tool, from, to, why: "a call succeeded" },
  };
}

/**
 * The next queued deviation still worth classifying, and the queue after it. A deviation goes
 * stale when an earlier one's answer already dealt with it: its step was replaced or run again,
 * or its assumptions were found false meanwhile — except for a step refused at start for resting
 * on one (`falseAssumptionFailure`): that step still waits for its own answer.
 */
export function nextQueued(
  queue: readonly Deviation[],
  plan: Plan,
  steps: Readonly<Record<string, StepRun>>,
  falsified: readonly string[],
): { deviation?: Deviation; rest: Deviation[] } {
  for (let i = 0; i < queue.length; i++) {
    const d = queue[i]!;
    if (!isStale(d, plan, steps, falsified)) return { deviation: d, rest: queue.slice(i + 1) };
  }
  return { rest: [] };
}

function isStale(d: Deviation, plan: Plan, steps: Readonly<Record<string, StepRun>>, falsified: readonly string[]) {
  if (d.kind === "assumption_broken" && !refusedAtStart(d, steps)) {
    const ids = d.assumptionIds ?? (d.assumptionId ? [d.assumptionId] : []);
    return ids.length > 0 && ids.every((id) => falsified.includes(id));
  }
  if (d.stepId === undefined) return false;
  const run = steps[d.stepId];
  return !plan.steps.some((s) => s.id === d.stepId) || run?.status !== "failed" || run.attempts !== d.attempt;
}

function refusedAtStart(d: Deviation, steps: Readonly<Record<string, StepRun>>): boolean {
  return d.stepId !== undefined && steps[d.stepId]?.error?.name === FALSE_ASSUMPTION;
}

/** `rate.limit` records a tool's concurrency changing: bookkeeping, neither a ladder decision nor a failure of the run. */
export function isConcurrencyRecord(decision: { rule: string }): boolean {
  return decision.rule === "rate.limit";
}

/** The record of a tool's concurrency changing (rule `rate.limit`): transient when a rate limit lowered it. */
export function limitVerdict(change: LimitChange, rateLimited: boolean) {
  const { tool, from, to, why } = change;
  return {
    rule: "rate.limit",
    failureClass: rateLimited ? "transient" : "none",
    reason: `${tool} may run ${to} call${to === 1 ? "" : "s"} at a time (was ${from}): ${why}`,
  } as const;
}

/**
 * "May this step start?", as pure functions (docs/architecture.md "Parallel steps";
 * docs/decisions/0064-one-start-verdict.md): its readiness (`readyToStart`: dependencies, `when`, an
 * assumption found false, a failed step — the middleware's routing and the unit table ask it), whether
 * one more step may start now (`mayStart`: a hold, slots, shared resources, tool limits — the graph's
 * dispatcher asks it), and the per-tool concurrency limits that rate limits lower and successes raise
 * again (AIMD). The checks on the call itself (trusted inputs, freshness, preconditions, a committed
 * operation, the budget) are `beforeAttempt`'s (attempt.ts), which the one attempt driver asks on both faces.
 * No LangGraph, no clock, no I/O.
 */
import { selectReady } from "../../plan/ready.js";
import type { Plan } from "../../plan/schema/plan.js";
import type { ErrorInfo, StepRun } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import type { Deviation } from "../ladder/deviation.js";

/** A tool call in flight: which step, on which tool, holding which resources. */
export interface RunningCall {
  stepId: string;
  tool: string;
}

/** Everything the start decision reads. */
export interface StartContext {
  plan: Plan;
  steps: Readonly<Record<string, StepRun>>;
  running: readonly RunningCall[];
  maxConcurrency: number;
  /** Per-tool concurrency lowered by rate limits; a tool not listed may use every slot. */
  toolLimits: Readonly<Record<string, number>>;
  /** Why nothing new may start at all (a deviation waiting, a scope change), if so. */
  hold?: string;
}

/** Whether a ready step may start now, and if not, why. */
export type StartVerdict =
  { start: true } | { start: false; reason: "hold" | "slots" | "resource" | "tool_limit"; detail: string };

/**
 * May `step` (calling `tool`) start now? The single gate of the dispatcher: a new condition
 * (an operator's stop, a quota) is one more clause here.
 */
export function mayStart(step: Step, tool: string | undefined, ctx: StartContext): StartVerdict {
  if (ctx.hold !== undefined) return { start: false, reason: "hold", detail: ctx.hold };
  if (ctx.running.length >= ctx.maxConcurrency)
    return { start: false, reason: "slots", detail: `${ctx.running.length} of ${ctx.maxConcurrency} slots in use` };
  const blocker = resourceBlocker(step, ctx);
  if (blocker) return { start: false, reason: "resource", detail: blocker };
  if (tool !== undefined) {
    const limit = limitOf(ctx.toolLimits, tool);
    const calls = ctx.running.filter((r) => r.tool === tool).length;
    if (limit !== undefined && calls >= limit)
      return { start: false, reason: "tool_limit", detail: `${tool} is limited to ${limit} at a time` };
  }
  return { start: true };
}

/** Where the run stands for a step's readiness: the records, the ready steps, the assumptions found false. */
export interface Readiness {
  steps: Readonly<Record<string, StepRun>>;
  /** The steps whose dependencies and `when` allow them to start (plan/ready.ts `selectReady`). */
  ready: ReadonlySet<string>;
  falsified: readonly string[];
}

/** Why a step may not start for want of readiness; `rule` names the clause, `reason` is what the caller is told. */
export type ReadyVerdict =
  { ok: true } | { ok: false; rule: "start.false-assumption" | "start.failed" | "start.not-ready"; reason: string };

/** The readiness of a plan's steps over trusted `values`: the ready set `readyToStart` reads. */
export function readinessOf(
  plan: Plan,
  steps: Readonly<Record<string, StepRun>>,
  values: Readonly<Record<string, unknown>>,
  falsified: readonly string[],
): Readiness {
  const readiness = selectReady(plan, steps, values);
  const ready = new Set(readiness.kind === "ready" ? readiness.steps.map((s) => s.id) : []);
  return { steps, ready, falsified };
}

/**
 * May `step` start, as far as its readiness goes? Not while it rests on an assumption found false
 * (unless a person allowed it another round at an escalation: that outranks the assumption, for
 * this step), nor before its dependencies and `when` make it ready. A failed step is refused with
 * its error. The reasons are the words the model reads inside createAgent.
 */
export function readyToStart(step: Step, r: Readiness): ReadyVerdict {
  const revise = "revise the plan with write_plan";
  const run = r.steps[step.id];
  const allowed = run?.status === "pending" && run.retryBase !== undefined;
  const falseAssumption = allowed ? undefined : (step.assumptions ?? []).find((a) => r.falsified.includes(a));
  if (falseAssumption !== undefined) {
    const reason = `step "${step.id}" rests on assumption "${falseAssumption}", which is false: ${revise}`;
    return { ok: false, rule: "start.false-assumption", reason };
  }
  if (r.ready.has(step.id)) return { ok: true };
  if (run?.status === "failed")
    return {
      ok: false,
      rule: "start.failed",
      reason: `step "${step.id}" failed (${run.error?.message ?? "no result"}): ${revise}`,
    };
  const waiting = (step.dependsOn ?? []).filter((d) => r.steps[d]?.status !== "succeeded");
  const reason = `step "${step.id}" is not ready: it waits for ${waiting.join(", ") || "its inputs"}`;
  return { ok: false, rule: "start.not-ready", reason };
}

/**
 * Steps naming the same `sideEffects` entry never overlap and start in plan order: an earlier
 * step on a shared resource that has not finished (running, pending, or waiting for a retry)
 * holds this one back, unless the earlier one itself depends on this one.
 */
function resourceBlocker(step: Step, ctx: StartContext): string | undefined {
  const mine = new Set(step.sideEffects ?? []);
  if (mine.size === 0) return undefined;
  const shares = (s: Step) => (s.sideEffects ?? []).some((r) => mine.has(r));
  const byId = new Map(ctx.plan.steps.map((s) => [s.id, s]));
  for (const call of ctx.running) {
    const other = byId.get(call.stepId);
    if (other && other.id !== step.id && shares(other)) return `"${other.id}" holds ${shared(step, other)}`;
  }
  for (const other of ctx.plan.steps) {
    if (other.id === step.id) break;
    if (!shares(other) || settled(ctx.steps[other.id]) || dependsOn(other, step.id, byId)) continue;
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
 * or its assumptions were found false meanwhile.
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
  if (d.kind === "assumption_broken") {
    const ids = d.assumptionIds ?? (d.assumptionId ? [d.assumptionId] : []);
    return ids.length > 0 && ids.every((id) => falsified.includes(id));
  }
  if (d.stepId === undefined) return false;
  const run = steps[d.stepId];
  return !plan.steps.some((s) => s.id === d.stepId) || run?.status !== "failed" || run.attempts !== d.attempt;
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

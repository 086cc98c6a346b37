/**
 * One executor visit's working copy of the state and the update it builds: step records, facts,
 * committed side effects, budget, queued deviations and tool limits. Every attempt that ends (or
 * is refused before its tool runs) is written here once, with one `step_finished` event, sent once
 * the visit's checkpoint is written (docs/decisions/0028-a-stopped-run-keeps-its-results.md).
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { UsageEntry } from "../../contracts/usage.js";
import type { Runtime } from "../../runtime/options.js";
import type { DispatchState, PlanManagerStateType, PlanManagerUpdate } from "../../runtime/state.js";
import { makeFacts, trustedValues } from "../../plan/facts.js";
import { overlay } from "../../plan/overlay.js";
import type { Plan } from "../../plan/schema/plan.js";
import type { Fact, SideEffectRecord, StepRun, WatchRecord } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import type { Decision } from "../../policy/ladder/decision.js";
import type { Deviation } from "../../policy/ladder/deviation.js";
import type { CheckFailure } from "../../policy/attempt/checks.js";
import { activeAssumptionChecks, assumptionDeviation } from "../../policy/trust/assumptions.js";
import { isRateLimit, limitVerdict, lowerLimit, raiseLimit, type LimitUpdate } from "../../policy/attempt/may-start.js";
import { emit, emitOnceDurable, type PlanEvent } from "../../runtime/events.js";
import { builtWrite } from "../../runtime/checked-channel.js";
import { decide } from "../../policy/ladder/decide.js";

export class Visit {
  readonly plan: Plan;
  readonly steps: Record<string, StepRun>;
  readonly trusted: Record<string, unknown>;
  readonly changed: Record<string, StepRun> = {};
  readonly facts: Record<string, Fact> = {};
  readonly effects: SideEffectRecord[] = [];
  readonly decisions: Decision[] = [];
  /** Watcher calls made in this visit; `watched`: the assumptions watched for the steps about to start. */
  readonly watches: WatchRecord[] = [];
  readonly watched = new Set<string>();
  /** Model calls made by agent steps whose attempts ended in this visit. */
  readonly usage: UsageEntry[] = [];
  readonly dispatch: DispatchState;
  spent: number;
  successes: number;
  /** When the last attempt this visit recorded ended (`state.progress.lastProgressAt`). */
  progressAt: string | undefined;
  /**
   * The visit is recording attempts that ended: its events from then on wait for its checkpoint with
   * them, so that a step started eagerly is not reported before the step it depends on has finished.
   */
  settling = false;

  constructor(
    readonly rt: Runtime,
    readonly state: PlanManagerStateType,
    readonly config: LangGraphRunnableConfig,
  ) {
    this.plan = state.plan!;
    // Views, not copies: a visit costs what it changes, however many steps ran before.
    this.steps = overlay(state.steps, {});
    this.trusted = overlay(trustedValues(state.facts), {});
    this.dispatch = { queue: [...state.dispatch.queue], limits: { ...state.dispatch.limits } };
    this.spent = state.budget.spent;
    this.successes = state.guards.successes;
  }

  now(): string {
    const ms = this.rt.clock.now();
    // A visit asks the time several times a step, mostly within one millisecond: formatted once per value.
    if (ms !== this.nowMs) this.nowIso = new Date((this.nowMs = ms)).toISOString();
    return this.nowIso;
  }

  private nowMs = Number.NaN;
  private nowIso = "";

  /** Sends an event of this visit: `step_finished`, and every event once settling, waits for the visit's checkpoint. */
  send(event: PlanEvent): void {
    if (this.settling || event.type === "step_finished") emitOnceDurable(this.config, event);
    else emit(this.config, event);
  }

  write(stepId: string, run: StepRun): void {
    this.steps[stepId] = this.changed[stepId] = run;
  }

  skip(step: Step, reason: NonNullable<StepRun["skipReason"]>, note: string): void {
    const run: StepRun = { ...(this.steps[step.id] ?? { attempts: 0 }), status: "skipped", skipReason: reason };
    this.write(step.id, run);
    const event = { stepId: step.id, goal: step.goal, attempt: run.attempts, note };
    this.send({ type: "step_finished", status: "skipped", ...event });
  }

  /** A failed or refused attempt: its record, its event, and its deviation queued in the order it happened. */
  fail(step: Step, failure: CheckFailure, run: StepRun): void {
    const record: StepRun = { ...run, status: "failed", error: failure.error };
    this.write(step.id, record);
    const note = failure.error.message;
    this.send({
      type: "step_finished",
      stepId: step.id,
      goal: step.goal,
      status: "failed",
      attempt: record.attempts,
      note,
    });
    this.dispatch.queue.push({ ...failure.deviation, stepId: step.id, attempt: record.attempts });
  }

  succeed(step: Step, run: StepRun, values: Record<string, unknown>, key: string | undefined): void {
    this.write(step.id, run);
    const provenance = {
      producedBy: step.id,
      planVersion: this.plan.version,
      assumptions: step.assumptions ?? [],
      derivedFrom: step.inputs ?? [],
      observedAt: run.endedAt ?? this.now(),
    };
    Object.assign(this.facts, makeFacts(values, provenance));
    Object.assign(this.trusted, values);
    this.successes += 1;
    this.send({
      type: "step_finished",
      stepId: step.id,
      goal: step.goal,
      status: "succeeded",
      attempt: run.attempts,
      ...(key ? { key } : {}),
    });
    // Each committed key is listed once, with the output a later step of the same operation reuses.
    const listed = (e: SideEffectRecord) => e.idempotencyKey === key;
    if (key && !this.state.sideEffects.some(listed) && !this.effects.some(listed))
      this.effects.push({
        stepId: step.id,
        idempotencyKey: key,
        at: run.endedAt!,
        ...(run.output !== undefined ? { output: run.output } : {}),
      });
    // New evidence: re-check the assumptions that steps not yet run still rest on.
    const broken = activeAssumptionChecks(this.plan, this.steps, this.state.guards.falsified, this.trusted);
    const deviation = assumptionDeviation(broken, step.id, run.attempts);
    if (deviation && !this.queued(deviation)) this.dispatch.queue.push(deviation);
  }

  /**
   * Why no new step may start now (a queued deviation, a scope change), if so. A ready human step
   * is not a reason: independent work runs before the person is asked (executor `startReady`).
   */
  holdReason(): string | undefined {
    if (this.dispatch.queue.length > 0) return "a deviation waits for the classifier";
    if (this.state.scopeChanges.length > 0) return "a scope change waits to be planned for";
    return undefined;
  }

  private queued(d: Deviation): boolean {
    return this.dispatch.queue.some((q) => q.kind === d.kind && checkedAssumption(q) === checkedAssumption(d));
  }

  /** AIMD on the tool's concurrency after an attempt ended; every change is a `rate.limit` decision. */
  adjustLimit(step: Step, attempt: number, tool: string, failed: Deviation["error"] | null, callsAtEnd: number) {
    const max = this.rt.policy.maxConcurrency;
    let update: LimitUpdate | undefined;
    if (failed === null) update = raiseLimit(this.dispatch.limits, tool, max);
    else if (isRateLimit(failed)) update = lowerLimit(this.dispatch.limits, tool, callsAtEnd, max);
    if (!update?.change) return;
    this.dispatch.limits = update.limits;
    const verdict = limitVerdict(update.change, failed !== null);
    const decision = decide(verdict.rule, {
      after: this.state.decisions.length + this.decisions.length,
      stepId: step.id,
      attempt,
      failureClass: verdict.failureClass,
      reason: verdict.reason,
      planVersion: this.plan.version,
      at: this.now(),
    });
    this.decisions.push(decision);
    this.send({ type: "decision", decision });
  }

  /** The update: only the channels that changed (every written channel costs work at each superstep). */
  update(): PlanManagerUpdate {
    const { state } = this;
    const out: PlanManagerUpdate = {};
    // Built from checked records, the plan and the clock: taken without a second parse (runtime/checked-channel.ts).
    if (Object.keys(this.changed).length > 0) out.steps = builtWrite(this.changed);
    if (Object.keys(this.facts).length > 0) out.facts = this.facts;
    if (this.effects.length > 0) out.sideEffects = this.effects;
    if (this.decisions.length > 0) out.decisions = this.decisions;
    if (this.watches.length > 0) out.watches = this.watches;
    if (this.usage.length > 0) out.usage = this.usage;
    if (this.spent !== state.budget.spent) out.budget = { ...state.budget, spent: this.spent };
    if (this.successes !== state.guards.successes)
      out.guards = builtWrite({ ...state.guards, successes: this.successes });
    const d = this.dispatch;
    const was = state.dispatch;
    const same = d.queue.length === was.queue.length && d.queue.every((q, i) => q === was.queue[i]);
    if (!same || !sameLimits(d.limits, was.limits)) out.dispatch = d;
    if (this.progressAt) out.progress = builtWrite({ lastProgressAt: this.progressAt });
    if (state.status !== "running") out.status = "running";
    return out;
  }
}

function sameLimits(a: Record<string, number>, b: Record<string, number>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/** The assumption an assumption check found false (other kinds name none). */
function checkedAssumption(d: Deviation): string | undefined {
  return d.kind === "assumption_broken" ? d.assumptionId : undefined;
}

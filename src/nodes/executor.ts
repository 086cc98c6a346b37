/**
 * The executor (docs/architecture.md "The graph", "Parallel steps"): starts every ready step `mayStart` allows,
 * returns once one
 * attempt has ended (the checkpoint after the visit makes it durable; its siblings keep running
 * and the next visit picks them up). Failures are queued; the classifier takes them one at a
 * time, in the order they happened, once no step runs.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../runtime/options.js";
import type { PlanManagerStateType, PlanManagerUpdate } from "../runtime/state.js";
import type { Step } from "../plan/schema/step.js";
import { projectBudget } from "../policy/ladder/budget.js";
import { nextQueued } from "../policy/attempt/may-start.js";
import { dispatcherOf, type Dispatcher, type Flight } from "../runtime/dispatch.js";
import { runControlOf, takeAtBoundary } from "../runtime/run-control.js";
import { pick, recordEnd } from "./executor/start-attempt.js";
import { startReady, type Next } from "./executor/start-ready.js";
import { humanStepPayload } from "../runtime/interrupts.js";
import { Visit } from "./executor/visit.js";
import { compensateNext } from "./shared/compensate-next.js";
import { blockedRun } from "./executor/blocked.js";
import { offerExternal } from "./executor/offer-external.js";
import { watchReadySteps } from "./executor/watch-ready.js";

export function makeExecutor(rt: Runtime) {
  return async function executor(
    state: PlanManagerStateType,
    config: LangGraphRunnableConfig,
  ): Promise<PlanManagerUpdate> {
    if (!state.plan) return { deviation: null };
    const flights = dispatcherOf(config);
    // A driver's stop or pause (runtime/run-control.ts) comes first, once no call is in flight.
    const control = runControlOf(config);
    const wanted = control?.wanted();
    if (wanted && flights.size === 0) return takeAtBoundary(wanted);
    // What a replan or the run's end abandoned is undone before any step starts, one per visit so each
    // is checkpointed (docs/decisions/0039-compensation.md). An ending run starts nothing.
    const ending = state.status === "aborted" || state.status === "failed" ? state.status : undefined;
    if (flights.size === 0 && !wanted) {
      const undone = await compensateNext(rt, state, config, ending);
      // The deviation a person answered is settled: routing must not hand it to the classifier again.
      if (undone || ending) return { ...undone, ...(state.deviation ? { deviation: null } : {}) };
    }
    const v = new Visit(rt, state, config);
    if (flights.size === 0 && (v.dispatch.queue.length > 0 || state.scopeChanges.length > 0)) {
      const queued = withQueued(v);
      if (queued.deviation) return queued;
      if (state.scopeChanges.length > 0) {
        const message = `scope change requested: ${state.scopeChanges.join("; ")}`;
        return { ...queued, deviation: { kind: "scope_change", attempt: 0, message }, status: "running" };
      }
    }
    const over = flights.size === 0 && v.dispatch.queue.length === 0 ? planOverBudget(v) : undefined;
    if (over) return { ...v.update(), deviation: over, status: "running" };
    // Something wanted, or the run stopped by its caller: start nothing, and wait for every call in
    // flight (the boundary comes next visit).
    // Watchers of the assumptions the ready steps rest on are called before any of them starts.
    if (!wanted && !flights.stopped) await watchReadySteps(v);
    // A stop asked while a watcher ran is taken as one asked before it: nothing starts (asked again, from memory).
    const asked = wanted ?? (v.watches.length > 0 ? control?.wanted() : undefined);
    let next: Next = asked || flights.stopped ? { kind: "go" } : startReady(v, flights);
    // The watches served the steps started just now: a step made ready later in this visit waits for its own.
    v.watched.clear();
    if (flights.size > 0) {
      const drain = wanted !== undefined || !flights.shared;
      const ended = await flights.takeFinished(drain);
      // What this visit records from here on is sent once its checkpoint is written.
      v.settling = true;
      for (const flight of ended) if (kept(flight)) recordEnd(v, flight);
      // Eager: what those attempts made ready starts now, not one checkpoint later — unless this
      // visit must drain its calls (no call may outlive it: the next visit starts them).
      if (!flights.stopped && !drain && !control?.wanted()) next = startReady(v, flights);
    }
    if (flights.size > 0 || v.dispatch.queue.length > 0) return withQueued(v, flights);
    if (next.kind === "go" && next.human?.human) return humanStep(v, next.human);
    // Every ready external step, and those offered before and not answered, in one question.
    const offered = await offerExternal(v, flights, next);
    if (offered.kind === "ask") return offered.update;
    if (offered.kind === "settled") return withQueued(v, flights);
    if (next.kind === "blocked") return blockedRun(v, next.waiting);
    return { ...v.update(), ...(state.deviation ? { deviation: null } : {}) };
  };
}

/**
 * Whether an ended attempt is recorded. After the caller stopped the run, a result is kept (the call
 * happened: resume must not make it again) but a failure is not, since it may be the stop itself: the
 * step stays running and resume calls it again under the same key
 * (docs/decisions/0028-a-stopped-run-keeps-its-results.md).
 */
function kept(flight: Flight): boolean {
  return !flight.endedAfterStop || (flight.called === true && flight.result?.ok === true);
}

/** A version whose remaining steps cannot fit the budget deviates before any of them starts. */
function planOverBudget(v: Visit) {
  // A person's answer after the projection (go on, retry, skip) overrides it.
  if (v.state.decisions.at(-1)?.by === "person") return undefined;
  return projectBudget(v.plan, v.steps, v.spent, v.rt.policy.budget.maxCost);
}

/** The update, with the next queued deviation handed to the classifier once nothing is running. */
function withQueued(v: Visit, flights?: Dispatcher): PlanManagerUpdate {
  const cleared = v.state.deviation !== null ? { deviation: null } : {};
  if (flights && flights.size > 0) return { ...v.update(), ...cleared };
  const { deviation, rest } = nextQueued(v.dispatch.queue, v.plan, v.steps, v.state.guards.falsified);
  v.dispatch.queue = rest;
  return { ...v.update(), ...(deviation ? { deviation } : cleared) };
}

/** A human step: the human node raises the interrupt (its own writes are discarded while it waits). */
function humanStep(v: Visit, step: Step): PlanManagerUpdate {
  const previous = v.steps[step.id] ?? { status: "pending", attempts: 0 };
  v.write(step.id, { ...previous, status: "running", startedAt: previous.startedAt ?? v.now() });
  const timeoutMs = step.human!.timeoutMs;
  const deadline = timeoutMs ? v.rt.clock.now() + timeoutMs : undefined;
  const inputs = pick(v.trusted, step.inputs ?? []);
  const pendingHuman = humanStepPayload(v.state.goal, v.plan.version, step, inputs, v.rt.canReplan, deadline);
  return { ...v.update(), deviation: null, status: "awaiting_human", pendingHuman };
}

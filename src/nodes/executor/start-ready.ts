/**
 * What a visit of the executor starts (docs/architecture.md "Parallel steps"): the skips, the calls made
 * again, and the ready steps `mayStart` allows, in order — the same verdict the createAgent middleware asks.
 */
import { ownReader } from "../../plan/overlay.js";
import { selectReady, stepPosition, unfinishedSteps } from "../../plan/ready.js";
import type { Step } from "../../plan/schema/step.js";
import { falseAssumptionFailure, mayStart, type StartStanding } from "../../policy/attempt/may-start.js";
import { awaitsRefresh } from "../../policy/attempt/freshness.js";
import type { Dispatcher } from "../../runtime/dispatch.js";
import { startAttempt, toolFor } from "./start-attempt.js";
import { offeredToCaller } from "./external-step.js";
import type { Visit } from "./visit.js";
import { awaitsWatch } from "./watch-ready.js";

/** Where a visit stands once it has started what it could; `human`: a human or external step to ask about. */
export type Next = { kind: "go"; human?: Step } | { kind: "blocked"; waiting: string[] };

/**
 * Takes every skip, calls again what the checkpoint shows running with no call in flight, and
 * starts the ready steps `mayStart` allows, in order. A ready human step holds nothing back: an
 * interrupt pauses the whole thread, so the person is asked only once no other step runs or can
 * start (docs/architecture.md "Parallel steps"). Its dependents are not ready until it is answered.
 */
export function startReady(v: Visit, flights: Dispatcher): Next {
  const record = ownReader(v.steps);
  for (const step of unfinishedSteps(v.plan, v.steps)) {
    const run = record(step.id);
    if (run?.status === "running" && !step.human && !offeredToCaller(step, run) && !flights.has(step.id))
      startAttempt(v, flights, step, true);
  }
  for (;;) {
    const readiness = selectReady(v.plan, v.steps, v.trusted);
    if (readiness.kind === "skip") {
      v.skip(readiness.step, readiness.reason, readiness.note);
      continue;
    }
    if (readiness.kind === "blocked") return { kind: "blocked", waiting: readiness.waiting };
    if (readiness.kind === "done") return { kind: "go" };
    let human: Step | undefined;
    const refused: string[] = [];
    const successes = v.successes;
    let waits = false;
    const ready = new Set(readiness.steps.map((s) => s.id));
    for (const step of readiness.steps) {
      // An input being observed again (its producer starts in this loop), or a watcher not yet called in this
      // visit (the next visit calls it): the step starts later.
      if (
        awaitsRefresh(
          step,
          (k) => v.facts[k] ?? v.state.facts[k],
          v.steps,
          (id) => inPlan(v, id),
        )
      )
        continue;
      if (awaitsWatch(v, step)) {
        waits = true;
        continue;
      }
      const verdict = mayStart(step, standing(v, flights, ready), toolFor(step, v.steps[step.id]));
      if (!verdict.ok) {
        if (verdict.rule === "start.held" || verdict.rule === "start.no-slot") break;
        // Not on a premise found false: the step goes to its ladder, as a check refusing its call sends it.
        if (verdict.rule === "start.false-assumption")
          v.fail(step, falseAssumptionFailure(verdict), v.steps[step.id] ?? { status: "pending", attempts: 0 });
        else refused.push(`${step.id} (${verdict.reason})`);
        continue;
      }
      // An external step waits like a human step: its question pauses the whole thread.
      if (step.human || offeredToCaller(step, v.steps[step.id])) human ??= step;
      else startAttempt(v, flights, step);
    }
    // A step whose committed operation was reused ended without a call: what it made ready may start.
    if (v.successes > successes) continue;
    // Ready steps, none started, nothing running or queued: a resource held by a step that cannot run.
    if (flights.size === 0 && !human && v.dispatch.queue.length === 0 && !waits)
      return { kind: "blocked", waiting: refused };
    return { kind: "go", ...(human && flights.size === 0 ? { human } : {}) };
  }
}

/** Where the visit stands for `mayStart`: its ready steps, the assumptions found false, the dispatcher's calls and hold. */
function standing(v: Visit, flights: Dispatcher, ready: ReadonlySet<string>): StartStanding {
  const hold = v.holdReason();
  const dispatch = {
    running: flights.running(),
    maxConcurrency: v.rt.policy.maxConcurrency,
    toolLimits: v.dispatch.limits,
    ...(hold !== undefined ? { hold } : {}),
  };
  return { plan: v.plan, steps: v.steps, ready, falsified: v.state.guards.falsified, dispatch };
}

function inPlan(v: Visit, id: string): boolean {
  return stepPosition(v.plan, id) !== undefined;
}

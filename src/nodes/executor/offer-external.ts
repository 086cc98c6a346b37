/**
 * The question of the external steps offered to the calling agent (docs/decisions/0042-external-steps.md):
 * every external step ready once nothing else runs or can start, with every one offered before and not
 * yet answered, in one question, in plan order. The agent submits any of them; the one it names is
 * judged, and the next visit offers the rest again (same attempts, keys and intents) with any step
 * that submission made ready.
 */
import { stepPosition, unfinishedSteps } from "../../plan/ready.js";
import type { ExternalOffer } from "../../plan/schema/interrupts.js";
import type { Step } from "../../plan/schema/step.js";
import type { Dispatcher } from "../../runtime/dispatch.js";
import { externalStepPayload } from "../../runtime/interrupts.js";
import type { PlanManagerUpdate } from "../../runtime/state.js";
import { offeredToCaller, offerStep } from "./external-step.js";
import { startReady, type Next } from "./start-ready.js";
import type { Visit } from "./visit.js";

/** The question to ask, or why none: a check or the journal settled a step without asking, or nothing is offered. */
export type Offered = { kind: "ask"; update: PlanManagerUpdate } | { kind: "settled" } | { kind: "none" };

/**
 * Offers the ready external step `next` names and every other one that may start with it, plus those
 * offered before and not answered. A step settled without asking ends the visit as a tool's end would
 * (the rest are offered next visit).
 */
export async function offerExternal(v: Visit, flights: Dispatcher, next: Next): Promise<Offered> {
  const waiting = stillOffered(v, flights);
  let ready = readyExternal(next);
  if (waiting.length === 0 && !ready) return { kind: "none" };
  const offers: ExternalOffer[] = [];
  for (const step of waiting) {
    const offer = await offerStep(v, step);
    if (!offer) return { kind: "settled" };
    offers.push(offer);
  }
  while (ready) {
    const offer = await offerStep(v, ready);
    if (!offer) return { kind: "settled" };
    offers.push(offer);
    // The step just offered runs now; the next ready one that may start is offered with it.
    const more = startReady(v, flights);
    if (flights.size > 0) return { kind: "settled" };
    ready = readyExternal(more);
  }
  const position = (o: ExternalOffer) => stepPosition(v.plan, o.step.id) ?? 0;
  const [first, ...rest] = offers.sort((a, b) => position(a) - position(b));
  const pendingHuman = externalStepPayload(v.plan.version, v.state.goal, [first!, ...rest], v.rt.canReplan);
  return { kind: "ask", update: { ...v.update(), deviation: null, status: "awaiting_human", pendingHuman } };
}

/** The external step `startReady` came to, if the step it asks about is one (a human step is asked alone). */
function readyExternal(next: Next): Step | undefined {
  return next.kind === "go" && next.human && !next.human.human ? next.human : undefined;
}

/** External steps offered before whose submission has not come (their records show the attempt running). */
function stillOffered(v: Visit, flights: Dispatcher): Step[] {
  return unfinishedSteps(v.plan, v.steps).filter((step) => {
    const run = v.steps[step.id];
    return run?.status === "running" && offeredToCaller(step, run) && !flights.has(step.id);
  });
}

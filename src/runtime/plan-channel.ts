/**
 * What the `plan` channel accepts: a whole plan, which replaces the value, or an extension's
 * append, which names the version it follows and carries only the steps and assumptions it adds.
 * The channel expands an append into the next version, when written and again when replayed on
 * load, so every reader of the state sees the whole plan. What the append saves is the
 * checkpointer serialising every earlier step at each extension of a long plan
 * (docs/decisions/0030-long-runs-per-step-cost.md).
 */
import { PlanManagerError } from "../errors.js";
import { notePlanAppend } from "../plan/ready.js";
import type { Assumption, Plan } from "../plan/schema/plan.js";
import type { Step } from "../plan/schema/step.js";

/** The wire form of an append (in the `updates` stream and in stored writes). */
export interface PlanAppend {
  __append__: {
    /** The version this append follows; the new version is `to + 1`. */
    to: number;
    steps: Step[];
    /** Assumptions the new version adds (the earlier ones stay). */
    assumptions: Assumption[];
    /** Present as `false` when more steps will follow, as on a plan. */
    complete?: false;
  };
}

export type PlanWrite = Plan | PlanAppend | undefined;

export function isPlanAppend(write: unknown): write is PlanAppend {
  return typeof write === "object" && write !== null && Object.hasOwn(write, "__append__");
}

/** The append that makes the next version of `previous`: its steps and assumptions after `previous`'s. */
export function appendToPlan(
  previous: Plan,
  added: { steps: readonly Step[]; assumptions?: readonly Assumption[] | undefined; complete?: boolean | undefined },
): PlanAppend {
  const known = new Set(previous.assumptions.map((a) => a.id));
  const append: PlanAppend["__append__"] = {
    to: previous.version,
    steps: [...added.steps],
    assumptions: (added.assumptions ?? []).filter((a) => !known.has(a.id)),
  };
  if (added.complete === false) append.complete = false;
  return { __append__: append };
}

/**
 * The channel's reducer: writes in order, a whole plan replacing, an append extending the value
 * so far. Applying a batch at once or write by write gives the same plan, as replay requires.
 */
export function planWrites(current: Plan | undefined, writes: readonly PlanWrite[]): Plan | undefined {
  let plan = current;
  for (const write of writes) plan = isPlanAppend(write) ? appended(plan, write.__append__) : write;
  return plan;
}

function appended(plan: Plan | undefined, append: PlanAppend["__append__"]): Plan {
  if (plan === undefined || plan.version !== append.to) {
    const base = plan === undefined ? "no plan" : `version ${plan.version}`;
    throw new PlanManagerError(
      "invalid_update",
      `state update rejected: plan: an append to version ${String(append.to)} does not follow ${base}`,
      { path: "plan" },
    );
  }
  // The key order of a plan the extender used to write whole.
  const next: Plan = {
    version: plan.version + 1,
    steps: plan.steps.concat(append.steps),
    assumptions: plan.assumptions.concat(append.assumptions),
  };
  if (plan.rationale !== undefined) next.rationale = plan.rationale;
  if (append.complete === false) next.complete = false;
  notePlanAppend(plan, next);
  return next;
}

/**
 * The part of a write still to be checked against `PlanSchema`, given the plan it applies to
 * (checked when it was written). A new plan that hands back the current steps as the same objects
 * checks only the rest; an append checks what it adds, in a plan's shape. With no current plan,
 * the write as the caller wrote it (the error then names the field as written).
 */
export function uncheckedPlan(current: Plan | undefined, write: unknown): unknown {
  if (isPlanAppend(write)) {
    const append: unknown = write.__append__;
    if (typeof append !== "object" || append === null) return append;
    const { to, steps, assumptions, complete } = append as Record<string, unknown>;
    return { version: to, steps, assumptions, ...(complete === undefined ? {} : { complete }) };
  }
  const steps = (write as Partial<Plan> | null)?.steps;
  if (!current || !Array.isArray(steps)) return write;
  let kept = 0;
  while (kept < current.steps.length && kept < steps.length && steps[kept] === current.steps[kept]) kept += 1;
  return kept === 0 ? write : { ...(write as Plan), steps: steps.slice(kept) };
}

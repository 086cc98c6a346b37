/**
 * Ready-step selection (pure): which steps can start, given the plan, the step records and the
 * trusted facts. A step is ready when its dependencies succeeded (or were skipped in a way that
 * satisfies them) and its `when` holds; inputs and preconditions are checked when it runs.
 */
import { beforeWriting } from "./pinned.js";
import { evaluate } from "../expr/cel.js";
import { overlayParts, ownReader } from "./overlay.js";
import type { Plan } from "./schema/plan.js";
import type { SkipReason, StepRun } from "./schema/run.js";
import type { Step } from "./schema/step.js";

const SATISFYING_SKIPS: ReadonlySet<SkipReason | undefined> = new Set(["when", "human", "replaced"]);

function depState(run: StepRun | undefined): "ok" | "skipped" | "wait" {
  if (!run) return "wait";
  if (run.status === "succeeded") return "ok";
  if (run.status === "skipped") return SATISFYING_SKIPS.has(run.skipReason) ? "ok" : "skipped";
  return "wait";
}

export function isFinished(run: StepRun | undefined): boolean {
  return run?.status === "succeeded" || run?.status === "skipped";
}

/** Each plan's step positions by id, and where a key is first produced, built once per plan version. */
const positions = new WeakMap<Plan, Map<string, number>>();
const producers = new WeakMap<Plan, Map<string, number>>();
/** The plan whose steps an index was last grown to: the one plan that may grow it further in place. */
const grownTo = new WeakMap<Map<string, number>, Plan>();
/** Plans made by appending steps to another (an extension), each with the plan it extends. */
const appendedTo = new WeakMap<Plan, Plan>();

/**
 * Notes that `next` is `previous` with steps appended (runtime/plan-channel.ts): what is known of
 * one serves the other, so an extension of a long plan does not index its thousands of steps
 * again (docs/decisions/0030-long-runs-per-step-cost.md).
 */
export function notePlanAppend(previous: Plan, next: Plan): void {
  appendedTo.set(next, previous);
}

function indexOf(plan: Plan, cache: WeakMap<Plan, Map<string, number>>, produced: boolean): Map<string, number> {
  let index = cache.get(plan);
  if (index) return index;
  const from = appendedTo.get(plan);
  const base = from && cache.get(from);
  let start = 0;
  if (from && base) {
    const grown = grownTo.get(base);
    // Another plan appended the very same steps to `from` (a route's read of the write, then the channel's
    // own): what it grew the index to is this plan's too.
    if (grown !== from && grown !== undefined && sameAppend(grown, plan, from.steps.length)) {
      // Either may be the one extended next: both hold these steps.
      grownTo.set(base, plan);
      cache.set(plan, base);
      return base;
    }
    // Grown in place while no other plan grew it past `from`: positions past a plan's end are not its steps.
    index = grown === from ? base : new Map([...base].filter(([, at]) => at < from.steps.length));
    start = from.steps.length;
  } else index = new Map();
  for (let i = start; i < plan.steps.length; i++) {
    const step = plan.steps[i]!;
    if (!produced) index.set(step.id, i);
    // The first producer: a key some step of a prefix produces stays within that prefix.
    else for (const key of step.produces ?? []) if (!index.has(key)) index.set(key, i);
  }
  grownTo.set(index, plan);
  cache.set(plan, index);
  return index;
}

/** Whether `a` and `b` hold the same step objects from `start` on, and no more: appends of one write. */
function sameAppend(a: Plan, b: Plan, start: number): boolean {
  if (a.steps.length !== b.steps.length) return false;
  for (let i = start; i < b.steps.length; i++) if (a.steps[i] !== b.steps[i]) return false;
  return true;
}

/** Where step `id` stands in `plan`, or undefined when the plan has no such step. */
export function stepPosition(plan: Plan, id: string): number | undefined {
  const at = indexOf(plan, positions, false).get(id);
  return at !== undefined && at < plan.steps.length ? at : undefined;
}

/** Whether some step of `plan` produces `key`. */
export function planProduces(plan: Plan, key: string): boolean {
  const at = indexOf(plan, producers, true).get(key);
  return at !== undefined && at < plan.steps.length;
}

/** Per step-records object: for the plan last asked about, how many leading steps have finished. */
const finishedPrefix = new WeakMap<object, { plan: Plan; first: number }>();

/**
 * The position of `plan`'s first step that has not finished (`plan.steps.length` when all have).
 * Every step before it has finished, so whatever looks for work to do starts there: on a long run
 * a step's work stays the same however many steps ran before
 * (docs/decisions/0030-long-runs-per-step-cost.md). Remembered per records object: one that never
 * changes keeps its answer, one merged in place moves it back when a record before it stops being
 * finished (`mergeStepsInPlace`), and a visit's view of the records starts from its base's answer.
 */
export function firstUnfinished(plan: Plan, steps: Readonly<Record<string, StepRun>>): number {
  const parts = overlayParts(steps);
  if (parts) {
    let first = firstUnfinished(plan, parts.base);
    for (const [id, run] of Object.entries(parts.changes)) {
      const at = isFinished(run) ? undefined : stepPosition(plan, id);
      if (at !== undefined && at < first) first = at;
    }
    return advance(plan, steps, first);
  }
  const known = finishedPrefix.get(steps);
  // An appended plan keeps every step where it was: its finished prefix is the one it extends.
  const same = known !== undefined && (known.plan === plan || appendedTo.get(plan) === known.plan);
  const first = advance(plan, steps, same ? known.first : 0);
  finishedPrefix.set(steps, { plan, first });
  return first;
}

function advance(plan: Plan, steps: Readonly<Record<string, StepRun>>, first: number): number {
  while (first < plan.steps.length && isFinished(steps[plan.steps[first]!.id])) first += 1;
  return first;
}

/** The plan's steps from the first that has not finished on (see `firstUnfinished`). */
export function unfinishedSteps(plan: Plan, steps: Readonly<Record<string, StepRun>>): readonly Step[] {
  const first = firstUnfinished(plan, steps);
  return first === 0 ? plan.steps : plan.steps.slice(first);
}

/**
 * The step-records channel's in-place merge (runtime/delta-channel.ts `mergeInPlace`): a record
 * that is not finished moves back the finished prefix `firstUnfinished` remembered for this object.
 */
export function mergeStepsInPlace(current: Record<string, StepRun>, writes: (Record<string, StepRun> | undefined)[]) {
  const known = finishedPrefix.get(current);
  for (const write of writes) {
    if (write === undefined) continue;
    beforeWriting(current, Object.keys(write));
    Object.assign(current, write);
    if (!known) continue;
    for (const [id, run] of Object.entries(write)) {
      const at = isFinished(run) ? undefined : stepPosition(known.plan, id);
      if (at !== undefined && at < known.first) known.first = at;
    }
  }
  return current;
}

/** What can happen next: a step to skip (taken before anything else), or every step ready to start. */
export type Readiness =
  | { kind: "skip"; step: Step; reason: SkipReason; note: string }
  | { kind: "ready"; steps: Step[] }
  | { kind: "done" }
  | { kind: "blocked"; waiting: string[] };

/**
 * Every step ready to start, in the order they should start: steps being retried first (so a retry
 * is not overtaken), then plan order. A step to skip comes back alone, before any start, because
 * skipping it can settle its dependents. Empty `steps` means something is still running.
 */
export function selectReady(
  plan: Plan,
  steps: Readonly<Record<string, StepRun>>,
  trusted: Readonly<Record<string, unknown>>,
): Readiness {
  // Finished steps have nothing to start, skip or wait for: only the rest is looked at.
  const open = unfinishedSteps(plan, steps);
  // Plain reads and loops: on a long chain this runs for every open step at every step.
  const record = ownReader(steps);
  const retried = open.filter((s) => record(s.id)?.status === "pending" && (record(s.id)?.attempts ?? 0) > 0);
  const ordered = retried.length === 0 ? open : [...retried, ...open.filter((s) => !retried.includes(s))];
  const ready: Step[] = [];
  for (const step of ordered) {
    const run = record(step.id);
    if (run && run.status !== "pending") continue;
    let waits = false;
    for (const dep of step.dependsOn ?? []) {
      const state = depState(record(dep));
      if (state === "skipped")
        return { kind: "skip", step, reason: "dependency_skipped", note: `depends on "${dep}", which was skipped` };
      if (state === "wait") waits = true;
    }
    if (waits) continue;
    const skip = whenSkip(step, trusted);
    if (skip) return skip;
    ready.push(step);
  }
  if (ready.length > 0) return { kind: "ready", steps: ready };
  const waiting = open.filter((s) => !isFinished(record(s.id))).map((s) => s.id);
  if (waiting.length === 0) return { kind: "done" };
  if (waiting.some((id) => record(id)?.status === "running")) return { kind: "ready", steps: [] };
  return { kind: "blocked", waiting };
}

function whenSkip(step: Step, trusted: Readonly<Record<string, unknown>>): Readiness | undefined {
  if (!step.when) return undefined;
  const result = evaluate(step.when, "when", trusted);
  if (!result.ok)
    return {
      kind: "skip",
      step,
      reason: "when",
      note: `when ${JSON.stringify(step.when)} is false (${result.message})`,
    };
  if (result.value !== true)
    return { kind: "skip", step, reason: "when", note: `when ${JSON.stringify(step.when)} is false` };
  return undefined;
}

/**
 * Which committed side effects a replan or the run's end abandons, and what undoing each would call
 * (docs/decisions/0039-compensation.md). Pure: the thread, the effects, the facts and
 * the time come in; nothing is called here.
 */
import { operationKey } from "../../plan/operation.js";
import type { Plan } from "../../plan/schema/plan.js";
import type { CompensationRecord, Fact, SideEffectRecord } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import { sideEffecting } from "../../plan/operation.js";
import { liveKey, undoneKeys } from "../attempt/redo-key.js";

/** What the run has committed and compensated so far, with the facts a compensation's inputs read. */
export interface EffectsSnapshot {
  threadId: string;
  committed: readonly SideEffectRecord[];
  compensations: readonly CompensationRecord[];
  facts: Readonly<Record<string, Fact>>;
}

/** A committed effect to be abandoned, with the step that owns it (whose `compensate` undoes it). */
export interface Abandoned {
  effect: SideEffectRecord;
  step: Step;
}

/** The compensation's own idempotency key: the effect's, suffixed, so a retried or resumed undo runs once. */
export function compensationKey(effectKey: string): string {
  return `${effectKey}:compensate`;
}

/**
 * A compensation reads the facts whatever their label: it undoes what happened, and what happened
 * (the booking's id, the charge's receipt) is what those facts recorded, whatever later evidence
 * says about the plan's assumptions.
 */
function allValues(facts: Readonly<Record<string, Fact>>): Record<string, unknown> {
  // Own properties whatever the key (a fact named `__proto__` is data, not a prototype).
  return Object.fromEntries(Object.entries(facts).map(([key, fact]) => [key, fact.value]));
}

function pick(values: Readonly<Record<string, unknown>>, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(keys.filter((key) => Object.hasOwn(values, key)).map((key) => [key, values[key]]));
}

/**
 * The keys a step's calls would commit under on the facts known now: its tool's and its fallback's,
 * past the keys whose effects were undone (redo-key.ts).
 */
function keysOf(
  threadId: string,
  step: Step,
  values: Readonly<Record<string, unknown>>,
  undone: ReadonlySet<string>,
): string[] {
  if (!sideEffecting(step)) return [];
  const inputs = pick(values, step.inputs ?? []);
  const calls: [string | undefined, Record<string, unknown> | undefined][] = [
    [step.tool, step.args],
    [step.fallback?.tool, step.fallback?.args],
  ];
  return calls
    .filter((c): c is [string, Record<string, unknown> | undefined] => c[0] !== undefined)
    .map(([tool, args]) => liveKey(operationKey(threadId, tool, { ...args, ...inputs }, step.operation), undone));
}

/**
 * The keys each step's calls would commit under, computed once per step: the owners of effects and
 * the operations a replan hands back are both read from this one table.
 */
function stepKeys(threadId: string, values: Readonly<Record<string, unknown>>, undone: ReadonlySet<string>) {
  const known = new Map<Step, string[]>();
  return (step: Step): string[] => {
    let keys = known.get(step);
    if (keys === undefined) known.set(step, (keys = keysOf(threadId, step, values, undone)));
    return keys;
  };
}

/**
 * The step of `plan` that owns an effect: the one that committed it, or one that reused it under
 * another id. Keys are read only when some effect's step left the plan.
 */
function owners(plan: Plan, keys: (step: Step) => readonly string[]) {
  const byId = new Map(plan.steps.map((s) => [s.id, s]));
  let byKey: Map<string, Step> | undefined;
  return (effect: SideEffectRecord): Step | undefined => {
    const own = byId.get(effect.stepId);
    if (own) return own;
    byKey ??= new Map(plan.steps.flatMap((s) => keys(s).map((k) => [k, s] as const)));
    return byKey.get(effect.idempotencyKey);
  };
}

/**
 * The effects a new version abandons, latest commit first: owned by a step of the previous version
 * that the new one removes or replaces, unless a step of the new version makes the same operation
 * again (it is kept and reused, docs/decisions/0006-idempotency-keys-name-the-operation.md). An
 * effect with a compensation record is settled already.
 */
export function abandonedBy(
  previous: Plan,
  next: Plan,
  replacement: readonly string[],
  e: EffectsSnapshot,
): Abandoned[] {
  const open = unsettled(e);
  if (open.length === 0) return [];
  const values = allValues(e.facts);
  const replaced = new Set(replacement);
  const staying = new Set(next.steps.filter((s) => !replaced.has(s.id)).map((s) => s.id));
  const keys = stepKeys(e.threadId, values, undoneKeys(e.compensations));
  const ownerOf = owners(previous, keys);
  const dropped = open
    .map((effect) => ({ effect, step: ownerOf(effect) }))
    .filter((a): a is Abandoned => a.step !== undefined && !staying.has(a.step.id));
  if (dropped.length === 0) return [];
  // Only the replan's own steps can hand an operation back: the others stay as they were.
  const repeated = new Set(next.steps.filter((s) => replaced.has(s.id)).flatMap((s) => keys(s)));
  return dropped.filter((a) => !repeated.has(a.effect.idempotencyKey));
}

/** At the run's end (`policy.compensateOn`): every unsettled effect owned by a step of the last version, latest first. */
export function abandonedAtEnd(plan: Plan, e: EffectsSnapshot): Abandoned[] {
  const ownerOf = owners(plan, stepKeys(e.threadId, allValues(e.facts), undoneKeys(e.compensations)));
  return unsettled(e)
    .map((effect) => ({ effect, step: ownerOf(effect) }))
    .filter((a): a is Abandoned => a.step !== undefined);
}

function unsettled(e: EffectsSnapshot): SideEffectRecord[] {
  const settled = new Set(e.compensations.map((c) => c.idempotencyKey));
  return [...e.committed].reverse().filter((effect) => !settled.has(effect.idempotencyKey));
}

/** Whether a run ending with `status` compensates (`policy.compensateOn`, default `["aborted"]`). */
export function compensatesOn(status: string, compensateOn: readonly string[] = ["aborted"]): boolean {
  return compensateOn.includes(status);
}

/**
 * The records of abandoned effects, in the order given (latest commit first, so they run in reverse
 * commit order): `pending` with the call resolved now, for a step that has `compensate`; `waived`
 * for one that has none once a person let it stand.
 */
export function compensationRecords(
  abandoned: readonly Abandoned[],
  facts: Readonly<Record<string, Fact>>,
  at: string,
): CompensationRecord[] {
  const values = allValues(facts);
  return abandoned.map(({ effect, step }) => {
    const base = {
      stepId: step.id,
      idempotencyKey: effect.idempotencyKey,
      compensationKey: compensationKey(effect.idempotencyKey),
      at,
    };
    const undo = step.compensate;
    if (!undo) return { ...base, status: "waived" as const };
    return {
      ...base,
      status: "pending" as const,
      tool: undo.tool,
      args: { ...undo.args, ...pick(values, undo.inputs ?? []) },
      ...(step.retry ? { retry: { ...step.retry } } : {}),
      attempts: 0,
    };
  });
}

/** The abandoned effects whose step has no `compensate`: a person is asked before they are left standing. */
export function withoutCompensation(abandoned: readonly Abandoned[]): Abandoned[] {
  return abandoned.filter((a) => a.step.compensate === undefined);
}

/** What changed between two plan versions (`PlanDiff`, plan/schema/decision.ts). */
import type { PlanDiff } from "./schema/decision.js";
import type { Plan } from "./schema/plan.js";
import type { Step } from "./schema/step.js";

/** The steps added, removed, changed and unchanged from plan `a` to plan `b`, by id. */
export function planDiff(a: Pick<Plan, "steps">, b: Pick<Plan, "steps">): PlanDiff {
  const before = new Map(a.steps.map((s) => [s.id, s]));
  const after = new Map(b.steps.map((s) => [s.id, s]));
  const diff: PlanDiff = { added: [], removed: [], changed: [], unchanged: [] };
  for (const step of b.steps) {
    const old = before.get(step.id);
    if (!old) {
      diff.added.push(step.id);
      continue;
    }
    const fields = changedFields(old, step);
    if (fields.length > 0) diff.changed.push({ id: step.id, fields });
    else diff.unchanged.push(step.id);
  }
  for (const step of a.steps) if (!after.has(step.id)) diff.removed.push(step.id);
  return diff;
}

function changedFields(a: Step, b: Step): (keyof Step)[] {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)] as (keyof Step)[]);
  return [...keys].filter((k) => canonical(a[k]) !== canonical(b[k])).sort();
}

/** JSON with sorted keys, so field order does not count as a change. */
export function canonical(value: unknown): string {
  return (
    JSON.stringify(value, (_, v: unknown) =>
      v && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([x], [y]) => (x < y ? -1 : 1)))
        : v,
    ) ?? "undefined"
  );
}

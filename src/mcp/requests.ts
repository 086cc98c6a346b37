/**
 * What a `plan_create` asked for, and the errors of an idempotency key reused for something else
 * (docs/decisions/0037-planning-service-over-mcp.md "Idempotency keys name one request").
 */
import { createHash } from "node:crypto";
import { PlanManagerError } from "../errors.js";

export const digest = (...parts: string[]) =>
  createHash("sha256").update(JSON.stringify(parts)).digest("hex").slice(0, 24);

/** JSON with object keys sorted, so that one request has one digest however its keys were ordered or stored. */
function canonical(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/**
 * What a plan was asked for, as a digest: its graph, goal, context and given plan — computed alike
 * from a create's input and from the plan's checkpoint, which holds the three as given.
 */
export const requestOf = (graph: string, input: { goal?: string; context?: unknown; draft?: unknown }) =>
  digest("request", graph, canonical([input.goal ?? "", input.context ?? {}, input.draft ?? null]));

const PROBLEMS = {
  other: (planId: string) =>
    `was used for plan "${planId}" with another goal, context, plan or graph: ` +
    "send the same request to get that plan back, or use a new key for a new plan",
  underWay: (planId: string) =>
    `names plan "${planId}", being created for another request: use a new key for a new plan`,
  newRun: (planId: string) =>
    `names plan "${planId}" already: new_run starts a new plan only under a new key (or none)`,
};

/** A key reused for another request, as a payment API refuses one: `idempotency_conflict` naming the key. */
export function keyConflict(key: string, planId: string, why: keyof typeof PROBLEMS): PlanManagerError {
  return new PlanManagerError(
    "idempotency_conflict",
    `idempotency_key ${JSON.stringify(key)} ${PROBLEMS[why](planId)}`,
    {
      path: "idempotency_key",
    },
  );
}

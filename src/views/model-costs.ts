/** Model calls of agent steps by tier: calls, failed calls, tokens and cost (docs/decisions/0021-agent-steps.md). */
import type { UsageEntry } from "../runtime/state.js";
import type { ModelTier } from "../plan/schema/step.js";

export interface TierCost {
  /** `untiered`: calls of steps that name no tier (an agent's own model). */
  tier: ModelTier | "untiered";
  calls: number;
  failed: number;
  inputTokens: number;
  outputTokens: number;
  cost: number;
}

const ORDER: readonly TierCost["tier"][] = ["fast", "default", "strong", "untiered"];

/** One row per tier used by agent steps, cheapest first; empty when no agent step called a model. */
export function costsByTier(usage: readonly UsageEntry[] | undefined): TierCost[] {
  const rows = new Map<TierCost["tier"], TierCost>();
  for (const u of usage ?? []) {
    if (u.purpose !== "step") continue;
    const tier = u.tier ?? "untiered";
    const row = rows.get(tier) ?? { tier, calls: 0, failed: 0, inputTokens: 0, outputTokens: 0, cost: 0 };
    row.calls += 1;
    if (u.errorId !== undefined) row.failed += 1;
    row.inputTokens += u.inputTokens;
    row.outputTokens += u.outputTokens;
    row.cost += u.cost;
    rows.set(tier, row);
  }
  return ORDER.flatMap((t) => (rows.has(t) ? [rows.get(t)!] : []));
}

/** `fast $0.0012 (1 call) · default $0.0120 (2 calls, 1 failed)` */
export function tierCostLine(rows: readonly TierCost[]): string {
  return rows
    .map((r) => {
      const failed = r.failed > 0 ? `, ${r.failed} failed` : "";
      return `${r.tier} $${r.cost.toFixed(4)} (${r.calls} call${r.calls === 1 ? "" : "s"}${failed})`;
    })
    .join(" · ");
}

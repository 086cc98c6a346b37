import type { PlanDraft } from "../plan/schema/plan.js";
import type { ExtendRequest, PlanRequest, Planner, ReplanRequest } from "../contracts/planner.js";

/** Options of `staticPlanner`: the plan, and optionally how to replan and extend. */
export interface StaticPlannerOptions {
  /** The plan, or a function of the request that returns it. */
  plan: PlanDraft | ((request: PlanRequest) => PlanDraft | Promise<PlanDraft>);
  /** Replacement steps for a replan. Without it, replans escalate. */
  replan?: (request: ReplanRequest) => PlanDraft | Promise<PlanDraft>;
  /** The next steps of a rolling-horizon plan (drafts with `complete: false`). Without it, such drafts are rejected. */
  extend?: (request: ExtendRequest) => PlanDraft | Promise<PlanDraft>;
}

/** A planner that returns a fixed plan: for tests, examples, and workflows that are known in advance. */
export function staticPlanner(options: StaticPlannerOptions): Planner {
  const { plan, replan, extend } = options;
  const planner: Planner = {
    async plan(request) {
      return structuredClone(typeof plan === "function" ? await plan(request) : plan);
    },
  };
  if (replan) planner.replan = async (request) => structuredClone(await replan(request));
  if (extend) planner.extend = async (request) => structuredClone(await extend(request));
  return planner;
}

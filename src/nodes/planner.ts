/** The planner node: takes the first draft (planner/first-draft.ts), enriches and gates it, stores plan version 1. */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { PlanManagerStateType, PlanManagerUpdate, UsageEntry } from "../runtime/state.js";
import type { Runtime } from "../runtime/options.js";
import { enrichDraft, enrichedNothing } from "../plan/enrich.js";
import { makeFacts } from "../plan/facts.js";
import { type Plan } from "../plan/schema/plan.js";
import { builtWrite } from "../runtime/checked-channel.js";
import { FactKeySchema } from "../plan/schema/primitives.js";
import { type Fact } from "../plan/schema/run.js";
import { emit } from "../runtime/events.js";
import { planReview } from "../runtime/interrupts.js";
import { startingBudget } from "../policy/ladder/budget.js";
import { draftPlan, type NoPlan } from "./planner/first-draft.js";
import { checkVersion, holdDecision, qualityWrite, withFindings } from "./shared/quality-hold.js";

export function makePlannerNode(rt: Runtime) {
  return async function planner(
    state: PlanManagerStateType,
    config: LangGraphRunnableConfig,
  ): Promise<PlanManagerUpdate> {
    if (state.plan) return {};
    const budget = startingBudget(rt.policy);
    const usage: UsageEntry[] = [];
    const badContext = Object.keys(state.context ?? {}).filter((k) => !FactKeySchema.safeParse(k).success);
    if (badContext.length > 0) {
      const keys = badContext.join(", ");
      const message = `context keys are not valid fact keys: ${keys} (use identifiers, not reserved names)`;
      return failed({ message, failureReason: "invalid_input", issues: [] }, {}, budget, usage);
    }
    const inputFacts = makeFacts(
      { ...state.context },
      { producedBy: "input", planVersion: 0, observedAt: new Date(rt.clock.now()).toISOString() },
    );
    const facts = [...Object.keys(state.facts), ...Object.keys(inputFacts)];
    const answer = await draftPlan(rt, state, facts, usage, config);
    if ("message" in answer) return failed(answer, inputFacts, budget, usage);
    const enriched = enrichDraft(answer, rt.metadataOf);
    const plan: Plan = { version: 1, steps: enriched.steps, assumptions: enriched.assumptions ?? [] };
    if (enriched.rationale !== undefined) plan.rationale = enriched.rationale;
    if (enriched.complete === false) plan.complete = false;
    emit(config, { type: "plan", version: 1, steps: plan.steps.map((s) => ({ id: s.id, goal: s.goal })) });
    // The quality gate, before the first step (docs/decisions/0040-plan-quality-gate.md).
    const findings = await checkVersion(rt, config, { plan, goal: state.goal }, usage, "plan");
    const held = holdDecision(rt, config, findings, plan, state.decisions.length);
    const review = rt.reviewPlan || held !== undefined;

    const update: PlanManagerUpdate = {
      // The draft `validatePlan` parsed, numbered: not parsed again. What the tools' metadata adds to a
      // step is checked by the channel (metadata has no limits of its own).
      plan: enrichedNothing(answer, enriched) ? builtWrite(plan) : plan,
      budget: { ...budget, spent: planningCost(usage) },
      status: review ? "awaiting_review" : "running",
      ...qualityWrite(state, findings),
    };
    // Empty writes still cost a channel update per superstep: skip them.
    if (Object.keys(inputFacts).length > 0) update.facts = inputFacts;
    if (usage.length > 0) update.usage = usage;
    if (held) update.decisions = held.decision;
    if (review) {
      const reason = held ? `${held.decision.reason}; approve the plan before any step runs` : undefined;
      update.pendingHuman = withFindings(planReview(rt, state.goal, plan), findings, reason);
    }
    return update;
  };
}

function failed(
  why: NoPlan,
  facts: Record<string, Fact>,
  budget: PlanManagerStateType["budget"],
  usage: UsageEntry[],
): PlanManagerUpdate {
  const { message, failureReason, issues } = why;
  return {
    status: "failed",
    usage,
    budget: { ...budget, spent: planningCost(usage) },
    facts,
    outcome: { summary: "", failureReason, message, recoverable: false, ...(issues.length > 0 ? { issues } : {}) },
  };
}

/** The first plan's model cost counts against the run's budget (replans go to replanSpent). */
function planningCost(usage: readonly UsageEntry[]): number {
  return usage.reduce((sum, u) => sum + u.cost, 0);
}

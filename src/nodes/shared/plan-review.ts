/**
 * The capability guard in the replan's phase sequence (docs/architecture.md "Untrusted facts"): what the run did before
 * (every earlier plan version, rebuilt from the history) against what the proposal would do,
 * and, when the guard fires, the plan review a person answers. Whatever made the draft —
 * planner, memory, a person's constraint — it goes through here before it becomes a version.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../../runtime/options.js";
import type { PendingHuman, PlanManagerStateType, PlanManagerUpdate } from "../../runtime/state.js";
import { originalSteps, stepsOfEveryVersion } from "../../plan/history.js";
import type { ReplanRecord } from "../../plan/schema/decision.js";
import type { Plan } from "../../plan/schema/plan.js";
import type { Step } from "../../plan/schema/step.js";
import type { Decision } from "../../policy/ladder/decision.js";
import {
  capabilityBaseline,
  capabilityGuard,
  planBaseline,
  type CapabilityHit,
} from "../../policy/capability/guard.js";
import type { CapabilityBaseline } from "../../policy/capability/types.js";
import { planDiff } from "../../plan/diff.js";
import { isFinished } from "../../plan/ready.js";
import { failureTexts, leaves, type TaintedText } from "../../policy/capability/taint.js";
import { agentSideEffects } from "../../steps/handle.js";
import { emit } from "../../runtime/events.js";
import { offered, PLAN_REVIEW_OPTIONS } from "../../runtime/interrupts.js";
import type { ProposedVersion } from "../../policy/replan/replan.js";

/** Options at a held replan: `reject` discards it; `replan` discards it and asks again with a constraint. */
export const HELD_REVIEW_OPTIONS = ["approve", "reject", "replan", "change_scope", "abort"] as const;

/** What earlier plan versions of the run did, and the text the run trusted (goal, inputs, a person's words). */
export function runBaseline(
  state: PlanManagerStateType,
  original: readonly Step[] = originalSteps(state),
): CapabilityBaseline {
  const trusted = () => {
    const inputs = Object.values(state.facts).filter((f) => f.producedBy === "input" || f.producedBy === "human");
    // A person's words: replan constraints, and the scope changes this version plans for.
    const people = [...(state.guards?.constraints ?? []), ...state.scopeChanges];
    return [state.goal, ...people, ...inputs.flatMap((f) => leaves(f.value))];
  };
  // Arguments vouch only from the first plan: a later version nobody reviewed may carry a copied value.
  // A run whose versions only appended (extensions) had no step but the current plan's: that
  // baseline grows with the plan instead of being gathered again (docs/decisions/0030-long-runs-per-step-cost.md).
  if (state.plan && state.planHistory.every((e) => e.replaced.length === 0))
    return planBaseline(state.plan.steps, trusted, original);
  // Only which steps some version had matters, not which version: each definition once.
  return capabilityBaseline([stepsOfEveryVersion(state)], trusted(), original);
}

/** Where a draft came from, when not from the planner alone: replan memory's answer or hints. */
export interface DraftOrigin {
  /** The draft is a learned replan memory entry (another thread's answer). */
  remembered?: boolean;
  /** Untrusted text the planner was shown besides the run's own (replan memory's hints). */
  untrusted?: readonly TaintedText[];
}

/** Whether new steps may become a version without a person, per `policy.replanTools`. */
export function reviewNewSteps(
  rt: Runtime,
  state: PlanManagerStateType,
  replacement: readonly Step[],
  proposed: readonly Step[],
  origin: DraftOrigin = {},
): CapabilityHit | undefined {
  const again = new Set(replacement.map((s) => s.id));
  // Asked only of the proposed plan's ids, so no list of them is made (a long plan has thousands).
  const finished = { has: (id: string) => !again.has(id) && isFinished(state.steps[id]) };
  const original = originalSteps(state);
  // Tools' error messages reach the planner too (its trigger quotes them): they are untrusted like facts.
  // Gathered when the guard first reads them, as it does to trace a literal (docs/decisions/0030-long-runs-per-step-cost.md).
  let untrusted: TaintedText[] | undefined;
  return capabilityGuard({
    replacement,
    previous: state.plan?.steps ?? [],
    proposed,
    baseline: runBaseline(state, original),
    facts: state.facts,
    replanTools: rt.policy.replanTools,
    sideEffectsOf: (name) => executorEffects(rt, name),
    get untrusted() {
      if (untrusted === undefined) {
        const runs = [...Object.values(state.steps), ...state.planHistory.flatMap((e) => Object.values(e.runs ?? {}))];
        untrusted = [...failureTexts(runs, state.decisions), ...(origin.untrusted ?? [])];
      }
      return untrusted;
    },
    remembered: origin.remembered === true,
    finished,
    original,
  });
}

/** A tool's side effects from its metadata; an agent's (`agent:NAME`) from the tools it lists. */
function executorEffects(rt: Runtime, name: string): readonly string[] {
  const agent = !rt.tools.has(name) && name.startsWith("agent:") ? rt.agents.get(name.slice(6)) : undefined;
  if (agent) return agentSideEffects(agent, rt.metadataOf);
  return rt.metadataOf(name)?.sideEffects ?? [];
}

/**
 * Any proposed version (replan or extension) the capability guard stopped: its decision, and the plan
 * review a person answers. The evidence stands (facts relabelled); the plan does not change yet.
 */
export function holdProposal(
  rt: Runtime,
  state: PlanManagerStateType,
  config: LangGraphRunnableConfig,
  held: { decision: Decision; notes: readonly Decision[] },
  proposal: ProposedVersion,
  hit: CapabilityHit,
): PlanManagerUpdate {
  const { decision } = held;
  emit(config, { type: "decision", decision });
  const { plan: next } = proposal;
  const tools = [...new Set(hit.findings.map((f) => f.tool))].join(", ");
  const pendingHuman: PendingHuman = {
    kind: "plan_review",
    reason: `approve plan version ${next.version}? ${hit.reason}`,
    planVersion: next.version,
    options: offered([...HELD_REVIEW_OPTIONS], rt.canReplan),
    context: {
      goal: state.goal,
      rule: hit.rule,
      failureClass: decision.failureClass,
      tools,
      capabilities: hit.findings,
      diff: planDiff(state.plan!, next),
      steps: next.steps.map((s) => ({ id: s.id, goal: s.goal, tool: s.tool ?? null })),
    },
  };
  if (decision.stepId !== undefined) pendingHuman.stepId = decision.stepId;
  // After replan memory's decisions, if it answered this replan.
  return { decisions: [...held.notes, decision], status: "awaiting_review", pendingHuman, heldReplan: proposal };
}

/** The plan review of a committed version under `reviewReplans`. */
export function versionReview(rt: Runtime, goal: string, next: Plan, record: ReplanRecord, reason: string) {
  const steps = next.steps.map((s) => ({ id: s.id, goal: s.goal, tool: s.tool ?? null }));
  const pendingHuman: PendingHuman = {
    kind: "plan_review",
    reason,
    planVersion: next.version,
    options: offered([...PLAN_REVIEW_OPTIONS], rt.canReplan),
    context: { goal, replan: record, steps },
  };
  return pendingHuman;
}

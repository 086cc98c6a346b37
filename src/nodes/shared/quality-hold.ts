/**
 * The plan quality gate at a version's door (docs/decisions/0040-plan-quality-gate.md): the pure
 * checks (policy/quality/), the reviewer model when one is configured, and what the findings write
 * to state — every finding in `quality.findings`, and, when some reach `policy.quality.hold`, the
 * `quality.hold` decision and the plan review a person answers. Used by the planner, the replanner
 * and the extender, before the version's first step.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../../runtime/options.js";
import type { PendingHuman, PlanManagerStateType, PlanManagerUpdate, UsageEntry } from "../../runtime/state.js";
import type { Plan } from "../../plan/schema/plan.js";
import type { QualityFinding } from "../../plan/schema/quality.js";
import { qualityGate, type GateInput } from "../../policy/quality/gate.js";
import { qualityHold, qualityPolicy } from "../../policy/quality/findings.js";
import { reviewerFailure } from "../../policy/quality/reviewer.js";
import { qualityHoldDecision } from "../../policy/replan/version-quality.js";
import type { Decision } from "../../policy/ladder/decision.js";
import { reviewPlanVersion, type ReviewCall } from "../../steps/plan-reviewer.js";
import { withDeadline } from "../../runtime/deadline.js";
import { modelTrace } from "../../contracts/trace.js";
import { emit } from "../../runtime/events.js";

/** The version's findings: the deterministic gate's, then the reviewer's. None when `policy.quality` is false. */
export async function checkVersion(
  rt: Runtime,
  config: LangGraphRunnableConfig,
  input: GateInput,
  usage: UsageEntry[],
  purpose: "plan" | "replan" | "extend",
): Promise<QualityFinding[]> {
  const quality = qualityPolicy(rt.policy);
  if (!quality) return [];
  const found = qualityGate(input, quality);
  return [...found, ...(await reviewVersion(rt, config, { goal: input.goal, plan: input.plan }, usage, purpose))];
}

/**
 * The reviewer model's findings about a version (none without one), asked with the planner's deadline.
 * Past its deadline (or the run stopping), the version went unreviewed, which is a finding too.
 */
export async function reviewVersion(
  rt: Pick<Runtime, "reviewer" | "clock" | "policy">,
  config: LangGraphRunnableConfig,
  version: { goal: string; plan: Plan },
  usage: UsageEntry[],
  purpose: "plan" | "replan" | "extend",
): Promise<QualityFinding[]> {
  const reviewer = rt.reviewer;
  if (!reviewer) return [];
  const { plan } = version;
  const at = () => new Date(rt.clock.now()).toISOString();
  const trace = modelTrace(config, "planner", { purpose: "review", planVersion: plan.version });
  const report: ReviewCall["report"] = (u) => usage.push({ ...u, purpose, at: at() });
  try {
    return await withDeadline(
      rt.policy.plannerTimeoutMs,
      "reviewer",
      (signal) => reviewPlanVersion(reviewer, { goal: version.goal, plan, report, now: rt.clock.now, signal, trace }),
      config.signal,
    );
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return [reviewerFailure(why, plan.version)];
  }
}

/** The findings appended to state `quality` (the channel appends a write); nothing when there are none. */
export function qualityWrite(
  _state: Pick<PlanManagerStateType, "quality">,
  findings: readonly QualityFinding[],
): PlanManagerUpdate {
  if (findings.length === 0) return {};
  return { quality: { findings: [...findings] } };
}

/** When the findings hold the version: the `quality.hold` decision (policy/replan/version-quality.ts), emitted. */
export function holdDecision(
  rt: Runtime,
  config: LangGraphRunnableConfig,
  findings: readonly QualityFinding[],
  plan: Plan,
  after: number,
): { decision: Decision; findings: QualityFinding[] } | undefined {
  const hold = qualityHold(findings, qualityPolicy(rt.policy));
  if (!hold) return undefined;
  const at = new Date(rt.clock.now()).toISOString();
  const decision = qualityHoldDecision(hold, { after, planVersion: plan.version, at });
  emit(config, { type: "decision", decision });
  return { decision, findings: hold.findings };
}

/** A plan review that shows the gate's findings (all of the version's, the holding ones first in the reason). */
export function withFindings(review: PendingHuman, findings: readonly QualityFinding[], reason?: string): PendingHuman {
  if (review.kind !== "plan_review" || findings.length === 0) return review;
  return {
    ...review,
    ...(reason !== undefined ? { reason } : {}),
    context: { ...review.context, findings: [...findings] },
  };
}

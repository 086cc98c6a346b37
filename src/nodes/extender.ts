/**
 * The extender node (docs/architecture.md "Long goals"): when every planned step has finished and the plan says it is
 * not complete, it asks `Planner.extend` for the next steps and appends them as a new plan
 * version. A failed or over-limit extension escalates; nothing already done is lost.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../runtime/options.js";
import type { PlanManagerStateType, PlanManagerUpdate, UsageEntry } from "../runtime/state.js";
import type { PlanDraft } from "../plan/schema/plan.js";
import { formatIssues } from "../plan/validate.js";
import { failedReplan, plannerUnavailable, type GuardHit } from "../policy/ladder/guards.js";
import { extensionGuard } from "../policy/replan/horizon.js";
import { emit } from "../runtime/events.js";
import { escalationPayload } from "../runtime/interrupts.js";
import {
  applyExtension,
  extendRequest,
  extensionGate,
  extensionsOf,
  extensionVersion,
  validateExtension,
} from "./extender/extension.js";
import { checkVersion } from "./shared/quality-hold.js";
import { isPlanManagerError, throwIfResumable } from "../errors.js";
import { withDeadline } from "../runtime/deadline.js";
import { capText } from "../plan/json-safe.js";
import { decide } from "../policy/ladder/decide.js";
import { modelTrace } from "../contracts/trace.js";

export function makeExtenderNode(rt: Runtime) {
  return async function extender(
    state: PlanManagerStateType,
    config: LangGraphRunnableConfig,
  ): Promise<PlanManagerUpdate> {
    const plan = state.plan;
    if (!plan || plan.complete !== false) return {};
    const over = extensionGuard(extensionsOf(state), state.decisions, rt.policy);
    if (over) return escalate(rt, state, config, over);
    const usage: UsageEntry[] = [];
    const answer = await askExtend(rt, state, usage, config);
    const budget = { ...state.budget, spent: state.budget.spent + usage.reduce((sum, u) => sum + u.cost, 0) };
    if ("failed" in answer) return { ...escalate(rt, state, config, answer.failed), usage, budget };
    const validation = validateExtension(rt, state, answer.draft);
    if (!validation.ok) {
      const hit = failedReplan("invalid_draft", formatIssues(validation.issues));
      return { ...escalate(rt, state, config, hit), usage, budget };
    }
    const version = extensionVersion(rt, state, validation.draft);
    // The quality gate, before the version's first step (docs/decisions/0040-plan-quality-gate.md).
    const findings = await checkVersion(rt, config, extensionGate(state, version), usage, "extend");
    const spent = { ...budget, spent: state.budget.spent + usage.reduce((sum, u) => sum + u.cost, 0) };
    const update = applyExtension(rt, state, config, version, findings);
    if (update.plan) emit(config, { type: "replan", record: update.replans as never });
    return { ...update, usage, budget: spent };
  };
}

async function askExtend(
  rt: Runtime,
  state: PlanManagerStateType,
  usage: UsageEntry[],
  config: LangGraphRunnableConfig,
): Promise<{ draft: PlanDraft } | { failed: GuardHit }> {
  const extend = rt.planner.extend?.bind(rt.planner);
  if (typeof extend !== "function") return { failed: plannerUnavailable("extend") };
  const trace = modelTrace(config, "planner", { purpose: "extend", planVersion: state.plan!.version });
  const ask = (signal: AbortSignal) => extend(extendRequest(rt, state, usage, signal), trace);
  try {
    return { draft: await withDeadline(rt.policy.plannerTimeoutMs, "planner.extend", ask, config.signal) };
  } catch (error) {
    throwIfResumable(error);
    const message = capText(error instanceof Error ? error.message : String(error));
    const kind = isPlanManagerError(error) && error.code === "invalid_plan" ? "invalid_draft" : "planner_error";
    return { failed: { ...failedReplan(kind, message), reason: `the planner failed to extend the plan: ${message}` } };
  }
}

/**
 * A person decides: try the extension again (a retry also lifts `maxExtensions` by one), accept
 * the work done as the end of the run (`skip`), or abort.
 */
function escalate(
  rt: Runtime,
  state: PlanManagerStateType,
  config: LangGraphRunnableConfig,
  hit: GuardHit,
): PlanManagerUpdate {
  const decision = decide(hit.rule, {
    after: state.decisions.length,
    attempt: 0,
    failureClass: "none",
    reason: hit.reason,
    planVersion: state.plan!.version,
    at: new Date(rt.clock.now()).toISOString(),
  });
  emit(config, { type: "decision", decision });
  const pendingHuman = escalationPayload(state, decision, ["retry", "skip", "abort"]);
  pendingHuman.context = { ...pendingHuman.context, horizon: { extensions: extensionsOf(state) } };
  return { decisions: decision, status: "awaiting_human", pendingHuman, deviation: null };
}

/**
 * A rolling horizon's extension (docs/architecture.md "Long goals"): the request for the next steps, the checks their
 * draft goes through, and the new plan version that appends them. Extensions are not repairs:
 * they count against `policy.maxExtensions`, not `maxReplans`, and keep every step and fact.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../../runtime/options.js";
import type { PendingHuman, PlanManagerStateType, PlanManagerUpdate, UsageEntry } from "../../runtime/state.js";
import type { ExtendRequest } from "../../contracts/planner.js";
import { enrichDraft } from "../../plan/enrich.js";
import { factValues } from "../../plan/facts.js";
import { historyEntry } from "../../plan/history.js";
import { changedFacts, rememberLabels } from "../../plan/replan-records.js";
import type { ReplanRecord } from "../../plan/schema/decision.js";
import type { PlanDraft } from "../../plan/schema/plan.js";
import { appendToPlan, planWrites } from "../../runtime/plan-channel.js";
import { validatePlan, type PlanValidation } from "../../plan/validate.js";
import type { KeyLookup } from "../../plan/issues.js";
import { planProduces, stepPosition } from "../../plan/ready.js";
import { decide } from "../../policy/ladder/decide.js";
import { holdProposal, reviewNewSteps, versionReview } from "../shared/plan-review.js";
import { holdDecision, qualityWrite, withFindings } from "../shared/quality-hold.js";
import type { GateInput } from "../../policy/quality/gate.js";
import type { QualityFinding } from "../../plan/schema/quality.js";

/** Extensions made so far in this run. */
export const extensionsOf = (state: Pick<PlanManagerStateType, "replans">): number =>
  state.replans.filter((r) => r.scope === "extend").length;

/** The extension's draft checked like any plan: new ids only, registered tools, facts that exist. */
export function validateExtension(rt: Runtime, state: PlanManagerStateType, draft: unknown): PlanValidation {
  const plan = state.plan!;
  const { facts, steps } = state;
  // Lookups over the plan's own indexes, not lists: an extension of a long plan pays for its own
  // steps (docs/decisions/0030-long-runs-per-step-cost.md). Listed only for an error's suggestion.
  const inPlan = (id: string) => stepPosition(plan, id) !== undefined;
  const usable = (key: string) => Object.hasOwn(facts, key) && facts[key]!.label !== "invalidated";
  return validatePlan(draft, {
    tools: rt.toolNames,
    agents: rt.agentNames,
    policy: rt.policy,
    falsified: state.guards.falsified,
    externalSteps: lookup(inPlan, () => plan.steps.map((s) => s.id)),
    retiredSteps: lookup(
      (id) => Object.hasOwn(steps, id) && !inPlan(id),
      () => Object.keys(steps).filter((id) => !inPlan(id)),
    ),
    externalAssumptions: plan.assumptions.map((a) => a.id),
    toolArguments: rt.toolArguments,
    sideEffectTools: rt.sideEffectTools,
    availableFacts: lookup(
      (key) => usable(key) || planProduces(plan, key),
      () => [...Object.keys(facts).filter(usable), ...plan.steps.flatMap((s) => s.produces ?? [])],
    ),
    canExtend: true,
  });
}

/** Membership by `has`; the names themselves only when iterated. */
function lookup(has: (key: string) => boolean, list: () => string[]): KeyLookup {
  return { has, [Symbol.iterator]: () => list()[Symbol.iterator]() };
}

export function extendRequest(
  rt: Runtime,
  state: PlanManagerStateType,
  usage: UsageEntry[],
  signal?: AbortSignal,
): ExtendRequest {
  const plan = state.plan!;
  const maxCost = rt.policy.budget.maxCost;
  const request: ExtendRequest = {
    goal: state.goal,
    plan,
    done: [],
    facts: { trusted: {} },
    usedIds: [],
    extensions: extensionsOf(state),
    constraints: state.guards.constraints,
    budget: maxCost !== undefined ? { remaining: Math.max(0, maxCost - state.budget.spent) } : {},
    tools: rt.toolInfo,
    ...rt.agentCatalogue,
    validate: (d) => {
      const v = validateExtension(rt, state, d);
      return v.ok ? [] : v.issues;
    },
    reportUsage: (u) => usage.push({ ...u, purpose: "extend", at: new Date(rt.clock.now()).toISOString() }),
  };
  if (signal !== undefined) request.signal = signal;
  // These three grow with the plan: built when the planner first reads them, so a planner that
  // reads only the plan's tail does not pay for them (docs/decisions/0030-long-runs-per-step-cost.md).
  lazy(request, "done", () =>
    plan.steps.map((s) => ({
      id: s.id,
      goal: s.goal,
      tool: s.tool ?? null,
      status: state.steps[s.id]?.status ?? "pending",
    })),
  );
  lazy(request, "facts", () => ({ trusted: factValues(state.facts) }));
  lazy(request, "usedIds", () => [...new Set([...plan.steps.map((s) => s.id), ...Object.keys(state.steps)])]);
  return request;
}

/**
 * A field computed on its first read, then a plain data field: enumerable, so a spread or JSON of
 * the request shows it; writable, so a planner may replace it.
 */
function lazy<T extends object, K extends keyof T>(target: T, key: K, make: () => T[K]): void {
  const settle = (value: T[K]) =>
    Object.defineProperty(target, key, { value, writable: true, enumerable: true, configurable: true });
  Object.defineProperty(target, key, {
    get: () => {
      const value = make();
      settle(value);
      return value;
    },
    set: settle,
    enumerable: true,
    configurable: true,
  });
}

/**
 * The next plan version: every step kept, the extension's appended. Like a replan, it may not
 * widen what the run can do unseen (the capability guard holds it for a person), and under
 * `reviewReplans` a person reviews it anyway.
 */
export function extensionVersion(rt: Runtime, state: PlanManagerStateType, draft: PlanDraft) {
  const previous = state.plan!;
  const added = enrichDraft(draft, rt.metadataOf);
  // The channel is written the steps this version adds, not the whole plan: it builds `next` the
  // same way (runtime/plan-channel.ts; docs/decisions/0030-long-runs-per-step-cost.md).
  const append = appendToPlan(previous, added);
  const next = planWrites(previous, [append])!;
  return { previous, added, append, next };
}

/** What the quality gate checks of an extension: the steps and assumptions it appends, read against the whole version. */
export function extensionGate(state: PlanManagerStateType, version: ReturnType<typeof extensionVersion>): GateInput {
  const known = new Set(version.previous.assumptions.map((a) => a.id));
  return {
    plan: version.next,
    goal: state.goal,
    added: new Set(version.added.steps.map((s) => s.id)),
    addedAssumptions: new Set((version.added.assumptions ?? []).filter((a) => !known.has(a.id)).map((a) => a.id)),
  };
}

export function applyExtension(
  rt: Runtime,
  state: PlanManagerStateType,
  config: LangGraphRunnableConfig,
  version: ReturnType<typeof extensionVersion>,
  findings: readonly QualityFinding[] = [],
): PlanManagerUpdate {
  const { previous, added, append, next } = version;
  // What the extension added, not what it kept: the record does not grow with the run
  // (docs/decisions/0050-compact-extension-records.md).
  const changed = changedFacts(state.facts, state.replans);
  const record: ReplanRecord = {
    kind: "extend",
    trigger: "horizon",
    scope: "extend",
    fromVersion: previous.version,
    toVersion: next.version,
    invalidatedSteps: [],
    keptCount: previous.steps.length,
    newSteps: added.steps.map((s) => s.id),
    facts: changed.lists,
    at: new Date(rt.clock.now()).toISOString(),
  };
  rememberLabels(record, changed.labels);
  const held = reviewNewSteps(rt, state, added.steps, next.steps, { appended: true });
  if (held) {
    const proposal = { plan: next, record, affected: [], replacement: added.steps.map((s) => s.id), scopeChanges: [] };
    const decision = decide(held.rule, {
      after: state.decisions.length,
      attempt: 0,
      failureClass: "none",
      reason: held.reason,
      planVersion: previous.version,
      at: record.at!,
    });
    const update = holdProposal(rt, state, config, { decision, notes: [] }, proposal, held);
    const pendingHuman = withFindings(update.pendingHuman as PendingHuman, findings);
    return { ...update, ...qualityWrite(state, findings), pendingHuman };
  }
  const update: PlanManagerUpdate = {
    plan: append,
    planHistory: historyEntry(previous, next),
    replans: record,
    ...qualityWrite(state, findings),
  };
  // The quality gate holds the version before its first step (docs/decisions/0040-plan-quality-gate.md).
  const hold = holdDecision(rt, config, findings, next, state.decisions.length);
  if (!rt.reviewReplans && !hold) return { ...update, status: "running" };
  const extension = `extension ${extensionsOf(state) + 1}: ${added.steps.length} more steps`;
  const reason = `approve plan version ${next.version} (${extension})`;
  const pendingHuman = withFindings(
    versionReview(rt, state.goal, next, record, reason),
    findings,
    hold ? `${hold.decision.reason}; ${reason}` : undefined,
  );
  return { ...update, ...(hold ? { decisions: hold.decision } : {}), status: "awaiting_review", pendingHuman };
}

/**
 * The replanner node, in three phases (docs/architecture.md "The graph", replanner). Gather:
 * replan memory and the planner, awaited as the pure decision (policy/replan/replan-step.ts) asks for
 * them — memory first, then the planner, again while an invalid draft may be sent back. Decide: that function,
 * once it has all it asked for, gives the outcome (escalate, hold for a person, or plan version
 * N+1) and the store writes it implies. Apply: the state writes, then the store writes; a store
 * write that fails is a `memory` event, never the run's failure.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../runtime/options.js";
import type { PlanManagerStateType, PlanManagerUpdate, UsageEntry } from "../runtime/state.js";
import { decideReplan, type PlannerAnswer, type ReplanStep } from "../policy/replan/replan-step.js";
import { validateReplanDraft } from "../policy/replan/draft.js";
import type { MemoryRead } from "../policy/replan/recall.js";
import { outcomeId } from "../runtime/replan-memory.js";
import { chargeReplan, draftRules, frameOf } from "./replanner/context.js";
import { readMemory, writeMemory } from "./replanner/memory-read.js";
import { askPlanner } from "./replanner/request.js";
import { applyOutcome } from "./replanner/apply.js";
import { modelTrace } from "../contracts/trace.js";
import { effectsOf } from "./shared/compensate-next.js";
import { checkVersion } from "./shared/quality-hold.js";
import type { ProposedVersion } from "../policy/replan/replan.js";
import type { GateInput } from "../policy/quality/gate.js";

export function makeReplannerNode(rt: Runtime) {
  const rules = draftRules(rt);
  const now = () => new Date(rt.clock.now()).toISOString();
  return async function replanner(
    state: PlanManagerStateType,
    config: LangGraphRunnableConfig,
  ): Promise<PlanManagerUpdate> {
    const frame = frameOf(state, now());
    if (!frame) return {};
    const store = config.store;
    const usage: UsageEntry[] = [];
    const answers: PlannerAnswer[] = [];
    let read: MemoryRead | undefined;
    const effects = effectsOf(state, config);
    const decide = (): ReplanStep =>
      decideReplan({
        frame: { ...frame, at: now() },
        rules,
        memory: store ? rt.memory.mode : "off",
        read,
        answers,
        outcomeId: outcomeId(config.configurable, frame.plan.version),
        run: state,
        effects,
      });
    // Gather: each step asks for one more thing, and the planner's answers are bounded by policy.replanDraftRetries.
    let step = decide();
    while (step.next !== "apply") {
      if (step.next === "read_memory") read = await readMemory(rt.memory, store!, step.key, frame.assumption, now());
      else {
        const validate = (draft: unknown) => {
          const v = validateReplanDraft(rules, frame, draft);
          return v.ok ? [] : v.issues;
        };
        const reportUsage = (u: Omit<UsageEntry, "at" | "purpose">) =>
          usage.push({ ...u, purpose: "replan", at: now() });
        const ask = {
          goal: state.goal,
          budget: state.budget,
          frame,
          hints: step.hints,
          issues: step.issues,
          validate,
          reportUsage,
          trace: modelTrace(config, "planner", { purpose: "replan", planVersion: frame.plan.version }),
        };
        answers.push(await askPlanner(rt, ask, config.signal));
      }
      step = decide();
    }
    // The quality gate on the version it proposes, before its first step (docs/decisions/0040-plan-quality-gate.md).
    const proposal = step.outcome.kind === "escalate" ? undefined : step.outcome.proposal;
    const findings = proposal ? await checkVersion(rt, config, versionAdds(state, proposal), usage, "replan") : [];
    // Apply: state writes first; the store's after the decision, whatever becomes of them.
    const budget = step.charged ? chargeReplan(state, usage) : undefined;
    const spent = { usage, budget, facts: frame.falsification.labels.facts, findings };
    const update = applyOutcome(rt, state, config, step, spent);
    if (store && step.writes.length > 0) await writeMemory(store, rt.memory.namespace, step.writes, config);
    return update;
  };
}

/** What the gate checks of a replan's version: the steps and assumptions it adds, read against the whole version. */
function versionAdds(state: PlanManagerStateType, proposal: ProposedVersion): GateInput {
  const known = new Set((state.plan?.assumptions ?? []).map((a) => a.id));
  return {
    plan: proposal.plan,
    goal: state.goal,
    added: new Set(proposal.replacement),
    addedAssumptions: new Set(proposal.plan.assumptions.filter((a) => !known.has(a.id)).map((a) => a.id)),
  };
}

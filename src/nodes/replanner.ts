/**
 * The replanner node, a small loop around a pure step machine (docs/architecture.md "The graph",
 * replanner; docs/decisions/0056-replan-gathers-through-one-port.md). Gather: the decision
 * (policy/replan/replan-step.ts) asks for one thing at a time — replan memory, the planner (again
 * while an invalid draft may be sent back), the reviewer on the proposed version — and the node's
 * one gather port performs it. Decide: once it has all it asked for, the decision gives the outcome
 * (escalate, hold for a person, or plan version N+1), the quality gate's findings and hold, and the
 * store writes it implies. Apply: the state writes, then the store writes; a store write that fails
 * is a `memory` event, never the run's failure.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../runtime/options.js";
import type { PlanManagerStateType, PlanManagerUpdate, UsageEntry } from "../runtime/state.js";
import { decideReplan, withGathered, type Gathering, type ReplanStep } from "../policy/replan/replan-step.js";
import { outcomeId } from "../runtime/replan-memory.js";
import { draftRules, frameOf } from "./replanner/context.js";
import { replanPort } from "./replanner/port.js";
import { effectsOf } from "./shared/compensate-next.js";

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
    const port = replanPort(rt, { state, config, frame, rules, usage, now });
    // The run's settings decide; the replan's data is what they decide about.
    const settings = { rules, memory: store ? rt.memory.mode : "off", reviewer: rt.reviewer !== undefined } as const;
    const given = {
      outcomeId: outcomeId(config.configurable, frame.plan.version),
      run: state,
      effects: effectsOf(state, config),
    };
    let gathering: Gathering = { answers: [] };
    const decide = (): ReplanStep => decideReplan(settings, { frame: { ...frame, at: now() }, ...given, ...gathering });
    // Gather: each step asks for one more thing, and the planner's answers are bounded by policy.replanDraftRetries.
    let step = decide();
    while (step.next !== "apply") {
      gathering = withGathered(gathering, await port.gather(step));
      step = decide();
    }
    // Apply: the port writes state, then the store.
    return port.apply(step);
  };
}

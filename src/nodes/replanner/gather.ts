/**
 * The replanner's one gather port (docs/decisions/0056-replan-gathers-through-one-port.md): it
 * performs whatever the pure replan decision (policy/replan/replan-step.ts) asks for — replan
 * memory's entries, a draft from the planner, the reviewer's findings about the proposed version —
 * and hands it back as data. What the planner and the reviewer spend is pushed to `usage`.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../../runtime/options.js";
import type { PlanManagerStateType, UsageEntry } from "../../runtime/state.js";
import type { Gathered, ReplanAsk } from "../../policy/replan/replan-step.js";
import { validateReplanDraft, type DraftRules, type ReplanFrame } from "../../policy/replan/draft.js";
import { modelTrace } from "../../contracts/trace.js";
import { reviewVersion } from "../shared/quality-hold.js";
import { readMemory } from "./memory-read.js";
import { askPlanner, type PlannerAsk } from "./request.js";

/** One replan of one run: what the port's calls carry. */
export interface ReplanRun {
  state: PlanManagerStateType;
  config: LangGraphRunnableConfig;
  frame: ReplanFrame;
  rules: DraftRules;
  usage: UsageEntry[];
  /** The clock, read as the calls answer. */
  now: () => string;
}

/** The port: one ask in, what it gathered out. Replan memory is asked only when the run has a store. */
export function replanGather(rt: Runtime, run: ReplanRun): (ask: ReplanAsk) => Promise<Gathered> {
  const { config, frame } = run;
  return async (ask) => {
    if (ask.next === "read_memory")
      return { read: await readMemory(rt.memory, config.store!, ask.key, frame.assumption, run.now()) };
    if (ask.next === "review_version") {
      const version = { goal: run.state.goal, plan: ask.plan };
      return { reviewed: await reviewVersion(rt, config, version, run.usage, "replan") };
    }
    return { answer: await askPlanner(rt, plannerAsk(run, ask), config.signal) };
  };
}

/** The planner's request for this ask: the hints and issues it carries, the draft's validator, the usage hook. */
function plannerAsk(run: ReplanRun, ask: Extract<ReplanAsk, { next: "ask_planner" }>): PlannerAsk {
  const { state, frame, rules } = run;
  return {
    goal: state.goal,
    budget: state.budget,
    frame,
    hints: ask.hints,
    issues: ask.issues,
    validate: (draft) => {
      const v = validateReplanDraft(rules, frame, draft);
      return v.ok ? [] : v.issues;
    },
    reportUsage: (u) => run.usage.push({ ...u, purpose: "replan", at: run.now() }),
    trace: modelTrace(run.config, "planner", { purpose: "replan", planVersion: frame.plan.version }),
  };
}

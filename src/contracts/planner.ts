/** The planner interface (docs/architecture.md "State and channels"): where plans and replacement steps come from. */
import type { PlanIssue } from "../plan/validate.js";
import type { Plan, PlanDraft } from "../plan/schema/plan.js";
import type { ModelTier, Step } from "../plan/schema/step.js";
import type { ModelTrace } from "./trace.js";
import type { UsageEntry } from "./usage.js";

/** What a planner may know about a tool. */
export interface ToolInfo {
  name: string;
  description: string;
  /** JSON schema of the tool's arguments. */
  parameters?: unknown;
  sideEffects?: string[];
}

/** What a planner may know about an agent a step can name instead of a tool (docs/decisions/0021-agent-steps.md). */
export interface AgentInfo {
  name: string;
  /** `model`: a chat model that answers with the step's `produces`; `agent`: an agent graph with its own tools. */
  kind: "model" | "agent";
  description: string;
}

/** Agents and model tiers, for planners that assign steps to them; absent when none are configured. */
export interface AgentCatalogue {
  agents?: AgentInfo[];
  /** The model tiers configured (`models`), cheapest first. */
  tiers?: ModelTier[];
}

/** What `Planner.plan` receives: the goal, the trusted input facts, the tools and agents a step may name. */
export interface PlanRequest extends AgentCatalogue {
  goal: string;
  /** Trusted fact values. */
  facts: Record<string, unknown>;
  tools: ToolInfo[];
  /** Constraints from a reviewer ("replan" answers at plan review). */
  constraints: string[];
  /** Validates a draft against the registry and the policy; planners that can revise (LLMs) use it. */
  validate: (draft: unknown) => PlanIssue[];
  /** Model usage is reported here so it lands in state and budgets. */
  reportUsage: (entry: Omit<UsageEntry, "at" | "purpose">) => void;
  /** Aborted when `policy.plannerTimeoutMs` passes or the run stops: pass it on to model calls. */
  signal?: AbortSignal;
}

/**
 * What `Planner.replan` receives when the ladder replans: the broken assumption or trigger, the affected
 * steps, the facts by trust label, what was already tried, the budget left, memory hints and the previous
 * draft's issues (docs/guides/replanning.md).
 */
export interface ReplanRequest extends AgentCatalogue {
  goal: string;
  scope: "local" | "global";
  /** What happened, in words (and the rule that fired). */
  trigger: string;
  brokenAssumption?: string;
  /** The current plan. */
  plan: Plan;
  /** The steps the returned steps replace. */
  affectedSteps: Step[];
  facts: { trusted: Record<string, unknown>; suspect: Record<string, unknown> };
  /** Approaches already tried (tool/args fingerprints and steps that failed), not to repeat. */
  excluded: string[];
  /** Pending scope changes, for a global replan. */
  scopeChanges: string[];
  /** Constraints from a person. */
  constraints: string[];
  budget: { remaining?: number; replanRemaining?: number };
  tools: ToolInfo[];
  /**
   * Replan memory in `hint` mode: replacements that fixed the same broken assumption on steps
   * of the same shape in other threads, with how often reusing them worked. Absent otherwise.
   */
  hints?: ReplanHint[];
  /**
   * What was wrong with this replan's previous draft (the validator's typed issues, or a fact the
   * draft would leave unproduced: code `dropped_fact`): fix them. Absent on the first request; sent
   * at most `policy.replanDraftRetries` times (default 1) before `replan.invalid-draft` escalates.
   */
  issues?: PlanIssue[];
  validate: (draft: unknown) => PlanIssue[];
  reportUsage: (entry: Omit<UsageEntry, "at" | "purpose">) => void;
  /** Aborted when `policy.plannerTimeoutMs` passes or the run stops: pass it on to model calls. */
  signal?: AbortSignal;
}

/** A rolling horizon's next steps: asked when every planned step has finished and the plan is not complete. */
export interface ExtendRequest extends AgentCatalogue {
  goal: string;
  /** The current plan (its steps stay; the answer's steps are appended). */
  plan: Plan;
  /** What was done so far, in plan order. */
  done: { id: string; goal: string; tool: string | null; status: string }[];
  /** Trusted fact values. */
  facts: { trusted: Record<string, unknown> };
  /** Step ids no new step may take: those of the plan and of steps earlier versions removed. */
  usedIds: string[];
  /** Extensions made before this one (the first request has 0). */
  extensions: number;
  /** Constraints from a person. */
  constraints: string[];
  budget: { remaining?: number };
  tools: ToolInfo[];
  validate: (draft: unknown) => PlanIssue[];
  reportUsage: (entry: Omit<UsageEntry, "at" | "purpose">) => void;
  /** Aborted when `policy.plannerTimeoutMs` passes or the run stops: pass it on to model calls. */
  signal?: AbortSignal;
}

/** A replacement remembered from another thread (its arguments from facts are `inputs` references). */
export interface ReplanHint {
  key: string;
  steps: Step[];
  uses: number;
  successes: number;
}

/**
 * Every method gets, beside its request, the run's `trace`: the callbacks given to `invoke`
 * (LangSmith's tracer, any handler) with metadata and tags saying what the call is for. A planner
 * that calls a model passes them on (`llmPlanner` does), so a trace shows its calls in the run.
 */
export interface Planner {
  plan(request: PlanRequest, trace?: ModelTrace): Promise<PlanDraft>;
  /** Without it the planner cannot replan, and every replan rung escalates. */
  replan?(request: ReplanRequest, trace?: ModelTrace): Promise<PlanDraft>;
  /**
   * The next steps of a goal planned a few steps at a time (drafts with `complete: false`).
   * Without it, such a draft is rejected by validation before any tool runs.
   */
  extend?(request: ExtendRequest, trace?: ModelTrace): Promise<PlanDraft>;
}

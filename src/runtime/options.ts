/** Options of `createPlanManager`, validated at construction. */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { FallbackClassifier } from "../contracts/classifier.js";
import { PlanManagerError } from "../errors.js";
import { acceptedArguments } from "./tool-arguments.js";
import type { ToolMetadata } from "../plan/enrich.js";
import {
  resolvePolicy,
  resolveReplanMemory,
  type PolicyOptions,
  type ReplanMemoryOptions,
  type ResolvedPolicy,
  type ResolvedReplanMemory,
} from "../policy/options.js";
import { unregisteredTools } from "../policy/memory/memory.js";
import type { ReplanTemplate } from "../policy/options.js";
import type { AgentCatalogue, Planner, ToolInfo } from "../contracts/planner.js";
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import {
  agentInfo,
  resolveAgents,
  resolveModels,
  type AgentHandle,
  type ModelTiers,
  type StepAgent,
} from "../steps/handle.js";
import { resolvePrices, type PriceTable } from "../steps/usage-meter.js";
import { type ModelTier } from "../plan/schema/step.js";
import { TIER_ORDER } from "../policy/ladder/agent-routing.js";
import { resolveClock, type Clock } from "./clock.js";
import { checkShape } from "./option-shape.js";
import { toolInfoOf, toolMetadata, toolRegistry } from "./tool-registry.js";

/**
 * Every option's name. A key missing here fails the type check, so an option added to
 * `PlanManagerOptions` is accepted as soon as it is declared.
 */
const OPTION_NAMES: readonly string[] = Object.keys({
  tools: true,
  planner: true,
  policy: true,
  reviewPlan: true,
  reviewReplans: true,
  classifier: true,
  clock: true,
  recursionLimit: true,
  replanMemory: true,
  replanTemplates: true,
  agents: true,
  models: true,
  prices: true,
  effects: true,
  reviewer: true,
} satisfies Record<keyof PlanManagerOptions, true>);

export type { FallbackClassifier } from "../contracts/classifier.js";
export type { StepAgent, AgentGraph, ModelTiers } from "../steps/handle.js";
export type { Clock } from "./clock.js";

/** Options of `createPlanManager` (docs/guides/configuration.md). */
export interface PlanManagerOptions {
  /** LangChain tools (`tool()` from @langchain/core/tools). A step's `tool` names one. Required. */
  tools: readonly StructuredToolInterface[];
  /** Where plans come from: `staticPlanner(...)` or `llmPlanner(...)`. Required. */
  planner: Planner;
  /** Guardrails and defaults of the response ladder. Defaults: see `PolicyOptions`. */
  policy?: PolicyOptions;
  /** Interrupt for approval before the first step. Default false. */
  reviewPlan?: boolean;
  /** Also ask for approval after each replan (needs `reviewPlan`). Default false. */
  reviewReplans?: boolean;
  /** Optional classifier for failures no rule recognises. Default: none (they escalate). */
  classifier?: FallbackClassifier;
  /** Clock and sleep. Default: real time. */
  clock?: Partial<Clock>;
  /**
   * Default LangGraph recursion limit of the compiled graph (supersteps per invoke; one step
   * attempt is one superstep). Default 10,000. A per-call `recursionLimit` overrides it.
   */
  recursionLimit?: number;
  /**
   * Replan memory across threads (docs/architecture.md "Replan memory") on the store given to `compile({ store })`.
   * Without a store, memory is off. Default: off (or `reuse` when `replanTemplates` are given).
   */
  replanMemory?: ReplanMemoryOptions;
  /** Replacements given up front, per broken assumption (rule-based fallback plans). */
  replanTemplates?: readonly ReplanTemplate[];
  /**
   * Agents a step may name (`step.agent`) instead of a tool: a chat model (answers with structured
   * output holding the step's `produces`) or a compiled agent graph (`createAgent`, a deep agent).
   * Default: none.
   */
  agents?: Readonly<Record<string, StepAgent>>;
  /** Chat models by tier: a tiered agent step answered by a chat model runs on `models[tier]`. Default: none. */
  models?: ModelTiers;
  /** USD per million input/output tokens, by model name, for agent steps' usage entries. Default: none (cost 0). */
  prices?: PriceTable;
  /**
   * Side-effecting calls (docs/decisions/0038-effect-journal.md). `honoursKeys`: tools that
   * do an operation once per `config.configurable.idempotencyKey`, so a call whose outcome is unknown
   * is simply made again under its key (as a step's `honoursIdempotencyKey: true`). Default: none.
   */
  effects?: { honoursKeys?: readonly string[] };
  /**
   * A chat model that reviews every plan version before its first step, as a red team
   * (docs/decisions/0040-plan-quality-gate.md): its findings join the gate's (rule `quality.reviewer`).
   * It must support structured output. Not asked when `policy.quality` is `false`. Default: none.
   */
  reviewer?: BaseChatModel;
}

export interface Runtime {
  tools: ReadonlyMap<string, StructuredToolInterface>;
  toolNames: ReadonlySet<string>;
  /** Per tool, the argument names it accepts (undefined: any). */
  toolArguments: ReadonlyMap<string, readonly string[] | undefined>;
  toolInfo: ToolInfo[];
  planner: Planner;
  /** Whether the planner can replan (has `replan`): decides the replan rungs and the options a person is offered. */
  canReplan: boolean;
  policy: ResolvedPolicy;
  reviewPlan: boolean;
  reviewReplans: boolean;
  recursionLimit: number;
  classifier?: FallbackClassifier;
  memory: ResolvedReplanMemory;
  clock: Clock;
  metadataOf(tool: string): ToolMetadata | undefined;
  /** Tools whose metadata declares side effects. */
  sideEffectTools: ReadonlySet<string>;
  agents: ReadonlyMap<string, AgentHandle>;
  agentNames: ReadonlySet<string>;
  models: Partial<Record<ModelTier, BaseChatModel>>;
  /** The tiers `models` configures. */
  tiers: ModelTier[];
  prices?: PriceTable;
  /** What planners are told about the agents and tiers (empty without agents). */
  agentCatalogue: AgentCatalogue;
  /** Tools declared to honour idempotency keys (`effects.honoursKeys`). */
  honoursKeys: ReadonlySet<string>;
  /** The plan quality gate's reviewer model (`reviewer`). */
  reviewer?: BaseChatModel;
}

export function resolveOptions(options: PlanManagerOptions): Runtime {
  checkShape(options, OPTION_NAMES);
  const tools = toolRegistry(options.tools);
  if (options.reviewReplans && !options.reviewPlan) {
    throw new PlanManagerError("invalid_options", "reviewReplans needs reviewPlan: true", { path: "reviewReplans" });
  }
  const policy = resolvePolicy(options.policy);
  checkReplanTools(policy.replanTools, tools);
  const unknown = (options.effects?.honoursKeys ?? []).find((name) => !tools.has(name));
  if (unknown !== undefined)
    throw new PlanManagerError(
      "invalid_options",
      `effects.honoursKeys names tool ${JSON.stringify(unknown)}, which is not in tools; list only registered tools`,
      { path: "effects.honoursKeys" },
    );
  const metadataOf = (name: string) => toolMetadata(tools.get(name));
  const runtime: Runtime = {
    tools,
    toolNames: new Set(tools.keys()),
    toolArguments: new Map([...tools].map(([name, t]) => [name, acceptedArguments(t.schema)])),
    toolInfo: [...tools.values()].map((t) => toolInfoOf(t, metadataOf(t.name))),
    planner: options.planner,
    canReplan: typeof options.planner.replan === "function",
    policy,
    reviewPlan: options.reviewPlan ?? false,
    reviewReplans: options.reviewReplans ?? false,
    recursionLimit: options.recursionLimit ?? 10_000,
    memory: resolveReplanMemory(options.replanMemory, options.replanTemplates),
    clock: resolveClock(options.clock),
    metadataOf,
    sideEffectTools: new Set([...tools.keys()].filter((name) => (metadataOf(name)?.sideEffects?.length ?? 0) > 0)),
    ...agentOptions(options),
    honoursKeys: new Set(options.effects?.honoursKeys ?? []),
  };
  if (options.classifier) runtime.classifier = options.classifier;
  if (options.reviewer !== undefined) runtime.reviewer = checkReviewer(options.reviewer);
  checkTemplateTools(runtime);
  return runtime;
}

/** A reviewer is a chat model with structured output: anything else fails here, not at the first plan. */
function checkReviewer(reviewer: unknown): BaseChatModel {
  const model = reviewer as { invoke?: unknown; withStructuredOutput?: unknown } | null;
  if (typeof model?.invoke === "function" && typeof model.withStructuredOutput === "function")
    return reviewer as BaseChatModel;
  throw new PlanManagerError(
    "invalid_options",
    "reviewer must be a LangChain chat model with structured output (withStructuredOutput)",
    { path: "reviewer" },
  );
}

function agentOptions(options: PlanManagerOptions) {
  const agents = resolveAgents(options.agents);
  const models = resolveModels(options.models);
  const tiers = TIER_ORDER.filter((t) => models[t] !== undefined);
  const prices = resolvePrices("createPlanManager", options.prices);
  const info = [...agents.values()].map((a) => agentInfo(a));
  return {
    agents,
    agentNames: new Set(agents.keys()),
    models,
    tiers,
    ...(prices ? { prices } : {}),
    agentCatalogue: info.length > 0 ? { agents: info, ...(tiers.length > 0 ? { tiers } : {}) } : {},
  };
}

/** A template is written against this registry: a tool it names must be there from the start. */
function checkTemplateTools(runtime: Runtime) {
  runtime.memory.templates.forEach((t, i) => {
    const missing = unregisteredTools(t.steps, runtime.toolNames);
    if (missing.length > 0)
      throw new PlanManagerError(
        "invalid_options",
        `replanTemplates[${i}]: tool ${missing.join(", ")} is not registered`,
        {
          path: `replanTemplates[${i}].steps`,
        },
      );
  });
}

/** An allow-list names registered tools: a misspelt name would silently make every replan of it wait. */
function checkReplanTools(replanTools: ResolvedPolicy["replanTools"], tools: ReadonlyMap<string, unknown>): void {
  if (typeof replanTools === "string") return;
  replanTools.forEach((name, i) => {
    if (tools.has(name)) return;
    const path = `policy.replanTools[${i}]`;
    const registered = [...tools.keys()].join(", ") || "none";
    throw new PlanManagerError(
      "invalid_options",
      `${path}: "${name}" is not a registered tool (tools: ${registered})`,
      {
        path,
      },
    );
  });
}

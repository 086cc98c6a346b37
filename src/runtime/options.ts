/** Options of `createPlanManager`, validated at construction. */
import type { StructuredToolInterface } from "@langchain/core/tools";
import type { FallbackClassifier } from "../contracts/classifier.js";
import { PlanManagerError } from "../errors.js";
import { nearest } from "../plan/nearest.js";
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
import { RESERVED_KEYS } from "../plan/schema/primitives.js";
import { type ModelTier } from "../plan/schema/step.js";
import { TIER_ORDER } from "../policy/ladder/agent-routing.js";
import { z } from "zod";
import { toJsonSchema } from "@langchain/core/utils/json_schema";

export type { FallbackClassifier } from "../contracts/classifier.js";
export type { StepAgent, AgentGraph, ModelTiers } from "../steps/handle.js";

/** Time, injectable so that tests never wait. */
export interface Clock {
  /** Epoch milliseconds. Default `Date.now`. */
  now(): number;
  /** Waits `ms` milliseconds (retry backoff). Default: a real timer. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

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

/** Node fires a timer of more than 2^31 − 1 ms after 1 ms: longer waits are chained. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const realSleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (!(ms > 0) || signal?.aborted) return resolve();
    let left = ms;
    let timer: ReturnType<typeof setTimeout>;
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const next = () => {
      if (left <= 0) return done();
      const piece = Math.min(left, MAX_TIMER_MS);
      left -= piece;
      timer = setTimeout(next, piece);
    };
    next();
    signal?.addEventListener("abort", done, { once: true });
  });

/**
 * The clock, checked where it enters: `now` must return epoch milliseconds as a finite number.
 * It is read once here (a clock that returns a string fails at construction) and checked on every
 * read after, because a NaN or a string reaching a record would break the thread's next write.
 */
function resolveClock(clock: Partial<Clock> | undefined): Clock {
  for (const field of ["now", "sleep"] as const) {
    if (clock?.[field] !== undefined && typeof clock[field] !== "function")
      throw new PlanManagerError("invalid_options", `clock.${field} must be a function`, { path: `clock.${field}` });
  }
  const sleep = clock?.sleep ?? realSleep;
  const userNow = clock?.now;
  if (!userNow) return { now: Date.now, sleep };
  const now = () => {
    const t: unknown = userNow();
    if (typeof t === "number" && Number.isFinite(t)) return t;
    const shown =
      typeof t === "string" ? JSON.stringify(t) : typeof t === "object" && t !== null ? "an object" : String(t);
    const message = `clock.now must return epoch milliseconds as a finite number; it returned ${shown}`;
    throw new PlanManagerError("invalid_options", message, { path: "clock.now" });
  };
  now();
  return { now, sleep };
}

const OptionsShape = z.object({
  tools: z.array(z.unknown()),
  planner: z.object({}).passthrough(),
  reviewPlan: z.boolean().optional(),
  reviewReplans: z.boolean().optional(),
  recursionLimit: z.number().int().min(10).max(1_000_000).optional(),
  effects: z
    .object({ honoursKeys: z.array(z.string().min(1)).max(1_000).optional() })
    .strict()
    .optional(),
});

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

/** A key no option has is refused: a typo (`reviewPlans`) taken silently would leave its option at the default. */
function refuseUnknownOption(options: object): void {
  const key = Object.keys(options).find((k) => !OPTION_NAMES.includes(k));
  if (key === undefined) return;
  const near = nearest(key, OPTION_NAMES);
  const hint =
    near === undefined ? `the options are: ${OPTION_NAMES.join(", ")}` : `did you mean ${JSON.stringify(near)}?`;
  throw new PlanManagerError("invalid_options", `createPlanManager: ${JSON.stringify(key)} is not an option; ${hint}`, {
    path: key,
  });
}

export function resolveOptions(options: PlanManagerOptions): Runtime {
  checkShape(options);
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

/** The options object, its top-level fields and the planner, checked where they enter; each error names the field. */
function checkShape(options: PlanManagerOptions): void {
  if (options === null || typeof options !== "object") {
    throw new PlanManagerError(
      "invalid_options",
      "createPlanManager(options): options must be an object with `tools` and `planner`",
    );
  }
  refuseUnknownOption(options);
  const shape = OptionsShape.safeParse(options);
  if (!shape.success) {
    const issue = shape.error.issues[0]!;
    const path = issue.path.map(String).join(".") || "options";
    throw new PlanManagerError("invalid_options", `${path}: ${issue.message}`, { path });
  }
  if (typeof options.planner.plan !== "function") {
    throw new PlanManagerError(
      "invalid_options",
      "planner.plan must be a function: use staticPlanner({ plan }) or llmPlanner({ model })",
      { path: "planner.plan" },
    );
  }
}

/** The registry: LangChain tools by name; a non-tool or a second tool of the same name is refused. */
function toolRegistry(list: PlanManagerOptions["tools"]): Map<string, StructuredToolInterface> {
  const tools = new Map<string, StructuredToolInterface>();
  list.forEach((t, i) => {
    if (!t || typeof t.name !== "string" || typeof t.invoke !== "function") {
      throw new PlanManagerError(
        "invalid_options",
        `tools[${i}] is not a LangChain tool (needs name and invoke); create it with tool() from @langchain/core/tools`,
        { path: `tools[${i}]` },
      );
    }
    if (RESERVED_KEYS.has(t.name))
      throw new PlanManagerError(
        "invalid_options",
        `tools[${i}]: the tool name "${t.name}" is reserved (it names a member of Object.prototype); rename the tool`,
        { path: `tools[${i}].name` },
      );
    if (tools.has(t.name))
      throw new PlanManagerError("invalid_options", `tools[${i}]: two tools are named "${t.name}"`, {
        path: `tools[${i}].name`,
      });
    tools.set(t.name, t);
  });
  return tools;
}

/** What a tool's `metadata` declares that the plan can use: its side effects and its success signal. */
function toolMetadata(tool: StructuredToolInterface | undefined): ToolMetadata | undefined {
  const meta = (tool as { metadata?: Record<string, unknown> } | undefined)?.metadata;
  if (!meta) return undefined;
  const out: ToolMetadata = {};
  if (Array.isArray(meta.sideEffects))
    out.sideEffects = meta.sideEffects.filter((s): s is string => typeof s === "string");
  if (typeof meta.successSignal === "string") out.successSignal = meta.successSignal;
  return out;
}

function toolInfoOf(t: StructuredToolInterface, meta: ToolMetadata | undefined): ToolInfo {
  const info: ToolInfo = { name: t.name, description: t.description };
  try {
    info.parameters = toJsonSchema(t.schema as Parameters<typeof toJsonSchema>[0]);
  } catch {
    // A schema that cannot be converted is simply not shown to the planner.
  }
  if (meta?.sideEffects) info.sideEffects = meta.sideEffects;
  return info;
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

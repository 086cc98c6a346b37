/**
 * What `createPlanManager({ agents, models })` accepts, told apart by what it can do, never by
 * class name: a chat model answers with structured output (`withStructuredOutput`); an agent is
 * a compiled LangGraph graph (`createAgent`, a deep agent, any `StateGraph`) that takes messages.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import type { BaseMessage } from "@langchain/core/messages";
import type { RunnableConfig } from "@langchain/core/runnables";
import type { AgentInfo } from "../contracts/planner.js";
import { PlanManagerError } from "../errors.js";
import type { ModelTier } from "../plan/schema/step.js";

/** An agent: a compiled graph whose state has `messages` (LangChain's `createAgent`, `createDeepAgent`, …). */
export interface AgentGraph {
  invoke(input: { messages: BaseMessage[] }, config?: RunnableConfig): Promise<unknown>;
}

/** A step's agent: a chat model (answers with structured output) or a compiled agent graph. */
export type StepAgent = BaseChatModel | AgentGraph;

/** Models by tier: a tiered agent step answered by a chat model runs on `models[tier]`. */
export interface ModelTiers {
  fast?: BaseChatModel;
  default: BaseChatModel;
  strong?: BaseChatModel;
}

export type AgentHandle =
  { name: string; kind: "chat"; model: BaseChatModel } | { name: string; kind: "graph"; graph: AgentGraph };

const NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

function isChatModel(value: unknown): value is BaseChatModel {
  const v = value as { withStructuredOutput?: unknown; invoke?: unknown } | null;
  return typeof v?.withStructuredOutput === "function" && typeof v.invoke === "function";
}

function isGraph(value: unknown): value is AgentGraph {
  const v = value as { invoke?: unknown; getGraphAsync?: unknown; getGraph?: unknown } | null;
  return typeof v?.invoke === "function" && (typeof v.getGraphAsync === "function" || typeof v.getGraph === "function");
}

/** The `agents` option, checked where it enters: each entry a chat model or a compiled graph, named like a step id. */
export function resolveAgents(agents: unknown): Map<string, AgentHandle> {
  const out = new Map<string, AgentHandle>();
  if (agents === undefined) return out;
  if (agents === null || typeof agents !== "object" || Array.isArray(agents))
    throw new PlanManagerError("invalid_options", "agents must be an object mapping names to chat models or agents", {
      path: "agents",
    });
  for (const [name, value] of Object.entries(agents)) {
    const path = `agents.${name}`;
    if (!NAME.test(name))
      throw new PlanManagerError(
        "invalid_options",
        `${path}: an agent name starts with a letter (letters, digits, _ -)`,
        {
          path,
        },
      );
    if (isChatModel(value)) out.set(name, { name, kind: "chat", model: value });
    else if (isGraph(value)) out.set(name, { name, kind: "graph", graph: value });
    else
      throw new PlanManagerError(
        "invalid_options",
        `${path} is neither a chat model (withStructuredOutput) nor a compiled agent graph (invoke, getGraph): ` +
          `pass a LangChain chat model, createAgent(...) or a compiled StateGraph`,
        { path },
      );
  }
  return out;
}

/** The `models` option: `default` is required, `fast` and `strong` optional; each a chat model. */
export function resolveModels(models: unknown): Partial<Record<ModelTier, BaseChatModel>> {
  if (models === undefined) return {};
  if (models === null || typeof models !== "object" || Array.isArray(models))
    throw new PlanManagerError("invalid_options", "models must be { fast?, default, strong? } of chat models", {
      path: "models",
    });
  const out: Partial<Record<ModelTier, BaseChatModel>> = {};
  for (const [tier, model] of Object.entries(models)) {
    const path = `models.${tier}`;
    if (tier !== "fast" && tier !== "default" && tier !== "strong")
      throw new PlanManagerError("invalid_options", `${path} is not a tier: use fast, default or strong`, { path });
    if (!isChatModel(model))
      throw new PlanManagerError("invalid_options", `${path} must be a chat model with withStructuredOutput`, { path });
    out[tier] = model;
  }
  if (!out.default)
    throw new PlanManagerError("invalid_options", "models.default is required when models is given", {
      path: "models.default",
    });
  return out;
}

/**
 * What a planner is told about an agent: its name, whether it is a bare model or an agent with tools,
 * and its description.
 */
export function agentInfo(handle: AgentHandle): AgentInfo {
  const source = handle.kind === "chat" ? handle.model : handle.graph;
  const described = (source as { description?: unknown }).description;
  const fallback =
    handle.kind === "chat" ? "a chat model: answers with the step's produces keys" : "an agent with its own tools";
  return {
    name: handle.name,
    kind: handle.kind === "chat" ? "model" : "agent",
    description: typeof described === "string" && described.length > 0 ? described : fallback,
  };
}

/**
 * Side effects of the tools an agent may call, where they can be listed: a chat model calls none;
 * an agent made by `createAgent` lists its tools in its public `options.tools`, each with its
 * `metadata.sideEffects` or the registry's for a tool of the same name. Another graph's tools
 * cannot be listed: like a tool that declares none, it counts as read-only unless the step says.
 */
export function agentSideEffects(
  handle: AgentHandle,
  registry: (tool: string) => { sideEffects?: string[] } | undefined,
): string[] {
  if (handle.kind === "chat") return [];
  const listed = (handle.graph as { options?: { tools?: unknown } }).options?.tools;
  if (!Array.isArray(listed)) return [];
  const effects = new Set<string>();
  for (const t of listed as unknown[]) {
    const named = t as { name?: unknown; metadata?: { sideEffects?: unknown } } | null;
    const own = named?.metadata?.sideEffects;
    if (Array.isArray(own)) for (const e of own) if (typeof e === "string") effects.add(e);
    if (typeof named?.name === "string") for (const e of registry(named.name)?.sideEffects ?? []) effects.add(e);
  }
  return [...effects];
}

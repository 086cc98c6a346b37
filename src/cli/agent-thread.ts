/**
 * Threads of a createAgent graph with `planMiddleware` (langgraph-replan/agent) in the same
 * checkpoints: read from the saver's latest checkpoint, not through the plan manager's graph (whose
 * nodes are not the agent's: LangGraph would warn about the agent's pending sends on every read).
 * An agent's question is an interrupt raised inside a node, which writes no state: the status the
 * thread waits in is read from the question itself.
 */
import type { BaseCheckpointSaver, StateSnapshot } from "@langchain/langgraph";

/** Channels only planMiddleware's agent state has together. */
const isAgentState = (values: Record<string, unknown>) => "messages" in values && "planRun" in values;

/** The agent thread's snapshot as the commands read it (values, pending questions), or undefined for any other thread. */
export async function agentSnapshot(saver: BaseCheckpointSaver, thread: string): Promise<StateSnapshot | undefined> {
  const config = { configurable: { thread_id: thread } };
  const tuple = await saver.getTuple(config);
  const values = tuple?.checkpoint.channel_values as Record<string, unknown> | undefined;
  if (!tuple || !values || !isAgentState(values)) return undefined;
  const interrupts = (tuple.pendingWrites ?? [])
    .filter(([, channel]) => channel === "__interrupt__")
    .flatMap(([, , value]) => (Array.isArray(value) ? value : [value])) as { id?: string; value?: unknown }[];
  const kind = (interrupts[0]?.value as { kind?: unknown } | undefined)?.kind;
  const status =
    interrupts.length === 0 ? values.status : kind === "plan_review" ? "awaiting_review" : "awaiting_human";
  const snapshot = {
    values: { ...values, status },
    next: [],
    tasks: interrupts.length === 0 ? [] : [{ id: "agent", name: "agent", interrupts: interrupts.map(question) }],
    config: tuple.config,
    metadata: tuple.metadata,
    createdAt: tuple.checkpoint.ts,
    parentConfig: tuple.parentConfig,
  };
  return snapshot as unknown as StateSnapshot;
}

/** An agent's question with a `reason` for the CLI's line: what it asks a person to review. */
function question(i: { id?: string; value?: unknown }) {
  const value = i.value as { reason?: unknown; actionRequests?: { description?: unknown }[] } | undefined;
  const description = value?.actionRequests?.[0]?.description;
  if (!value || value.reason !== undefined || typeof description !== "string") return i;
  return { ...i, value: { ...value, reason: description } };
}

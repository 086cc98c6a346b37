import { tool } from "@langchain/core/tools";
import { MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { z } from "zod";
import {
  createPlanManager,
  staticPlanner,
  type PlanDraft,
  type PlanManagerOptions,
  type Planner,
} from "../../src/index.js";
import { fakeClock } from "./clock.js";

export type Scripted = unknown | Error | ((args: Record<string, unknown>, config: unknown) => unknown);

/** A tool that plays back a script: one entry per call (the last one repeats); errors are thrown. */
export function scriptedTool(name: string, script: Scripted[], metadata?: Record<string, unknown>) {
  const calls: Record<string, unknown>[] = [];
  const t = tool(
    async (args: Record<string, unknown>, config) => {
      calls.push(args);
      const entry = script[Math.min(calls.length - 1, script.length - 1)];
      if (entry instanceof Error) throw entry;
      if (typeof entry === "function")
        return (entry as (a: Record<string, unknown>, c: unknown) => unknown)(args, config);
      return entry;
    },
    {
      name,
      description: `scripted tool ${name}`,
      schema: z.object({}).passthrough(),
      ...(metadata ? { metadata } : {}),
    },
  );
  return Object.assign(t, { calls });
}

export function httpError(status: number, message = `HTTP ${status}`) {
  return Object.assign(new Error(message), { name: "HttpError", status });
}

/** Graph output as tests read it: exact values are asserted, so the static type is loose. */
export type Loose = Record<string, any>;

export interface Harness {
  graph: ReturnType<ReturnType<typeof createPlanManager>["compile"]>;
  clock: ReturnType<typeof fakeClock>;
  config: { configurable: { thread_id: string } };
  run: (input?: unknown) => Promise<Loose>;
  state: () => Promise<Loose>;
}

export function harness(
  plan: PlanDraft | Planner,
  tools: PlanManagerOptions["tools"],
  options: Partial<PlanManagerOptions> & {
    checkpointer?: BaseCheckpointSaver;
    threadId?: string;
    context?: Record<string, unknown>;
  } = {},
): Harness {
  const clock = fakeClock();
  const planner =
    plan !== null && typeof plan === "object" && "plan" in plan && typeof (plan as Planner).plan === "function"
      ? (plan as Planner)
      : staticPlanner({ plan: plan as PlanDraft });
  const { checkpointer = new MemorySaver(), threadId = "t1", context = {}, ...rest } = options;
  const graph = createPlanManager({ tools, planner, clock, ...rest }).compile({ checkpointer });
  const config = { configurable: { thread_id: threadId } };
  return {
    graph,
    clock,
    config,
    // The graph's output holds the public keys only; tests also read internal channels (guards),
    // so the run returns the whole state, plus the interrupt the invoke reported.
    run: async (input) => {
      const out = (await graph.invoke((input ?? { goal: "test goal", context }) as never, config)) as Record<
        string,
        any
      >;
      return { ...(await graph.getState(config)).values, ...out };
    },
    state: async () => (await graph.getState(config)).values as Record<string, any>,
  };
}

/** Decisions reduced to what tests compare exactly. */
export function brief(
  decisions: { stepId?: string; failureClass: string; action: string; rule: string; by?: string }[],
) {
  return decisions.map(
    (d) => `${d.stepId ?? "-"}: ${d.by === "person" ? "person" : d.failureClass} → ${d.action} [${d.rule}]`,
  );
}

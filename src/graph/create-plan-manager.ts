/**
 * The plan manager graph (DESIGN §1). Conditional edges are the response ladder:
 *
 *   START → planner ─┬─(reviewPlan)→ human
 *                    └─────────────→ executor ⇄ executor (success fast path)
 *   executor ─(deviation)→ classifier ─┬─ retry / fallback / skip → executor
 *                                      ├─ local / global replan  → replanner → executor | human
 *                                      ├─ escalate               → human → executor | replanner | finalize
 *                                      └─ abort                  → finalize
 *   executor ─(all steps done)→ finalize → END
 */
import { Runnable } from "@langchain/core/runnables";
import { END, START, StateGraph } from "@langchain/langgraph";
import { makeClassifierNode, routeAfterClassifier } from "../nodes/classifier.js";
import { makeExecutor } from "../nodes/executor.js";
import { finalizeNode } from "../nodes/finalize.js";
import { HUMAN_DESTINATIONS, makeHumanNode } from "../nodes/human.js";
import { makePlannerNode } from "../nodes/planner.js";
import { makeReplannerNode, routeAfterReplanner } from "../nodes/replanner.js";
import { isFinished } from "../plan/ready.js";
import { resolveOptions, type PlanManagerOptions } from "../runtime/options.js";
import { PlanManagerState, type PlanManagerStateType } from "../runtime/state.js";

export function routeAfterPlanner(state: PlanManagerStateType): "executor" | "human" | "finalize" {
  if (state.status === "failed" || !state.plan) return "finalize";
  return state.status === "awaiting_review" ? "human" : "executor";
}

export function routeAfterExecutor(state: PlanManagerStateType): "executor" | "classifier" | "human" | "finalize" {
  if (state.deviation) return "classifier";
  if (state.status === "awaiting_human") return "human";
  if (state.status === "failed" || state.status === "aborted") return "finalize";
  const plan = state.plan;
  if (!plan || plan.steps.every((s) => isFinished(state.steps[s.id]))) return "finalize";
  return "executor";
}

/**
 * A routing function as an untraced runnable. LangGraph wraps a plain function in a traced
 * RunnableLambda, which opens a callback run on every superstep (measured: about a third of a
 * millisecond per step, as much as a tool call); routing is a pure function of state and needs
 * no trace of its own.
 */
class UntracedRoute<T extends string> extends Runnable<PlanManagerStateType, T> {
  lc_namespace = ["langgraph_replan", "routes"];
  constructor(private readonly route: (state: PlanManagerStateType) => T) {
    super();
    this.name = route.name;
  }
  async invoke(state: PlanManagerStateType): Promise<T> {
    return this.route(state);
  }
}

function untraced<T extends string>(route: (state: PlanManagerStateType) => T) {
  return new UntracedRoute(route);
}

/**
 * Builds the plan manager: an uncompiled `StateGraph` the caller compiles with a checkpointer.
 * Options are validated here; an invalid option throws `PlanManagerError` naming the field.
 */
export function createPlanManager(options: PlanManagerOptions) {
  const rt = resolveOptions(options);
  const builder = new StateGraph(PlanManagerState)
    .addNode("planner", makePlannerNode(rt))
    .addNode("executor", makeExecutor(rt))
    .addNode("classifier", makeClassifierNode(rt))
    .addNode("replanner", makeReplannerNode(rt))
    .addNode("human", makeHumanNode(rt), { ends: [...HUMAN_DESTINATIONS] })
    .addNode("finalize", finalizeNode)
    .addEdge(START, "planner")
    .addConditionalEdges("planner", untraced(routeAfterPlanner), ["executor", "human", "finalize"])
    .addConditionalEdges("executor", untraced(routeAfterExecutor), ["executor", "classifier", "human", "finalize"])
    .addConditionalEdges("classifier", untraced(routeAfterClassifier), ["executor", "replanner", "human", "finalize"])
    .addConditionalEdges("replanner", untraced(routeAfterReplanner), ["executor", "human"])
    .addEdge("finalize", END);
  // One step per superstep means long plans need more supersteps than LangGraph's default
  // recursion limit (25). The compiled graph carries a default the caller can still override
  // per call with `recursionLimit` in the invoke config.
  const compile = builder.compile.bind(builder);
  builder.compile = ((...args: Parameters<typeof compile>) => compile(...args).withConfig({ recursionLimit: rt.recursionLimit })) as typeof builder.compile;
  return builder;
}

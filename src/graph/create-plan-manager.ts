/**
 * The plan manager graph (docs/architecture.md "The graph"). Conditional edges are the response ladder:
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
import { makeClassifierNode } from "../nodes/classifier.js";
import { makeExecutor } from "../nodes/executor.js";
import { finalizeNode } from "../nodes/finalize.js";
import { HUMAN_DESTINATIONS, makeHumanNode } from "../nodes/human.js";
import { makePlannerNode } from "../nodes/planner.js";
import { makeReplannerNode } from "../nodes/replanner.js";
import { makeExtenderNode } from "../nodes/extender.js";
import { resolveOptions, type PlanManagerOptions } from "../runtime/options.js";
import { settlingBranches } from "../nodes/replanner/memory-branch.js";
import { withDirectMethods } from "../storage/index.js";
import { PlanManagerInput, PlanManagerOutput, PlanManagerState, type PlanManagerStateType } from "../runtime/state.js";
import {
  routeAfterClassifier,
  routeAfterExecutor,
  routeAfterExtender,
  routeAfterPlanner,
  routeAfterReplanner,
  SEEN_WRITES,
} from "./routes.js";
import { CompiledPlanManager } from "./compiled-plan-manager.js";
import {
  narrowRouteReads,
  type CompileOptions,
  type InputSpec,
  type OutputSpec,
  type Spec,
  type State,
  type Transformers,
  type Update,
} from "./langgraph-seam.js";
import { trackNode } from "./thread-lock.js";
import { startingNode } from "./node-start.js";

/** A route: a pure function of the channels it names in `reads` (graph/routes.ts). */
type Route<T extends string> = ((state: PlanManagerStateType) => T) & {
  reads: readonly (keyof PlanManagerStateType)[];
};

/**
 * A routing function as an untraced runnable. LangGraph wraps a plain function in a traced
 * RunnableLambda, which opens a callback run on every superstep (measured: about a third of a
 * millisecond per step, as much as a tool call); routing is a pure function of state and needs
 * no trace of its own. It keeps the channels its route reads, which are all the route is given
 * (`narrowRouteReads`).
 */
class UntracedRoute<T extends string> extends Runnable<PlanManagerStateType, T> {
  lc_namespace = ["langgraph_replan", "routes"];
  readonly reads: readonly string[];
  constructor(private readonly route: Route<T>) {
    super();
    this.name = route.name;
    this.reads = route.reads;
  }
  async invoke(state: PlanManagerStateType): Promise<T> {
    return this.route(state);
  }
}

function untraced<T extends string>(route: Route<T>) {
  return new UntracedRoute(route);
}

/**
 * The uncompiled plan manager: a `StateGraph` whose `compile()` returns a `CompiledPlanManager`
 * with a default `recursionLimit` (one step attempt is one superstep, so long plans need more
 * than LangGraph's default of 25; a per-call `recursionLimit` still overrides it). A subclass,
 * so nothing LangGraph built is patched (docs/decisions/0008-compiled-graph.md).
 */
export class PlanManagerGraph extends StateGraph<Spec, State, Update, string, InputSpec, OutputSpec> {
  constructor(private readonly recursionLimit: number) {
    super({ stateSchema: PlanManagerState, input: PlanManagerInput, output: PlanManagerOutput });
  }

  override compile<const T extends Transformers = []>(
    options?: CompileOptions & { transformers?: T },
  ): CompiledPlanManager<T> {
    narrowRouteReads(
      this.branches as unknown as Parameters<typeof narrowRouteReads>[0],
      (path) => (path instanceof UntracedRoute ? path.reads : undefined),
      SEEN_WRITES,
    );
    // Delta channels load with one query on SQLite and PostgreSQL (docs/decisions/0032-saver-adapters.md).
    const compiled = super.compile({ ...options, checkpointer: withDirectMethods(options?.checkpointer) });
    const config = { ...compiled.config, recursionLimit: compiled.config?.recursionLimit ?? this.recursionLimit };
    // The same construction LangGraph's own `withConfig` uses: a new instance from the fields.
    type Fields = ConstructorParameters<typeof CompiledPlanManager<T>>[0];
    return new CompiledPlanManager<T>({ ...compiled, config } as unknown as Fields);
  }
}

/**
 * Builds the plan manager: an uncompiled graph the caller compiles with a checkpointer.
 * Options are validated here; an invalid option throws `PlanManagerError` naming the field.
 */
export function createPlanManager(options: PlanManagerOptions): PlanManagerGraph {
  const rt = resolveOptions(options);
  const graph = new PlanManagerGraph(rt.recursionLimit);
  graph
    // The nodes that await the outside world (tools, models) keep their thread held until they
    // return, even when their run was aborted; `human` and `finalize` return at once.
    // Every node starts at a step boundary: events wait for it, and a stopped run ends there (graph/node-start.ts).
    .addNode("planner", trackNode(startingNode(makePlannerNode(rt))))
    // Replan memory learns a replacement branch the moment it settles (nodes/replanner/memory-branch.ts).
    .addNode("executor", trackNode(startingNode(settlingBranches(rt, makeExecutor(rt)), { waitsForCalls: true })))
    .addNode("classifier", trackNode(startingNode(settlingBranches(rt, makeClassifierNode(rt)))))
    .addNode("replanner", trackNode(startingNode(makeReplannerNode(rt))))
    .addNode("extender", trackNode(startingNode(makeExtenderNode(rt))))
    .addNode("human", startingNode(makeHumanNode(rt)), { ends: [...HUMAN_DESTINATIONS] })
    .addNode("finalize", startingNode(finalizeNode))
    .addEdge(START, "planner")
    .addConditionalEdges("planner", untraced(routeAfterPlanner), ["executor", "human", "finalize"])
    .addConditionalEdges("executor", untraced(routeAfterExecutor), [
      "executor",
      "classifier",
      "human",
      "extender",
      "finalize",
    ])
    .addConditionalEdges("classifier", untraced(routeAfterClassifier), ["executor", "replanner", "human", "finalize"])
    .addConditionalEdges("replanner", untraced(routeAfterReplanner), ["executor", "human"])
    .addConditionalEdges("extender", untraced(routeAfterExtender), ["executor", "human"])
    .addEdge("finalize", END);
  return graph;
}

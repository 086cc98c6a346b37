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
import { Runnable, type RunnableConfig } from "@langchain/core/runnables";
import { CompiledStateGraph, END, START, StateGraph, type Command, type StateDefinition } from "@langchain/langgraph";
import { makeClassifierNode } from "../nodes/classifier.js";
import { makeExecutor } from "../nodes/executor.js";
import { finalizeNode } from "../nodes/finalize.js";
import { HUMAN_DESTINATIONS, makeHumanNode } from "../nodes/human.js";
import { makePlannerNode } from "../nodes/planner.js";
import { makeReplannerNode } from "../nodes/replanner.js";
import { makeExtenderNode } from "../nodes/extender.js";
import { withDispatch } from "../runtime/dispatch.js";
import { resolveOptions, type PlanManagerOptions } from "../runtime/options.js";
import { settlingBranches } from "../runtime/replan-memory-branch.js";
import { originalSaver, withDirectHistory } from "../runtime/saver-history.js";
import { PlanManagerInput, PlanManagerOutput, PlanManagerState, type PlanManagerStateType } from "../runtime/state.js";
import {
  routeAfterClassifier,
  routeAfterExecutor,
  routeAfterExtender,
  routeAfterPlanner,
  routeAfterReplanner,
} from "./routes.js";
import { acquireThread, trackNode, withThreadRun } from "./thread-lock.js";

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

type Spec = typeof PlanManagerState.spec;
type State = typeof PlanManagerState.State;
type Update = typeof PlanManagerState.Update;
type InputSpec = typeof PlanManagerInput.spec;
type OutputSpec = typeof PlanManagerOutput.spec;
type BaseCompile = StateGraph<Spec, State, Update, string, InputSpec, OutputSpec>["compile"];
type CompileOptions = NonNullable<Parameters<BaseCompile>[0]>;
/** Stream transformers a caller may pass to `compile` (LangGraph's own constraint, read off its signature). */
type Transformers = NonNullable<CompileOptions["transformers"]>;

/** Where LangGraph lends a parent's checkpointer to a subgraph (its `CONFIG_KEY_CHECKPOINTER`, not exported). */
const LENT_CHECKPOINTER = "__pregel_checkpointer";
/** Present when this graph runs inside a parent's task (LangGraph's `CONFIG_KEY_READ`). */
const PARENT_READ = "__pregel_read";

/**
 * The compiled plan manager: LangGraph's compiled graph, holding its thread for the length of a
 * run so that a second concurrent run on the same thread in this process fails with
 * `thread_busy` instead of calling every tool a second time (graph/thread-lock.ts).
 * `_streamIterator` is the one path `invoke`, `stream` and `streamEvents` all take, including a
 * run as a parent's subgraph node.
 */
export class CompiledPlanManager<T extends Transformers = []> extends CompiledStateGraph<
  State,
  Update,
  string,
  InputSpec,
  OutputSpec,
  StateDefinition,
  unknown,
  unknown,
  unknown,
  T
> {
  override async *_streamIterator(input: unknown, options?: Partial<RunnableConfig>): AsyncGenerator<unknown> {
    const configurable = (options?.configurable ?? {}) as Record<string, unknown>;
    const run = acquireThread({
      checkpointer: this.runCheckpointer(configurable),
      threadId: typeof configurable.thread_id === "string" ? configurable.thread_id : undefined,
      namespace: typeof configurable.checkpoint_ns === "string" ? configurable.checkpoint_ns : "",
    });
    try {
      // Calls still in flight when a run ends keep its thread held, like a node still running.
      const config = withDispatch(withThreadRun(durable(this.nestedLimit(options)), run), (work) => run.track(work));
      yield* super._streamIterator(input as Command, config);
    } finally {
      run.end();
    }
  }

  /** The checkpointer a run uses, as LangGraph resolves it: none for `false`, else a lent one, else its own. */
  private runCheckpointer(configurable: Record<string, unknown>): object | undefined {
    if (this.checkpointer === false) return undefined;
    const lent = configurable[LENT_CHECKPOINTER];
    if (typeof lent === "object" && lent !== null) return lent;
    return typeof this.checkpointer === "object" ? originalSaver(this.checkpointer) : undefined;
  }

  /**
   * Run inside a parent (a subgraph node, or `invoke` from a node), LangGraph gives this graph the
   * parent's `recursionLimit` (25 unless set), which counts this graph's own supersteps: one per
   * step attempt, so a 30-step plan would stop. A nested run takes the larger of the two.
   */
  private nestedLimit(options?: Partial<RunnableConfig>): Partial<RunnableConfig> | undefined {
    const configurable = options?.configurable ?? {};
    const nested = configurable[LENT_CHECKPOINTER] !== undefined || configurable[PARENT_READ] !== undefined;
    const own = this.config?.recursionLimit;
    if (!nested || own === undefined || (options?.recursionLimit ?? 0) >= own) return options;
    return { ...options, recursionLimit: own };
  }
}

/**
 * Every finished attempt is durable before anything that depends on it (DESIGN §6): unless the
 * caller chose a durability (or a parent graph passes its own), checkpoints are written before the
 * next superstep starts. LangGraph's default ("async") writes them while the next one runs, so a
 * process killed then loses a finished attempt and calls its tool again on resume.
 */
function durable(options?: Partial<RunnableConfig>): Partial<RunnableConfig> {
  const chosen = options as { durability?: unknown; checkpointDuring?: unknown } | undefined;
  const inherited = options?.configurable?.["__pregel_durability"];
  if (chosen?.durability != null || chosen?.checkpointDuring != null || inherited != null) return options ?? {};
  return { ...options, durability: "sync" } as Partial<RunnableConfig>;
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
    // Delta channels load with one query on SQLite and PostgreSQL (runtime/saver-history.ts).
    const compiled = super.compile({ ...options, checkpointer: withDirectHistory(options?.checkpointer) });
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
    .addNode("planner", trackNode(makePlannerNode(rt)))
    // Replan memory learns a replacement branch the moment it settles (runtime/replan-memory-branch.ts).
    .addNode("executor", trackNode(settlingBranches(rt, makeExecutor(rt))))
    .addNode("classifier", trackNode(settlingBranches(rt, makeClassifierNode(rt))))
    .addNode("replanner", trackNode(makeReplannerNode(rt)))
    .addNode("extender", trackNode(makeExtenderNode(rt)))
    .addNode("human", makeHumanNode(rt), { ends: [...HUMAN_DESTINATIONS] })
    .addNode("finalize", finalizeNode)
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

/**
 * Every LangGraph internal this package touches, in one file (docs/decisions/0020-langgraph-seam.md).
 * None of these is exported by `@langchain/langgraph`: the `__pregel_*` configurable keys LangGraph
 * sets on a run's config, and `_streamIterator`, the one method `invoke`, `stream` and
 * `streamEvents` all go through. test/unit/langgraph-seam.test.ts pins each one against the
 * installed LangGraph, so an upgrade that renames or drops one fails there, loudly, instead of
 * silently running without the thread lock or the nested recursion limit.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { CompiledStateGraph, type Command, type StateDefinition, type StateGraph } from "@langchain/langgraph";
import type { PlanManagerInput, PlanManagerOutput, PlanManagerState } from "../runtime/state.js";

// Where LangGraph lends a checkpointer (its `CONFIG_KEY_CHECKPOINTER`): one layer down, for planMiddleware too.
import { LENT_CHECKPOINTER } from "../runtime/lent-checkpointer.js";
export { LENT_CHECKPOINTER, lentCheckpointer } from "../runtime/lent-checkpointer.js";
/** Present when this graph runs inside a parent's task (LangGraph's `CONFIG_KEY_READ`). */
export const PARENT_READ = "__pregel_read";
/** The durability a parent graph passes to the graphs it runs (LangGraph's `CONFIG_KEY_DURABILITY`). */
export const PARENT_DURABILITY = "__pregel_durability";
/** The method every way of running a compiled graph goes through. */
export const STREAM_METHOD = "_streamIterator";

type Configurable = Record<string, unknown>;

/** Whether this run is nested in a parent graph (a subgraph node, or `invoke` from a node). */
export function isNestedRun(configurable: Configurable): boolean {
  return configurable[LENT_CHECKPOINTER] !== undefined || configurable[PARENT_READ] !== undefined;
}

/** Whether a parent graph already chose the durability of this run. */
export function hasInheritedDurability(configurable: Configurable): boolean {
  return configurable[PARENT_DURABILITY] != null;
}

export type Spec = typeof PlanManagerState.spec;
export type State = typeof PlanManagerState.State;
export type Update = typeof PlanManagerState.Update;
export type InputSpec = typeof PlanManagerInput.spec;
export type OutputSpec = typeof PlanManagerOutput.spec;
type BaseCompile = StateGraph<Spec, State, Update, string, InputSpec, OutputSpec>["compile"];
export type CompileOptions = NonNullable<Parameters<BaseCompile>[0]>;
/** Stream transformers a caller may pass to `compile` (LangGraph's own constraint, read off its signature). */
export type Transformers = NonNullable<CompileOptions["transformers"]>;
/** A run of the graph, given the input and config it should run with. */
export type GraphRun = (input: unknown, config: Partial<RunnableConfig> | undefined) => AsyncGenerator<unknown>;

/**
 * LangGraph's compiled graph with one hook around every run: `aroundRun` gets the caller's
 * input and options and the run itself, and decides the input and config the run takes.
 */
export abstract class HookedCompiledGraph<T extends Transformers = []> extends CompiledStateGraph<
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
  protected abstract aroundRun(
    input: unknown,
    options: Partial<RunnableConfig> | undefined,
    run: GraphRun,
  ): AsyncGenerator<unknown>;

  override async *_streamIterator(input: unknown, options?: Partial<RunnableConfig>): AsyncGenerator<unknown> {
    yield* this.aroundRun(input, options, (checked, config) => super._streamIterator(checked as Command, config));
  }
}

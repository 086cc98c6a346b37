/**
 * Every LangGraph internal this package touches, in one file (docs/decisions/0020-langgraph-seam.md).
 * None of these is exported by `@langchain/langgraph`: the `__pregel_*` configurable keys LangGraph
 * sets on a run's config, and `_streamIterator`, the one method `invoke`, `stream` and
 * `streamEvents` all go through. test/unit/langgraph-seam.test.ts pins each one against the
 * installed LangGraph, so an upgrade that renames or drops one fails there, loudly, instead of
 * silently running without the thread lock or the nested recursion limit; test/graph/route-reads.test.ts
 * pins `narrowRouteReads` (a conditional edge's `_route`) the same way.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { CompiledStateGraph, type Command, type StateDefinition, type StateGraph } from "@langchain/langgraph";
import type { PlanManagerInput, PlanManagerOutput, PlanManagerState } from "../runtime/state.js";

// Where LangGraph lends a checkpointer (its `CONFIG_KEY_CHECKPOINTER`): one layer down, for planMiddleware too.
import { LENT_CHECKPOINTER } from "../runtime/lent-checkpointer.js";
import { isOverwrite } from "../runtime/checked-channel.js";
export { LENT_CHECKPOINTER, lentCheckpointer } from "../runtime/lent-checkpointer.js";
/** LangGraph's read function on a task's config (`CONFIG_KEY_READ`). */
export const TASK_READ = "__pregel_read";
/** Present when this graph runs inside a parent's task: the parent task's read function. */
export const PARENT_READ = TASK_READ;
/** The durability a parent graph passes to the graphs it runs (LangGraph's `CONFIG_KEY_DURABILITY`). */
export const PARENT_DURABILITY = "__pregel_durability";
/** The method every way of running a compiled graph goes through. */
export const STREAM_METHOD = "_streamIterator";
/**
 * The method of a conditional edge (LangGraph's `Branch`) that the runnable a compiled graph runs
 * after its node calls: `_route(input, config, writer, reader?)`, where `input` is the node's output
 * and `reader(config)` the state the route is given.
 */
export const BRANCH_ROUTE = "_route";

/** LangGraph's read function on a task's config (`CONFIG_KEY_READ`): `fresh` applies the task's own writes first. */
type TaskRead = (select: string[], fresh: boolean) => unknown;

/** What this package uses of a conditional edge: the runnable it routes with, and `_route`. */
interface BranchLike {
  path: unknown;
  [BRANCH_ROUTE]: (input: unknown, config: RunnableConfig, writer: unknown, reader?: Reader) => Promise<unknown>;
}

type Reader = (config: RunnableConfig) => unknown;

/**
 * How a node's own write to a channel shows in the value a route reads, given the value before the
 * write: the route sees it without LangGraph copying the channel to apply the write to the copy.
 */
export type SeenWrite = (before: unknown, write: unknown) => unknown;

/**
 * Makes the conditional edges whose route names the channels it reads (`reads(path)`) read only
 * those. LangGraph gives a route a fresh read of every channel of the state: it copies each channel
 * the node wrote, applies the node's writes to the copies and reads all of them
 * (docs/decisions/0059-short-path.md). The route still reads what the node wrote, but only where
 * it reads; and where `seen` says how a channel takes a write, it reads the channel as it was and
 * the node's write on top, without the copy. Edges whose route names nothing read as LangGraph
 * reads them.
 */
export function narrowRouteReads(
  branches: Record<string, Record<string, BranchLike>>,
  reads: (path: unknown) => readonly string[] | undefined,
  seen: Readonly<Record<string, SeenWrite>> = {},
): void {
  for (const edges of Object.values(branches)) {
    for (const [name, branch] of Object.entries(edges)) {
      const keys = reads(branch.path);
      if (keys === undefined || narrowed.has(branch)) continue;
      const edge: BranchLike = Object.create(branch) as BranchLike;
      // `_route(input, …)` is given the node's output: what the node wrote when it is a plain update (the
      // state is an `Annotation.Root`, whose writes LangGraph takes as they are; a `StateSchema` may parse them).
      edge[BRANCH_ROUTE] = (input, config, writer, reader) =>
        branch[BRANCH_ROUTE].call(edge, input, config, writer, reader && ((c) => readAfter(c, input, keys, seen)));
      narrowed.add(edge);
      edges[name] = edge;
    }
  }
}

const narrowed = new WeakSet<object>();

function taskRead(config: RunnableConfig): TaskRead {
  const read = config.configurable?.[TASK_READ] as TaskRead | undefined;
  if (typeof read !== "function") throw new Error("a route ran outside a LangGraph task: it has no read function");
  return read;
}

/**
 * The channels `keys` as the node's writes leave them. A channel the node did not write is read as
 * it is; one it wrote is the value before with the write on top (`seen`), or, for a channel `seen`
 * does not name, an `Overwrite`, or an output that is not a plain update (a `Command`), LangGraph's
 * fresh read.
 */
function readAfter(
  config: RunnableConfig,
  output: unknown,
  keys: readonly string[],
  seen: Readonly<Record<string, SeenWrite>>,
): unknown {
  const read = taskRead(config);
  if (!isPlainUpdate(output)) return read([...keys], true);
  const written = keys.filter((k) => Object.hasOwn(output, k));
  const fresh = written.filter((k) => seen[k] === undefined || output[k] === undefined || isOverwrite(output[k]));
  const values = read([...keys], false) as Record<string, unknown>;
  for (const k of written) if (!fresh.includes(k)) values[k] = seen[k]!(values[k], output[k]);
  return fresh.length === 0 ? values : { ...values, ...(read(fresh, true) as Record<string, unknown>) };
}

function isPlainUpdate(output: unknown): output is Record<string, unknown> {
  return typeof output === "object" && output !== null && Object.getPrototypeOf(output) === Object.prototype;
}

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

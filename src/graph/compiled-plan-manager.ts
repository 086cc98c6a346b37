/** The compiled plan manager and the run boundary around every run (docs/architecture.md "The graph", "Durability"). */
import type { RunnableConfig } from "@langchain/core/runnables";
import {
  isCommand,
  type BaseCheckpointSaver,
  type CompiledStateGraph,
  type LangGraphRunnableConfig,
} from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";
import { withDispatch } from "../runtime/dispatch.js";
import { CALLS_HELD, runControlOf } from "../runtime/run-control.js";
import { withJournal, type RunJournal } from "../runtime/effect-journal.js";
import { saverAdapter } from "../storage/index.js";
import { CheckedDeltaChannel } from "../runtime/delta-channel.js";
import {
  HookedCompiledGraph,
  isNestedRun,
  type GraphRun,
  type InputSpec,
  type OutputSpec,
  type State,
  type Transformers,
  type Update,
} from "./langgraph-seam.js";
import {
  checkCanRun,
  checkCommandUpdate,
  checkInput,
  checkOutsideUpdate,
  finished,
  hasPendingInterrupt,
  isFinished,
  nothingToResume,
} from "./boundary.js";
import { carryEffects, nothingMissing, missingEffects, withEffects } from "./committed-effects.js";
import { COPY_CHECKPOINT, forkNeedsCopy } from "./fork-start.js";
import { holdThread, letGoOf } from "./process-claim.js";
import { durable, nestedLimit, onlyTheResult } from "./run-config.js";
import { branchOf, runCheckpointer, threadRoot } from "./run-thread.js";
import type { PlanManagerResult } from "./resume-run.js";
import { threadLetGo, withThreadRun } from "./thread-lock.js";
import { untilStopped } from "./stopped-run.js";
import { withHeldEvents } from "../runtime/events.js";
import { tappedValues } from "../runtime/values-tap.js";
import { tracedRun } from "../otel/graph-run.js";

type BaseCompiled = CompiledStateGraph<State, Update, string, InputSpec, OutputSpec>;
type BaseInvoke = BaseCompiled["invoke"];
type BaseBulkUpdate = BaseCompiled["bulkUpdateState"];

/**
 * The compiled plan manager: LangGraph's compiled graph, holding its thread for the length of a
 * run so that a second concurrent run on the same thread, in this process or another, fails with
 * `thread_busy` instead of calling every tool a second time (graph/process-claim.ts), and
 * refusing what may not enter a run from outside (graph/boundary.ts). Every run (`invoke`,
 * `stream`, `streamEvents`, a run as a parent's subgraph node) goes through `aroundRun`
 * (graph/langgraph-seam.ts).
 */
export class CompiledPlanManager<T extends Transformers = []> extends HookedCompiledGraph<T> {
  readonly [CALLS_HELD] = true;

  protected override async *aroundRun(input: unknown, options: Partial<RunnableConfig> | undefined, run: GraphRun) {
    const configurable = (options?.configurable ?? {}) as Record<string, unknown>;
    const { input: checked, copy } = await this.checkRunStart(input, configurable);
    const thread = await holdThread({
      checkpointer: runCheckpointer(this.checkpointer, configurable),
      threadId: typeof configurable.thread_id === "string" ? configurable.thread_id : undefined,
      namespace: typeof configurable.checkpoint_ns === "string" ? configurable.checkpoint_ns : "",
    });
    await this.stillThere(input, configurable).catch(letGoOf(thread));
    // The caller's signal (aborted, or a stream left with `break`) stops the run at the next step boundary
    // rather than at once, as LangGraph would, dropping the result of a tool call in flight: the run gets
    // it through its dispatcher (docs/decisions/0028-a-stopped-run-keeps-its-results.md).
    // LangGraph reads a signal left out from the caller's ambient config: it gets one that never aborts.
    const signal = options?.signal;
    const start = copy ? await this.copied(options, configurable).catch(letGoOf(thread)) : options;
    const own = withJournal({ ...start, signal: new AbortController().signal }, this.journal(configurable));
    // Calls still in flight when a run ends keep its thread held, like a node still running.
    const held = withThreadRun(durable(nestedLimit(own, this.config?.recursionLimit)), thread);
    const traced = tracedRun(run, this.name, signal);
    const chunks = traced(checked, withHeldEvents(withDispatch(held, (w) => thread.track(w), signal)));
    // A top-level invoke's chunks are its state values: the plan service keeps a running plan's status from them.
    const steps = onlyTheResult(options) ? tappedValues(chunks, configurable) : chunks;
    try {
      // A stopped run is read to its end in the background; the thread is held until then.
      yield* untilStopped(steps, signal, (rest) => {
        thread.track(rest);
        thread.end();
      });
    } finally {
      thread.end();
      // The run's promise resolves only once its claim in the database is let go, so that a caller
      // deleting the thread or running it elsewhere right after does not find it still claimed.
      await thread.released();
    }
  }

  /** The run's result as the manager reports it: its output keys, and the question when it paused. */
  override invoke(input: Parameters<BaseInvoke>[0], options?: Parameters<BaseInvoke>[1]): Promise<PlanManagerResult> {
    if (this.#mutating || !onlyTheResult(options)) return super.invoke(input, options) as Promise<PlanManagerResult>;
    return this.mutatingTwin().invoke(input, options);
  }

  /** This graph with its growing maps merged in place (`CheckedDeltaChannel.mutatingTwin`). */
  #twin: CompiledPlanManager<T> | undefined;
  #mutating = false;

  /**
   * A run whose caller sees only its result may merge the step records and facts in place: a step
   * then costs what it wrote, not a copy of every record (docs/decisions/0030-long-runs-per-step-cost.md).
   * The same graph, built from the same fields as `compile` builds it, with those channels swapped.
   */
  private mutatingTwin(): CompiledPlanManager<T> {
    if (this.#twin) return this.#twin;
    const channels = Object.fromEntries(
      Object.entries(this.channels).map(([key, c]) => [key, c instanceof CheckedDeltaChannel ? c.mutatingTwin() : c]),
    );
    type Fields = ConstructorParameters<typeof CompiledPlanManager<T>>[0];
    const twin = new CompiledPlanManager<T>({ ...this, channels } as unknown as Fields);
    twin.#mutating = true;
    this.#twin = twin;
    return twin;
  }

  /**
   * `updateState` from outside (it calls this): only the keys users may write (graph/boundary.ts),
   * and a thread paused at a question stays paused at it. The update is a new checkpoint and the
   * question was recorded on the one before, so the human node asks it again at once (it has no
   * side effects before an answer); the config returned is that of the re-asked question.
   */
  override async bulkUpdateState(
    startConfig: LangGraphRunnableConfig,
    supersteps: Parameters<BaseBulkUpdate>[1],
  ): Promise<RunnableConfig> {
    await this.letGo(startConfig);
    const updates = supersteps.flatMap((superstep) => superstep.updates);
    // Every update is checked before any is written.
    const outside = updates.map((update) => checkOutsideUpdate(update.values)).every(Boolean);
    const topLevel = !startConfig.configurable?.checkpoint_ns && this.checkpointer !== undefined;
    const branch = topLevel
      ? await branchOf(this.saverOf(startConfig.configurable ?? {}), startConfig.configurable ?? {})
      : undefined;
    if (outside && branch && isFinished(branch.status)) throw finished(branch.thread, String(branch.status));
    const paused = outside && topLevel && hasPendingInterrupt(await this.getState(startConfig));
    const updated = await super.bulkUpdateState(startConfig, await this.carried(supersteps, branch));
    if (!paused) return updated;
    await this.invoke(null, updated);
    const thread = { configurable: { thread_id: updated.configurable?.thread_id } };
    return (await this.getState(thread)).config;
  }

  /**
   * An input that cannot start a run, or a thread that has ended, fails before anything is written.
   * Returns the input to run with (context values normalised as facts are).
   */
  private async checkRunStart(
    input: unknown,
    configurable: Record<string, unknown>,
  ): Promise<{ input: unknown; copy?: boolean }> {
    const checked = checkInput(input);
    checkCommandUpdate(input);
    if (isNestedRun(configurable) || configurable.checkpoint_ns) return { input: checked };
    const branch = await branchOf(this.saverOf(configurable), configurable);
    if ((input === null || input === undefined) && !branch?.started)
      throw nothingToResume(typeof configurable.thread_id === "string" ? configurable.thread_id : undefined);
    if (!branch) return { input: checked };
    // A stopped thread takes an answer only to a question still pending (read only then: it is rare).
    const asking = branch.status === "stopped" && isCommand(input) && branch.fork === undefined;
    const paused = asking && hasPendingInterrupt(await this.getState({ configurable: threadRoot(branch.thread) }));
    checkCanRun(branch.status, branch.thread, input, branch.fork !== undefined, paused);
    if (branch.fork === undefined) return { input: checked };
    const carried = carryEffects(checked, await missingEffects(this, branch.thread, branch.fork), branch.thread);
    const saver = runCheckpointer(this.checkpointer, configurable) as Parameters<typeof forkNeedsCopy>[0];
    return { input: carried, copy: await forkNeedsCopy(saver, this.channels, branch.thread, branch.fork) };
  }

  /**
   * An answer to a thread deleted since it was checked (by another process, or this one) is refused
   * once the thread is held, when nothing can delete it any more: LangGraph would run it from an
   * empty state and a deleted plan would come back with no goal (docs/decisions/0036-thread-retention.md).
   * Then the run's driver is told that it holds the thread (`RunControl.held`), and may still refuse it.
   */
  private async stillThere(input: unknown, configurable: Record<string, unknown>): Promise<void> {
    if (isNestedRun(configurable) || configurable.checkpoint_ns) return;
    const thread = configurable.thread_id;
    const saver = this.saverOf(configurable);
    const resuming = isCommand(input) && input.resume !== undefined;
    if (
      resuming &&
      typeof thread === "string" &&
      saver?.getTuple &&
      !(await saver.getTuple({ configurable: threadRoot(thread) }))
    )
      throw new PlanManagerError(
        "thread_not_found",
        `thread "${thread}" has no checkpoint (deleted?): there is no question to answer; start a new run with a goal`,
        { path: "configurable.thread_id" },
      );
    await runControlOf({ configurable })?.held?.();
  }

  /** The run's options starting from a copy of the checkpoint they name (graph/fork-start.ts); written once the thread is held. */
  private async copied(
    options: Partial<RunnableConfig> | undefined,
    configurable: Record<string, unknown>,
  ): Promise<Partial<RunnableConfig>> {
    const copy = await super.bulkUpdateState({ configurable }, COPY_CHECKPOINT as Parameters<BaseBulkUpdate>[1]);
    return { ...options, configurable: { ...configurable, checkpoint_id: copy.configurable?.checkpoint_id } };
  }

  /** An update on an earlier checkpoint takes the effects committed since with it (graph/committed-effects.ts). */
  private async carried(
    supersteps: Parameters<BaseBulkUpdate>[1],
    branch: { thread: string; fork?: string } | undefined,
  ): Promise<Parameters<BaseBulkUpdate>[1]> {
    if (branch?.fork === undefined || supersteps.length === 0) return supersteps;
    const missing = await missingEffects(this, branch.thread, branch.fork);
    const [first, ...rest] = supersteps;
    const [update, ...others] = first!.updates;
    if (nothingMissing(missing) || !update) return supersteps;
    return [{ ...first, updates: [{ ...update, values: withEffects(update.values, missing) }, ...others] }, ...rest];
  }

  /** Waits until no run of this process holds the thread (a stopped run writing its last results). */
  private letGo(config: LangGraphRunnableConfig): Promise<void> {
    const configurable = (config.configurable ?? {}) as Record<string, unknown>;
    const { thread_id: threadId, checkpoint_ns: namespace } = configurable;
    return threadLetGo({
      checkpointer: runCheckpointer(this.checkpointer, configurable),
      threadId: typeof threadId === "string" ? threadId : undefined,
      namespace: typeof namespace === "string" ? namespace : "",
    });
  }

  /** The saver a run reads its thread's checkpoints from. */
  private saverOf(configurable: Record<string, unknown>): Partial<Pick<BaseCheckpointSaver, "getTuple">> | undefined {
    return runCheckpointer(this.checkpointer, configurable) as
      Partial<Pick<BaseCheckpointSaver, "getTuple">> | undefined;
  }

  /** The effect journal of the saver a run checkpoints to (storage/journal.ts); none without one. */
  private journal(configurable: Record<string, unknown>): RunJournal | undefined {
    const saver = runCheckpointer(this.checkpointer, configurable);
    return saver === undefined ? undefined : saverAdapter(saver as BaseCheckpointSaver).journal;
  }
}

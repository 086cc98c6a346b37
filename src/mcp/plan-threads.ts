/**
 * What every part of the plan service shares: the served graphs, the checkpointer, the runs this
 * process drives and the status rows being written — and the reads of one plan's thread. Every
 * answer is read from the thread's latest checkpoint (or its status row when the row names that
 * checkpoint), so a restarted service finds each plan where it was
 * (docs/decisions/0037-planning-service-over-mcp.md).
 */
import type { BaseCheckpointSaver, LangGraphRunnableConfig, StateSnapshot } from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";
import { heldHere } from "../graph/thread-lock.js";
import { originalSaver, saverAdapter } from "../storage/index.js";
import { ExpiringMap } from "./expiring-map.js";
import { LiveStatuses } from "./live-status.js";
import { BackgroundRuns } from "./runs.js";
import type { ServedGraph } from "./service-types.js";
import { statusCore, type StatusCore, type StatusValues } from "./status.js";
import { NO_CHECKPOINT, noPlan, storedSummary, summaryOf } from "./summaries.js";
import type { PlanWakes } from "./wakes.js";
import type { PlanQueue } from "./service-types.js";

/** Ends a plan id with its graph's name, so a restarted service knows which graph a thread runs on. */
export const SEPARATOR = "--";
/** At most this many recent creates and iteration links are remembered (the oldest are forgotten first). */
export const MAX_REMEMBERED = 10_000;

/** A compiled graph's static breakpoints, as LangGraph's `CompiledStateGraph` shows them. */
interface Breakpoints {
  interruptBefore?: readonly string[] | "*";
  interruptAfter?: readonly string[] | "*";
}

export class PlanThreads {
  readonly graphs: Readonly<Record<string, ServedGraph>>;
  readonly saver: BaseCheckpointSaver;
  readonly now: () => number;
  readonly wakes: PlanWakes | undefined;
  /** The workers' queue runs are handed to, when workers drive them (mcp/worker-runs.ts). */
  readonly workers: PlanQueue | undefined;
  /**
   * Runs this process is driving, by plan id; each one's end or pause is announced to other
   * processes once its status row is written, so that their waits read the row.
   */
  readonly runs = new BackgroundRuns(
    (planId) =>
      void Promise.resolve(this.writing.get(planId)).then(() => {
        for (const listener of this.onPaused) listener(planId);
        return this.wakes?.announce(planId);
      }),
  );
  /** The status of each run this process drives, kept from its stream (live-status.ts). */
  readonly live = new LiveStatuses();
  /** Called once a run this process drove has returned or paused, and its status row is written (elicitations.ts listens). */
  readonly onPaused = new Set<(planId: string) => void>();
  /**
   * The status each run this process drove had when it returned, by plan id, while its status row is
   * being written: a wait on that run returns it without reading the checkpoint again.
   */
  readonly ending = new Map<string, StatusCore>();
  /** Status rows being written, by plan id. */
  readonly writing = new Map<string, Promise<void>>();
  /**
   * Iteration links (`parent_plan_id`), by plan id: `plan_status` reports them for a day, far past
   * the dedupe window, and a count bounds them on a long-lived server (expiring-map.ts).
   */
  readonly parents: ExpiringMap<string, string>;

  constructor(o: {
    graphs: Readonly<Record<string, ServedGraph>>;
    saver: BaseCheckpointSaver;
    now: () => number;
    wakes: PlanWakes | undefined;
    workers?: PlanQueue | undefined;
  }) {
    this.graphs = o.graphs;
    this.saver = o.saver;
    this.now = o.now;
    this.wakes = o.wakes;
    this.workers = o.workers;
    this.parents = new ExpiringMap({ ttlMs: 24 * 3_600_000, maxEntries: 10 * MAX_REMEMBERED, now: () => this.now() });
  }

  graphNameOf(planId: string): string {
    const name = this.servedGraphOf(planId);
    if (!name) throw noPlan(planId);
    return name;
  }

  servedGraphOf(planId: string): string | undefined {
    const at = planId.lastIndexOf(SEPARATOR);
    const name = at < 0 ? undefined : planId.slice(at + SEPARATOR.length);
    return name !== undefined && Object.hasOwn(this.graphs, name) ? name : undefined;
  }

  graphOf(name: string): ServedGraph {
    if (!Object.hasOwn(this.graphs, name))
      throw new PlanManagerError(
        "invalid_input",
        `no graph "${name}" (served: ${Object.keys(this.graphs).join(", ")})`,
        { path: "graph" },
      );
    return this.graphs[name]!;
  }

  configOf(planId: string): LangGraphRunnableConfig {
    return { configurable: { thread_id: planId } };
  }

  snapshot(planId: string): Promise<StateSnapshot> {
    return this.graphOf(this.graphNameOf(planId)).getState(this.configOf(planId));
  }

  /** The plan's snapshot, or `invalid_input` naming the id when there is no such plan. */
  async existing(planId: string): Promise<StateSnapshot> {
    const snapshot = await this.snapshot(planId);
    if ((snapshot.values as StatusValues | undefined)?.status === undefined && !this.runs.has(planId))
      // Not trusted to this process alone: a run another one started may not have written its first checkpoint.
      if ((await this.statusRows([planId])).get(planId)?.checkpointId !== NO_CHECKPOINT) throw noPlan(planId);
    return snapshot;
  }

  /** Status rows of `planIds` (none without a store). */
  async statusRows(planIds: string[]) {
    const store = saverAdapter(this.saver).statuses;
    return store ? store.read(planIds) : new Map<string, { checkpointId: string; summary: string }>();
  }

  /**
   * The plan's status as its latest checkpoint shows it: from its status row when the row names that
   * checkpoint (one primary-key lookup each), else from the checkpoint (`getState`, which rebuilds the
   * delta channels). `invalid_input` naming the id when there is no such plan.
   */
  async core(planId: string): Promise<StatusCore> {
    this.graphNameOf(planId);
    const store = saverAdapter(this.saver).statuses;
    if (!store) return statusCore(await this.existing(planId));
    const [latest, rows] = await Promise.all([
      this.saver.getTuple({ configurable: { thread_id: planId, checkpoint_ns: "" } }),
      store.read([planId]),
    ]);
    const row = rows.get(planId);
    if (latest && row?.checkpointId === latest.checkpoint.id) return storedSummary(row.summary).core;
    // A plan whose run was started (here or in another process) and has not written its first checkpoint.
    if (!latest && row?.checkpointId === NO_CHECKPOINT) return storedSummary(row.summary).core;
    return statusCore(await this.existing(planId));
  }

  /**
   * Whether a live process holds the plan's run: a run of this process, or another's claim in the
   * database (read, not taken). Undefined when the saver cannot tell: its claims reach this process
   * only, and another process on the same storage would not show.
   */
  async held(planId: string): Promise<boolean | undefined> {
    if (this.runs.has(planId) || heldHere({ checkpointer: originalSaver(this.saver), threadId: planId, namespace: "" }))
      return true;
    const adapter = saverAdapter(this.saver);
    if (adapter.claims !== "database") return undefined;
    return (await adapter.heldBy(planId)) !== undefined;
  }

  /** Whether the plan has a checkpoint, or a run started with none yet. */
  async stillThere(planId: string): Promise<boolean> {
    const latest = await this.saver.getTuple({ configurable: { thread_id: planId, checkpoint_ns: "" } });
    return latest !== undefined || (await this.statusRows([planId])).get(planId)?.checkpointId === NO_CHECKPOINT;
  }

  notRunning(planId: string): void {
    if (this.runs.has(planId))
      throw new PlanManagerError(
        "thread_busy",
        `plan "${planId}" is running: wait for it (plan_wait) or stop it (plan_stop)`,
      );
  }

  /**
   * Whether the checkpoint is where the served graph's static breakpoints stop it (its public
   * `interruptBefore` / `interruptAfter`): a plan waiting there for `plan_resume`, which a cut run's
   * checkpoint looks like. Before: a node it runs next; after: a node that ran to write it (the
   * previous checkpoint's next).
   */
  async atBreakpoint(planId: string, snapshot: StateSnapshot): Promise<boolean> {
    const graph = this.graphOf(this.graphNameOf(planId)) as ServedGraph & Breakpoints;
    const stops = (nodes: Breakpoints["interruptBefore"], at: readonly string[]) =>
      nodes === "*" ? at.length > 0 : Array.isArray(nodes) && at.some((node) => nodes.includes(node));
    if (stops(graph.interruptBefore, snapshot.next)) return true;
    if (graph.interruptAfter === undefined || graph.interruptAfter.length === 0 || !snapshot.parentConfig) return false;
    return stops(graph.interruptAfter, (await graph.getState(snapshot.parentConfig)).next);
  }

  /**
   * Reads the plan's latest checkpoint and starts writing its status row (storage/status-store.ts);
   * until the row is written, `ending` holds what it says for the waits on the run that just returned.
   */
  async storeStatus(planId: string): Promise<void> {
    const store = saverAdapter(this.saver).statuses;
    if (!store) return;
    const snapshot = await this.snapshot(planId);
    const checkpointId = snapshot.config.configurable?.checkpoint_id;
    if ((snapshot.values as StatusValues | undefined)?.status === undefined || typeof checkpointId !== "string") return;
    const summary = summaryOf(snapshot);
    this.ending.set(planId, summary.core);
    const written: Promise<void> = store
      .write(planId, { checkpointId, summary: JSON.stringify(summary) })
      // A row that could not be written leaves readers on the checkpoint.
      .catch(() => undefined)
      .finally(() => {
        if (this.ending.get(planId) === summary.core) this.ending.delete(planId);
        if (this.writing.get(planId) === written) this.writing.delete(planId);
      });
    this.writing.set(planId, written);
  }

  /** Lets the runs this process drives reach their next checkpoint, and their status rows be written. */
  async settled(): Promise<void> {
    await this.runs.settled();
    await Promise.all(this.writing.values());
  }
}

/**
 * The plan manager as a service for agents (docs/decisions/0037-planning-service-over-mcp.md): a
 * plan is a thread of one of the served graphs, run in the background by this process; every
 * answer is read from the thread's latest checkpoint, so a restarted service finds each plan where
 * it was. Transport-free: src/mcp/server.ts puts these methods behind MCP tools.
 */
import { randomUUID } from "node:crypto";
import type { LangGraphRunnableConfig, StateSnapshot } from "@langchain/langgraph";
import { PlanManagerError, isPlanManagerError } from "../errors.js";
import { checkDraft, checkInput } from "../graph/boundary.js";
import { answerProblemFor, resumeRun } from "../graph/resume.js";
import type { InterruptPayload, ResumeValue, SubmittedError } from "../plan/schema/interrupts.js";
import { ResumeValueSchema } from "../plan/schema/interrupts.js";
import { asArgument } from "./argument-errors.js";
import { ExpiringMap } from "./expiring-map.js";
import { BackgroundRuns } from "./runs.js";
import { digest, keyConflict, requestOf } from "./requests.js";
import { archiveThread, cursorAfter, deleteThread, listThreads, unarchiveThread } from "../graph/retention.js";
import { deleteThread as deleteUnlessHeld } from "../graph/process-claim.js";
import { planMetrics } from "../views/metrics.js";
import { userView } from "../views/user-view.js";
import { statusLabel } from "../views/quality.js";
import { reopenStopped, requestStop, type StoppableGraph } from "../worker/stop.js";
import { CALLS_HELD } from "../runtime/run-control.js";
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import { originalSaver, saverAdapter } from "../storage/index.js";
import { planStatus, runGoingOn, statusCore, type PlanStatus, type StatusCore, type StatusValues } from "./status.js";
import { breakpointMessage, cutRunStatus, inFlightOf, neverStartedMessage, threwHereMessage } from "./cut-run.js";
import { heldHere, threadLetGo } from "../graph/thread-lock.js";
import type { PlanWakes } from "./wakes.js";

/** What the service needs of a served graph: a compiled plan manager with a checkpointer. */
export interface ServedGraph extends StoppableGraph {
  invoke(input: unknown, config: LangGraphRunnableConfig): Promise<unknown>;
}

export interface PlanServiceOptions {
  /** The graphs a plan may run on, by name (a `langgraph.json`'s `graphs`); the first is the default. */
  graphs: Readonly<Record<string, ServedGraph>>;
  /** The checkpointer every served graph was compiled with: listing and deleting threads go through it. */
  saver: BaseCheckpointSaver;
  /** Epoch ms; tests pass a clock. */
  now?: () => number;
  /** Who answers, for `plan_create`'s `server`. */
  server?: { name: string; version: string };
  /** How long the same goal, context and graph returns the plan already made (default 10 minutes). */
  dedupeWindowMs?: number;
  /**
   * Where runs of other processes are heard of (`openPlanWakes` from langgraph-replan/worker on
   * PostgreSQL): `wait` is woken by them too, and this service announces its own runs there.
   * Default: none — `wait` on a plan another process drives returns at once with its checkpoint's status.
   */
  wakes?: PlanWakes;
}

export interface CreateInput {
  goal: string;
  context?: Record<string, unknown>;
  /** A plan draft to run instead of asking the graph's planner, validated like the planner's. */
  plan?: unknown;
  graph?: string;
  parent_plan_id?: string;
  /**
   * Names the plan for good: the same key with the same goal, context, plan and graph returns it;
   * with another, `idempotency_conflict` naming the key.
   */
  idempotency_key?: string;
  /**
   * Start a new plan even when the same request made one within the dedupe window (after a plan that
   * failed, was aborted or stopped). Not with an `idempotency_key` that names a plan already.
   */
  new_run?: boolean;
}

export interface Created {
  plan_id: string;
  status: string;
  /** False when an earlier `plan_create` with the same key (or goal, context and graph) made it. */
  created: boolean;
  server: { name: string; version: string; graphs: string[] };
}

/** `plan_submit`'s input: the step's output, or the error the agent met (exactly one). */
export interface SubmitInput {
  step_id: string;
  output?: unknown;
  error?: SubmittedError;
}

export interface ListInput {
  status?: string[];
  /** `"exclude"` (default) leaves archived plans out, `"only"` lists them alone, `"include"` both. */
  archived?: "exclude" | "only" | "include";
  cursor?: string;
  limit?: number;
}

export interface Listed {
  plans: { plan_id: string; graph: string; goal: string; status: string; archived: boolean; updated_at?: string }[];
  next_cursor?: string;
}

/** Ends a plan id with its graph's name, so a restarted service knows which graph a thread runs on. */
const SEPARATOR = "--";
const FINISHED = new Set(["completed", "partial", "failed", "aborted"]);
export const MAX_WAIT_S = 300;
/** At most this many recent creates and iteration links are remembered (the oldest are forgotten first). */
const MAX_REMEMBERED = 10_000;
/** How long `stop` waits for a run in a long call to reach its boundary before it answers. */
const STOP_WAIT_MS = 10_000;

/** The checkpoint id of the status row a create writes before its run has written one. */
const NO_CHECKPOINT = "";

export class PlanService {
  private readonly graphs: Readonly<Record<string, ServedGraph>>;
  private readonly saver: BaseCheckpointSaver;
  private readonly now: () => number;
  private readonly dedupeWindowMs: number;
  readonly server: Created["server"];
  private readonly wakes: PlanWakes | undefined;
  /**
   * Runs this process is driving, by plan id; each one's end or pause is announced to other
   * processes once its status row is written, so that their waits read the row.
   */
  private readonly runs = new BackgroundRuns(
    (planId) => void Promise.resolve(this.writing.get(planId)).then(() => this.wakes?.announce(planId)),
  );
  /** Recent plans by goal, context and graph, for the dedupe window (bounded: expiring-map.ts). */
  private readonly recent: ExpiringMap<string, { planId: string; at: number }>;
  /**
   * The status each run this process drove had when it returned, by plan id, while its status row is
   * being written: a wait on that run returns it without reading the checkpoint again.
   */
  private readonly ending = new Map<string, StatusCore>();
  /** Status rows being written, by plan id. */
  private readonly writing = new Map<string, Promise<void>>();
  /**
   * Iteration links (`parent_plan_id`), by plan id: `plan_status` reports them for a day, far past
   * the dedupe window, and a count bounds them on a long-lived server (expiring-map.ts).
   */
  private readonly parents: ExpiringMap<string, string>;
  /**
   * Creates under way, by the plan their key names or by their request: a create of the same joins
   * the one under way, so the lookup and the start are one step in this process.
   */
  private readonly creating = new Map<string, { request: string; created: Promise<Created> }>();

  constructor(options: PlanServiceOptions) {
    const names = Object.keys(options.graphs);
    if (names.length === 0) throw new PlanManagerError("invalid_options", "the plan service needs at least one graph");
    for (const name of names)
      if (name.includes(SEPARATOR) || !/^[A-Za-z0-9_.-]+$/.test(name))
        throw new PlanManagerError(
          "invalid_options",
          `graph name "${name}" must use letters, digits, "_", "." or "-" and not contain "${SEPARATOR}"`,
          { path: `graphs.${name}` },
        );
    this.graphs = options.graphs;
    this.saver = options.saver;
    this.now = options.now ?? Date.now;
    this.dedupeWindowMs = options.dedupeWindowMs ?? 600_000;
    if (!(this.dedupeWindowMs >= 0))
      throw new PlanManagerError("invalid_options", `dedupeWindowMs must be ms ≥ 0, got ${this.dedupeWindowMs}`, {
        path: "dedupeWindowMs",
      });
    const remembered = { ttlMs: this.dedupeWindowMs, maxEntries: MAX_REMEMBERED, now: () => this.now() };
    this.recent = new ExpiringMap(remembered);
    this.parents = new ExpiringMap({ ttlMs: 24 * 3_600_000, maxEntries: 10 * MAX_REMEMBERED, now: remembered.now });
    this.wakes = options.wakes;
    this.server = { ...(options.server ?? { name: "langgraph-replan", version: "0" }), graphs: names };
  }

  async create(input: CreateInput): Promise<Created> {
    const graphName = input.graph ?? Object.keys(this.graphs)[0]!;
    this.graphOf(graphName);
    if (input.new_run !== undefined && typeof input.new_run !== "boolean")
      throw new PlanManagerError("invalid_input", `new_run must be true or false, got ${String(input.new_run)}`, {
        path: "new_run",
      });
    // Checked before anything is read or written: a bad goal, context or plan is an error of this
    // call, not of a background run (and a value JSON cannot hold never reaches the dedupe key).
    checkDraft(input.plan, "plan");
    const runInput = checkInput({
      goal: input.goal,
      ...(input.context ? { context: input.context } : {}),
      ...(input.plan !== undefined ? { draft: input.plan } : {}),
    }) as { goal: string; context?: Record<string, unknown>; draft?: unknown };
    const request = requestOf(graphName, runInput);
    const recentKey = digest(request, input.parent_plan_id ?? "");
    // A key names the plan for good (the id is derived from it, so a restarted service finds it).
    const key = input.idempotency_key;
    const keyed = key !== undefined ? `${digest("key", graphName, key)}${SEPARATOR}${graphName}` : undefined;
    const slot = keyed ?? (input.new_run === true ? undefined : `request:${recentKey}`);
    const under = slot !== undefined ? this.creating.get(slot) : undefined;
    if (under) {
      if (key !== undefined && keyed !== undefined && (under.request !== request || input.new_run === true))
        throw keyConflict(key, keyed, "underWay");
      return { ...(await under.created), created: false };
    }
    const created = this.createOnce({ graphName, runInput, request, recentKey, keyed, input });
    if (slot !== undefined) {
      const entry = { request, created };
      this.creating.set(slot, entry);
      const done = () => void (this.creating.get(slot) === entry && this.creating.delete(slot));
      created.then(done, done);
    }
    return created;
  }

  /** `create` once no other create of the same plan or request is under way in this process. */
  private async createOnce(c: {
    graphName: string;
    runInput: { goal: string; context?: Record<string, unknown>; draft?: unknown };
    request: string;
    recentKey: string;
    keyed: string | undefined;
    input: CreateInput;
  }): Promise<Created> {
    const { graphName, runInput, request, recentKey, keyed, input } = c;
    // The same goal, context and plan within the window return the plan just made, unless a new run is asked.
    const planId = keyed ?? (input.new_run === true ? undefined : this.recentPlan(recentKey));
    const known = planId !== undefined ? await this.made(planId, graphName) : undefined;
    // A keyed plan whose create died between its claim and its first checkpoint has nothing to carry
    // on from and no server takes it up: the same key and request start it now (its thread is empty).
    const restart = keyed !== undefined && known !== undefined && (await this.neverStarted(keyed));
    if (planId !== undefined && known) {
      if (input.idempotency_key !== undefined) this.sameRequest(input.idempotency_key, planId, known, c);
      if (!restart) return { plan_id: planId, status: known.status, created: false, server: this.server };
    }
    if (input.idempotency_key !== undefined) await this.keyOnOtherGraphs(input.idempotency_key, graphName);
    if (input.parent_plan_id !== undefined)
      await this.existing(input.parent_plan_id).catch(asArgument("parent_plan_id"));
    const id = planId ?? `${randomUUID().replaceAll("-", "")}${SEPARATOR}${graphName}`;
    if (this.runs.has(id)) return { plan_id: id, status: "running", created: false, server: this.server };
    const starting = { checkpointId: NO_CHECKPOINT, summary: { core: startingCore(runInput.goal), request } };
    try {
      // A new plan starts on an empty thread only: checked while the run holds it, so another
      // process that made the plan this key names first cannot be run over.
      await this.begin(
        id,
        starting,
        (graph, config) => graph.invoke(runInput, config),
        async () => {
          if (await this.saver.getTuple({ configurable: { thread_id: id, checkpoint_ns: "" } }))
            throw new PlanManagerError("thread_busy", `plan "${id}" was started by another create meanwhile`);
        },
      );
    } catch (error) {
      if (keyed === undefined || input.idempotency_key === undefined) throw error;
      // Another process started the plan this key names first: its row or checkpoint says so, or,
      // in the moment between its claim and its row, its claim alone (then no plan is started twice).
      const other = await this.made(id, graphName);
      if (other) {
        this.sameRequest(input.idempotency_key, id, other, c);
        return { plan_id: id, status: other.status, created: false, server: this.server };
      }
      if (!isPlanManagerError(error) || error.code !== "thread_busy") throw error;
      throw new PlanManagerError(
        "thread_busy",
        `plan "${id}" (idempotency_key ${JSON.stringify(input.idempotency_key)}) is being started by another ` +
          "server: call plan_create again to get it",
        { path: "idempotency_key" },
      );
    }
    this.recent.set(recentKey, { planId: id, at: this.now() });
    if (input.parent_plan_id !== undefined) this.parents.set(id, input.parent_plan_id);
    return { plan_id: id, status: "running", created: true, server: this.server };
  }

  /** A key reused for another request is refused (a payment API does the same); `new_run` needs a new key. */
  private sameRequest(
    key: string,
    planId: string,
    known: { request?: string },
    c: { request: string; input: CreateInput },
  ) {
    if (c.input.new_run === true) throw keyConflict(key, planId, "newRun");
    if (known.request !== undefined && known.request !== c.request) throw keyConflict(key, planId, "other");
  }

  /**
   * Whether the plan is a create's row with no checkpoint that no live process holds: its process
   * ended before the run's first checkpoint. False when the saver cannot tell who holds it.
   */
  private async neverStarted(planId: string): Promise<boolean> {
    if (this.runs.has(planId)) return false;
    if (await this.saver.getTuple({ configurable: { thread_id: planId, checkpoint_ns: "" } })) return false;
    if ((await this.statusRows([planId])).get(planId)?.checkpointId !== NO_CHECKPOINT) return false;
    return (await this.held(planId)) === false;
  }

  /** The same key on another served graph names another plan id: refused as another request. */
  private async keyOnOtherGraphs(key: string, graphName: string): Promise<void> {
    for (const other of Object.keys(this.graphs)) {
      if (other === graphName) continue;
      const id = `${digest("key", other, key)}${SEPARATOR}${other}`;
      if (await this.made(id, other)) throw keyConflict(key, id, "other");
    }
  }

  /**
   * The plan `planId` names, if it was made: its status, and the request it was made for (from its
   * checkpoint, or from the row its create wrote before the first checkpoint); undefined otherwise.
   */
  private async made(planId: string, graphName: string): Promise<{ status: string; request?: string } | undefined> {
    const snapshot = await this.snapshot(planId);
    const values = snapshot.values as (StatusValues & { context?: unknown; draft?: unknown }) | undefined;
    if (values?.status !== undefined && values.goal !== undefined)
      return { status: statusOf(snapshot, this.runs.has(planId)), request: requestOf(graphName, values) };
    // No checkpoint yet, or only the run's first, which holds its input before the goal is read from it.
    const row = (await this.statusRows([planId])).get(planId);
    const request = row?.checkpointId === NO_CHECKPOINT ? storedSummary(row.summary).request : undefined;
    if (values?.status !== undefined)
      return { status: statusOf(snapshot, this.runs.has(planId)), ...(request ? { request } : {}) };
    if (row?.checkpointId === NO_CHECKPOINT)
      return { status: statusOf(storedSummary(row.summary).core.stored, true), ...(request ? { request } : {}) };
    return this.runs.has(planId) ? { status: "running" } : undefined;
  }

  async status(planId: string): Promise<PlanStatus> {
    const core = await this.core(planId);
    return this.withServer(planId, core, this.statusFrom(planId, core));
  }

  /**
   * A run going on says whether a live process holds it: this one, or another that holds its claim
   * in the database. One nobody holds was cut mid-step: its attempt in flight is shown (mcp/cut-run.ts).
   */
  private async withServer(planId: string, core: StatusCore, status: PlanStatus): Promise<PlanStatus> {
    if (!runGoingOn(core)) return status;
    const live = await this.held(planId);
    if (live === undefined) return status;
    if (live) return { ...status, server: { live: true } };
    const [snapshot, unsettled] = await Promise.all([
      this.snapshot(planId),
      saverAdapter(this.saver).journal.unsettled(planId),
    ]);
    // What `takeUp` would do with it, said plainly: only a cut run with a checkpoint is taken up.
    const message =
      startedFrom(snapshot) === undefined
        ? neverStartedMessage(planId)
        : this.runs.failure(planId)
          ? threwHereMessage(planId)
          : (await this.atBreakpoint(planId, snapshot))
            ? breakpointMessage(planId)
            : undefined;
    return cutRunStatus(status, inFlightOf(snapshot, unsettled), message);
  }

  /**
   * Whether a live process holds the plan's run: a run of this process, or another's claim in the
   * database (read, not taken). Undefined when the saver cannot tell: its claims reach this process
   * only, and another process on the same storage would not show.
   */
  private async held(planId: string): Promise<boolean | undefined> {
    if (this.runs.has(planId) || heldHere({ checkpointer: originalSaver(this.saver), threadId: planId, namespace: "" }))
      return true;
    const adapter = saverAdapter(this.saver);
    if (adapter.claims !== "database") return undefined;
    return (await adapter.heldBy(planId)) !== undefined;
  }

  private statusFrom(planId: string, core: StatusCore): PlanStatus {
    const parent = this.parents.get(planId);
    const thrown = this.runs.failure(planId);
    return planStatus(planId, this.graphNameOf(planId), core, {
      running: this.runs.has(planId),
      ...(parent ? { parentPlanId: parent } : {}),
      ...(thrown ? { thrown } : {}),
    });
  }

  /** Waits until the plan's run ends or needs an answer (woken by the run, not by polling), at most `timeoutS`. */
  async wait(planId: string, timeoutS = 60): Promise<PlanStatus & { timed_out: boolean }> {
    if (!Number.isFinite(timeoutS) || timeoutS < 0 || timeoutS > MAX_WAIT_S)
      throw new PlanManagerError(
        "invalid_input",
        `timeout_s must be a number from 0 to ${MAX_WAIT_S}, got ${timeoutS}`,
        {
          path: "timeout_s",
        },
      );
    await this.core(planId);
    const here = await this.runs.waitFor(planId, timeoutS * 1000);
    const ended = here ?? (await this.waitElsewhere(planId, timeoutS * 1000));
    // The run this process drove has just returned: its status was read as it did (`start`).
    const read = here === true ? this.ending.get(planId) : undefined;
    const status = read
      ? await this.withServer(planId, read, this.statusFrom(planId, read))
      : await this.status(planId);
    return { ...status, timed_out: ended === false };
  }

  /** Answers the pending question, checked like `resumeRun` before anything is written; the run carries on in the background. */
  async answer(planId: string, answer: unknown): Promise<{ plan_id: string; status: string }> {
    const snapshot = await this.existing(planId);
    this.notRunning(planId);
    const pending = pendingOf(snapshot);
    if (!pending)
      throw new PlanManagerError(
        "invalid_resume",
        `plan "${planId}" has no pending question (status: ${statusOf(snapshot, false)})` +
          ((snapshot.values as StatusValues).status === "stopped"
            ? ": it was stopped; carry it on with plan_resume"
            : ""),
      );
    const parsed = ResumeValueSchema.safeParse(answer);
    if (!parsed.success)
      throw new PlanManagerError(
        "invalid_resume",
        `plan "${planId}": not an answer (${parsed.error.issues[0]?.message ?? "malformed"}); expected { action, … }`,
        { path: "answer" },
      );
    const problem = answerProblemFor(parsed.data, pending, (snapshot.values ?? {}) as never);
    if (problem)
      throw new PlanManagerError("invalid_resume", `plan "${planId}", ${pending.kind}: ${problem}`, { path: "answer" });
    const value: ResumeValue = parsed.data;
    await this.carryOn(planId, snapshot, (graph, config) => resumeRun(graph, config, value));
    return { plan_id: planId, status: "running" };
  }

  /**
   * The external steps ready for the calling agent (docs/decisions/0042-external-steps.md): the
   * question of the one the plan waits on, as `pendingQuestion` gives it (goal, instructions, trusted
   * inputs, success signal, attempt, idempotency key); none while the run is going or asks something else.
   */
  async next(planId: string): Promise<{ plan_id: string; status: string; steps: InterruptPayload[] }> {
    const core = await this.core(planId);
    // A run another service started from this checkpoint is answering its question already.
    const running = this.runs.has(planId) || core.running === true;
    const pending = running ? undefined : core.question;
    const steps = pending?.kind === "external_step" ? [pending] : [];
    return { plan_id: planId, status: statusOf(core.stored, running), steps };
  }

  /**
   * The calling agent's result for an external step: its output or the error it met, checked like
   * every answer before anything is written (`resumeRun`'s checks); the ladder answers it as the run
   * carries on in the background.
   */
  async submit(planId: string, input: SubmitInput): Promise<{ plan_id: string; status: string }> {
    const { step_id: stepId, output, error } = input;
    return this.answer(planId, {
      action: "submit",
      stepId,
      ...(output !== undefined ? { output } : {}),
      ...(error !== undefined ? { error } : {}),
    });
  }

  /**
   * Stops the plan at its next step boundary with no call in flight (resumable with `resume`): a
   * run this process drives takes the stop itself, as a worker's does; a paused one is stopped in
   * its checkpoint.
   */
  async stop(planId: string, reason?: string): Promise<PlanStatus> {
    await this.existing(planId);
    const stop = { requestedAt: new Date(this.now()).toISOString(), ...(reason ? { reason } : {}) };
    // The stop is taken once no call is in flight; a long call keeps the answer "running" until then.
    if ((await this.runs.ask(planId, { kind: "stop", stop }, STOP_WAIT_MS)) === false) return this.status(planId);
    const snapshot = await this.snapshot(planId);
    const status = (snapshot.values as StatusValues).status;
    if (status !== "stopped" && !FINISHED.has(status ?? ""))
      await requestStop(this.graphOf(this.graphNameOf(planId)), this.configOf(planId), {
        ...(reason ? { reason } : {}),
        now: this.now,
      }).finally(() => this.storeStatus(planId).catch(() => undefined));
    return this.status(planId);
  }

  /** Carries a stopped plan on, or one whose run this process no longer drives (a restart, a crash). */
  async resume(planId: string): Promise<{ plan_id: string; status: string }> {
    const snapshot = await this.existing(planId);
    this.notRunning(planId);
    const status = (snapshot.values as StatusValues).status;
    if (status === undefined)
      throw new PlanManagerError(
        "invalid_resume",
        `plan "${planId}" has no checkpoint yet: its run is starting (plan_wait for it), or its server stopped ` +
          "before the first one (plan_delete it and create it again)",
      );
    // A run that ended but still has work queued (undoing abandoned effects) carries on like any other.
    if (FINISHED.has(status ?? "") && snapshot.next.length === 0)
      throw new PlanManagerError(
        "thread_finished",
        `plan "${planId}" has finished (status: ${status}): there is nothing to resume`,
      );
    if (pendingOf(snapshot) && status !== "stopped")
      throw new PlanManagerError("invalid_resume", `plan "${planId}" waits for an answer: use plan_answer`);
    await this.carryOn(planId, snapshot, async (graph, config) => {
      if (status !== "stopped") return graph.invoke(null, config);
      // The run keeps this service's control (a stop, a pause at shutdown, the hold it answers after).
      const reopened = await reopenStopped(graph, config);
      return graph.invoke(null, { ...config, configurable: { ...config.configurable, ...reopened.configurable } });
    });
    return { plan_id: planId, status: "running" };
  }

  /**
   * Takes up a plan whose run no live process holds — its server was closed or killed mid-step — the
   * way `resume` carries a plan on, so a call cut in flight is settled through the effect journal
   * (docs/decisions/0037-planning-service-over-mcp.md, "Runs outlive their server"; mcp/recovery.ts
   * asks at launch and on an interval). Not a plan that ended, was stopped, waits for an answer or
   * at a static breakpoint of its graph, one a create left before its first checkpoint (nothing to
   * carry on from: `plan_create` starts it again), one a live process holds, nor one whose run threw
   * in this process (`plan_resume` retries that),
   * nor any on a saver whose claims reach this process only (who else runs it cannot be told).
   * Two servers asking at once: the run's own claim lets one in, and the other's run ends at once.
   * `"started"`: this process runs it now; `"held"`: a live process holds it; `"idle"`: the checkpoint
   * shows nothing to take up; `"skipped"`: this process runs it, or its run threw here.
   */
  async takeUp(planId: string): Promise<"started" | "held" | "idle" | "skipped"> {
    if (!this.servedGraphOf(planId)) return "idle";
    if (this.runs.has(planId) || this.runs.failure(planId)) return "skipped";
    // Asked first: a run going on elsewhere is not read (a long plan's checkpoint costs a replay).
    const live = await this.held(planId);
    if (live !== false) return live ? "held" : "idle";
    const core = await this.core(planId).catch((error: unknown) => {
      // A thread with no plan in it yet (cut before its first status): nothing the service can name.
      if (isPlanManagerError(error) && error.code === "invalid_input") return undefined;
      throw error;
    });
    if (!core || !runGoingOn(core)) return "idle";
    const snapshot = await this.snapshot(planId);
    // A create cut before its first checkpoint has no input to carry on from: plan_create starts it again.
    if (startedFrom(snapshot) === undefined || (await this.atBreakpoint(planId, snapshot))) return "idle";
    if (this.runs.has(planId)) return "skipped";
    try {
      // Resolves once the run holds the thread; another server's claim refuses it with thread_busy.
      await this.begin(planId, startedFrom(snapshot), (graph, config) => graph.invoke(null, config));
    } catch (error) {
      if (isPlanManagerError(error) && error.code === "thread_busy") return "held";
      throw error;
    }
    return "started";
  }

  /**
   * Whether the checkpoint is where the served graph's static breakpoints stop it (its public
   * `interruptBefore` / `interruptAfter`): a plan waiting there for `plan_resume`, which a cut run's
   * checkpoint looks like. Before: a node it runs next; after: a node that ran to write it (the
   * previous checkpoint's next).
   */
  private async atBreakpoint(planId: string, snapshot: StateSnapshot): Promise<boolean> {
    const graph = this.graphOf(this.graphNameOf(planId)) as ServedGraph & Breakpoints;
    const stops = (nodes: Breakpoints["interruptBefore"], at: readonly string[]) =>
      nodes === "*" ? at.length > 0 : Array.isArray(nodes) && at.some((node) => nodes.includes(node));
    if (stops(graph.interruptBefore, snapshot.next)) return true;
    if (graph.interruptAfter === undefined || graph.interruptAfter.length === 0 || !snapshot.parentConfig) return false;
    return stops(graph.interruptAfter, (await graph.getState(snapshot.parentConfig)).next);
  }

  /** Plans newest first, a page at a time; `status` keeps only those; archived ones only when asked. */
  async list(input: ListInput = {}): Promise<Listed> {
    const limit = input.limit ?? 20;
    if (!Number.isInteger(limit) || limit < 1 || limit > 200)
      throw new PlanManagerError("invalid_input", `limit must be an integer from 1 to 200, got ${limit}`, {
        path: "limit",
      });
    const wanted = input.status && input.status.length > 0 ? new Set(input.status) : undefined;
    const plans: Listed["plans"] = [];
    let cursor = input.cursor;
    for (;;) {
      const page = await listThreads(this.saver, {
        limit,
        archived: input.archived ?? "exclude",
        ...(cursor ? { cursor } : {}),
      }).catch((error: unknown) => {
        // A bad cursor or filter is the caller's input here, not the library's options.
        if (isPlanManagerError(error) && error.code === "invalid_options")
          throw new PlanManagerError("invalid_input", error.message, error.path ? { path: error.path } : {});
        throw error;
      });
      const rows = await this.statusRows(page.threads.map((t) => t.threadId));
      for (const [i, thread] of page.threads.entries()) {
        const graphName = this.servedGraphOf(thread.threadId);
        if (!graphName) continue;
        // The thread's status row when it describes the checkpoint listed, else that checkpoint read.
        const row = rows.get(thread.threadId);
        const stored = row?.checkpointId === thread.checkpointId ? storedSummary(row.summary) : undefined;
        const summary = stored ?? summaryOf(await this.snapshot(thread.threadId));
        const status = statusOf(summary.core.stored, this.runs.has(thread.threadId) || summary.core.running === true);
        if (wanted && !wanted.has(status)) continue;
        plans.push({
          plan_id: thread.threadId,
          graph: graphName,
          goal: summary.core.goal,
          status,
          archived: thread.archived,
          ...(summary.createdAt ? { updated_at: summary.createdAt } : {}),
        });
        if (plans.length === limit) {
          const more = i < page.threads.length - 1 || page.nextCursor !== undefined;
          // The cursor after this plan: the next page starts right after it.
          return more ? { plans, next_cursor: cursorAfter(thread) } : { plans };
        }
      }
      if (page.nextCursor === undefined) return { plans };
      cursor = page.nextCursor;
    }
  }

  /** The plan's report: its metrics and lines as JSON, or the same as Markdown. */
  async report(planId: string, format: "json" | "markdown" = "json"): Promise<{ format: string; report: unknown }> {
    const status = await this.status(planId);
    const snapshot = await this.snapshot(planId);
    const values = snapshot.values as Parameters<typeof planMetrics>[0] & Parameters<typeof userView>[0];
    const metrics = planMetrics({ ...values, usage: values.usage ?? [] });
    const lines = userView(values);
    if (format === "json") return { format, report: { status, metrics, lines } };
    const md = [
      `# ${status.goal}`,
      "",
      `Status: **${statusLabel(status.status, status.outcome)}**${status.outcome?.summary ? ` — ${status.outcome.summary}` : ""}`,
      "",
      "## Steps",
      "",
      ...lines.map((line) => `- ${line}`),
      "",
      "## Metrics",
      "",
      ...Object.entries(metrics).map(([k, v]) => `- ${k}: ${JSON.stringify(v)}`),
    ].join("\n");
    return { format, report: md };
  }

  /** Deletes the plan's checkpoints, writes and marks; a plan whose run is going on refuses with `thread_busy`. */
  async delete(planId: string): Promise<{ plan_id: string; deleted: true }> {
    const snapshot = await this.existing(planId);
    this.notRunning(planId);
    // A create's row with no checkpoint yet goes under the thread's claim: a run still starting refuses it.
    if ((snapshot.values as StatusValues | undefined)?.status === undefined) await deleteUnlessHeld(this.saver, planId);
    else await deleteThread(this.saver, planId);
    this.runs.forget(planId);
    this.parents.delete(planId);
    return { plan_id: planId, deleted: true };
  }

  /** Leaves the plan out of `list` unless asked (`archived`), or brings it back; nothing is deleted. */
  async archive(planId: string, archived = true): Promise<{ plan_id: string; archived: boolean }> {
    await this.existing(planId);
    if (archived) await archiveThread(this.saver, planId, { now: this.now() });
    else await unarchiveThread(this.saver, planId);
    return { plan_id: planId, archived };
  }

  /** Ends the runs this process drives where they stand (a shutdown); their threads carry on with `resume`. */
  async close(): Promise<void> {
    this.runs.pauseAll();
    await this.settled();
  }

  /**
   * Ends the runs this process drives at their next step boundary, sooner than `close` (a SIGTERM,
   * with a kill to follow): read-only calls in flight are cut, side-effecting ones run to their end,
   * and every result is checkpointed before this resolves (docs/decisions/0028-a-stopped-run-keeps-its-results.md).
   * The plans stay `running` for a server on the same database to take up.
   */
  async halt(): Promise<void> {
    const halted = this.runs.abortAll();
    await this.runs.settled();
    const checkpointer = originalSaver(this.saver);
    await Promise.all(halted.map((threadId) => threadLetGo({ checkpointer, threadId, namespace: "" })));
    await Promise.all(this.writing.values());
  }

  /** Lets the runs this process drives reach their next checkpoint (for a clean shutdown and tests). */
  async settled(): Promise<void> {
    await this.runs.settled();
    await Promise.all(this.writing.values());
  }

  /**
   * Waits for a run another process drives, woken by its announcements (`wakes`): true once the
   * checkpoint shows it ended, stopped or waiting for an answer, false when `ms` ran out first;
   * undefined without `wakes`, when nothing could wake this wait.
   */
  private async waitElsewhere(planId: string, ms: number): Promise<boolean | undefined> {
    if (!this.wakes) return undefined;
    let wake!: () => void;
    let woken = new Promise<void>((resolve) => (wake = resolve));
    // Watching before the first read: an announcement sent between the read and the watch is not missed.
    const unwatch = this.wakes.watch(planId, () => wake());
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
    try {
      for (;;) {
        if (!runGoingOn(await this.core(planId))) return true;
        if ((await Promise.race([woken.then(() => true as const), late])) === false) return false;
        woken = new Promise<void>((resolve) => (wake = resolve));
      }
    } finally {
      unwatch();
      clearTimeout(timer);
    }
  }

  /**
   * Runs in the background, and resolves once the run holds the plan's thread (in the database on
   * SQLite and PostgreSQL): until then another process may still take or delete it, and "running"
   * would not be true. What refused the run then (the thread busy elsewhere, or deleted: an unknown
   * plan; `whenHeld`) is this call's error, and nothing was written. Once held, and before the run
   * writes anything, a status row says that a run is going on from `from`, so that a service in
   * another process does not answer a wait with the question being answered, nor "no plan" before
   * the first checkpoint. When the run returns (or throws, or pauses), and before it counts as
   * settled, the status of the thread's latest checkpoint is stored beside it for `status`, `wait`
   * and `list` to read in one lookup. The row is read from the checkpoint itself and keyed by its
   * id, so it is right for that checkpoint whatever wrote it; a later checkpoint makes it stale, and
   * readers then read the checkpoint again.
   */
  private async begin(
    planId: string,
    from: { checkpointId: string; summary: Summary } | undefined,
    run: (graph: ServedGraph, config: LangGraphRunnableConfig) => Promise<unknown>,
    whenHeld?: () => Promise<void>,
  ): Promise<void> {
    this.ending.delete(planId);
    const graph = this.graphOf(this.graphNameOf(planId));
    const store = saverAdapter(this.saver).statuses;
    const held = this.runs.start(
      planId,
      graph,
      async (g, config) => {
        try {
          return await run(g, config);
        } finally {
          // A run refused before it held the thread wrote nothing, and has no row to write.
          // An optimisation only: a row that could not be written leaves readers on the checkpoint.
          if (this.runs.holds(planId)) await this.storeStatus(planId).catch(() => undefined);
        }
      },
      {
        callsHeld: (graph as Partial<Record<typeof CALLS_HELD, unknown>>)[CALLS_HELD] === true,
        whenHeld: async () => {
          // The row first, so that a create in another process refused by this run's claim finds it
          // sooner; a row written for a create that `whenHeld` then refuses is ignored, as the thread
          // has a checkpoint, which a row with no checkpoint cannot describe.
          if (store && from)
            await store
              .write(planId, { checkpointId: from.checkpointId, summary: JSON.stringify(runningFrom(from.summary)) })
              .catch(() => undefined);
          await whenHeld?.();
        },
      },
    );
    await held;
  }

  /** `begin` for a plan that exists: one deleted since it was read (here or by another process) is an unknown plan, as it now is. */
  private async carryOn(
    planId: string,
    snapshot: StateSnapshot,
    run: (graph: ServedGraph, config: LangGraphRunnableConfig) => Promise<unknown>,
  ): Promise<void> {
    await this.begin(planId, startedFrom(snapshot), run).catch(async (error: unknown) => {
      if (!(await this.stillThere(planId))) throw noPlan(planId);
      throw error;
    });
  }

  /** Whether the plan has a checkpoint, or a run started with none yet. */
  private async stillThere(planId: string): Promise<boolean> {
    const latest = await this.saver.getTuple({ configurable: { thread_id: planId, checkpoint_ns: "" } });
    return latest !== undefined || (await this.statusRows([planId])).get(planId)?.checkpointId === NO_CHECKPOINT;
  }

  /**
   * Reads the plan's latest checkpoint and starts writing its status row (storage/status-store.ts);
   * until the row is written, `ending` holds what it says for the waits on the run that just returned.
   */
  private async storeStatus(planId: string): Promise<void> {
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

  /** Status rows of `planIds` (none without a store). */
  private async statusRows(planIds: string[]) {
    const store = saverAdapter(this.saver).statuses;
    return store ? store.read(planIds) : new Map<string, { checkpointId: string; summary: string }>();
  }

  /**
   * The plan's status as its latest checkpoint shows it: from its status row when the row names that
   * checkpoint (one primary-key lookup each), else from the checkpoint (`getState`, which rebuilds the
   * delta channels). `invalid_input` naming the id when there is no such plan.
   */
  private async core(planId: string): Promise<StatusCore> {
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

  private recentPlan(key: string): string | undefined {
    const seen = this.recent.get(key);
    return seen && this.now() - seen.at <= this.dedupeWindowMs ? seen.planId : undefined;
  }

  private notRunning(planId: string): void {
    if (this.runs.has(planId))
      throw new PlanManagerError(
        "thread_busy",
        `plan "${planId}" is running: wait for it (plan_wait) or stop it (plan_stop)`,
      );
  }

  private graphNameOf(planId: string): string {
    const name = this.servedGraphOf(planId);
    if (!name) throw noPlan(planId);
    return name;
  }

  private servedGraphOf(planId: string): string | undefined {
    const at = planId.lastIndexOf(SEPARATOR);
    const name = at < 0 ? undefined : planId.slice(at + SEPARATOR.length);
    return name !== undefined && Object.hasOwn(this.graphs, name) ? name : undefined;
  }

  private graphOf(name: string): ServedGraph {
    if (!Object.hasOwn(this.graphs, name))
      throw new PlanManagerError(
        "invalid_input",
        `no graph "${name}" (served: ${Object.keys(this.graphs).join(", ")})`,
        { path: "graph" },
      );
    return this.graphs[name]!;
  }

  private configOf(planId: string): LangGraphRunnableConfig {
    return { configurable: { thread_id: planId } };
  }

  private snapshot(planId: string): Promise<StateSnapshot> {
    return this.graphOf(this.graphNameOf(planId)).getState(this.configOf(planId));
  }

  /** The plan's snapshot, or `invalid_input` naming the id when there is no such plan. */
  private async existing(planId: string): Promise<StateSnapshot> {
    const snapshot = await this.snapshot(planId);
    if ((snapshot.values as StatusValues | undefined)?.status === undefined && !this.runs.has(planId))
      // Not trusted to this process alone: a run another one started may not have written its first checkpoint.
      if ((await this.statusRows([planId])).get(planId)?.checkpointId !== NO_CHECKPOINT) throw noPlan(planId);
    return snapshot;
  }
}

/**
 * Whether the checkpoint shows a run still going: not ended, not stopped, no question. (Not
 * `next`: it is empty while a step's call is in flight between checkpoints.) A run whose process
 * died looks the same: a wait on it lasts its timeout.
 */

/** A compiled graph's static breakpoints, as LangGraph's `CompiledStateGraph` shows them. */
interface Breakpoints {
  interruptBefore?: readonly string[] | "*";
  interruptAfter?: readonly string[] | "*";
}

/** What a status row holds: the status of one checkpoint, and when that checkpoint was written. */
interface Summary {
  core: StatusCore;
  createdAt?: string;
  /** The request a create made the plan for (`requestOf`), until its first checkpoint holds it. */
  request?: string;
}

const noPlan = (planId: string) =>
  new PlanManagerError("invalid_input", `no plan "${planId}" (plan ids come from plan_create or plan_list)`, {
    path: "plan_id",
  });

/** The status of a plan whose create has started its run, before the run's first checkpoint. */
function startingCore(goal: string): StatusCore {
  return {
    goal,
    stored: "planning",
    plan_version: null,
    steps: [],
    progress: { done: 0, total: 0 },
    timing: { started_at: null, last_progress_at: null },
    usage: { cost: 0, replan_cost: 0, input_tokens: 0, output_tokens: 0 },
  };
}

/** Where a run starts from an existing checkpoint (an answer, a resume): that checkpoint and its status. */
function startedFrom(snapshot: StateSnapshot): { checkpointId: string; summary: Summary } | undefined {
  const checkpointId = snapshot.config.configurable?.checkpoint_id;
  return typeof checkpointId === "string" ? { checkpointId, summary: summaryOf(snapshot) } : undefined;
}

/** The row written as a run starts: the checkpoint's status, with a run going on that it does not show yet. */
function runningFrom(summary: Summary): Summary {
  return { ...summary, core: { ...summary.core, running: true } };
}

function summaryOf(snapshot: StateSnapshot): Summary {
  return { core: statusCore(snapshot), ...(snapshot.createdAt ? { createdAt: snapshot.createdAt } : {}) };
}

const storedSummary = (text: string): Summary => JSON.parse(text) as Summary;

export function pendingOf(snapshot: StateSnapshot): InterruptPayload | undefined {
  return snapshot.tasks.flatMap((t) => t.interrupts ?? [])[0]?.value as InterruptPayload | undefined;
}

/** The status a caller sees: "running" while this process drives the run, else the checkpoint's. */
export function statusOf(snapshot: StateSnapshot | string, running: boolean): string {
  const status =
    typeof snapshot === "string" ? snapshot : ((snapshot.values as StatusValues | undefined)?.status ?? "planning");
  return running && !FINISHED.has(status) ? "running" : status;
}

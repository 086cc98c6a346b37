/**
 * `plan_create`: a new plan run in the background, or the plan an earlier create of the same request
 * made — named for good by an idempotency key, or found within the dedupe window
 * (docs/decisions/0037-planning-service-over-mcp.md "Idempotency keys name one request").
 */
import { randomUUID } from "node:crypto";
import { PlanManagerError, isPlanManagerError } from "../errors.js";
import { checkDraft, checkInput } from "../graph/boundary.js";
import type { PlanManagerInputType } from "../runtime/state.js";
import { asArgument } from "./argument-errors.js";
import { ExpiringMap } from "./expiring-map.js";
import { MAX_REMEMBERED, SEPARATOR, type PlanThreads } from "./plan-threads.js";
import { digest, keyConflict, requestOf } from "./requests.js";
import { beginRun } from "./run-start.js";
import type { CreateInput, Created } from "./service-types.js";
import type { StatusValues } from "./status.js";
import { NO_CHECKPOINT, startingCore, statusOf, storedSummary } from "./summaries.js";

type RunInput = { goal: string; context?: Record<string, unknown>; draft?: unknown };

/** One create's checked request: what it runs, its digests, and the plan id its key names. */
interface Request {
  graphName: string;
  runInput: RunInput;
  request: string;
  recentKey: string;
  keyed: string | undefined;
  input: CreateInput;
}

export class PlanCreates {
  private readonly threads: PlanThreads;
  private readonly server: Created["server"];
  private readonly dedupeWindowMs: number;
  /** Recent plans by goal, context and graph, for the dedupe window (bounded: expiring-map.ts). */
  private readonly recent: ExpiringMap<string, { planId: string; at: number }>;
  /**
   * Creates under way, by the plan their key names or by their request: a create of the same joins
   * the one under way, so the lookup and the start are one step in this process.
   */
  private readonly creating = new Map<string, { request: string; created: Promise<Created> }>();

  constructor(threads: PlanThreads, server: Created["server"], dedupeWindowMs: number) {
    this.threads = threads;
    this.server = server;
    this.dedupeWindowMs = dedupeWindowMs;
    this.recent = new ExpiringMap({ ttlMs: dedupeWindowMs, maxEntries: MAX_REMEMBERED, now: () => threads.now() });
  }

  async create(input: CreateInput): Promise<Created> {
    const graphName = input.graph ?? Object.keys(this.threads.graphs)[0]!;
    this.threads.graphOf(graphName);
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
    }) as RunInput;
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
  private async createOnce(c: Request): Promise<Created> {
    const { graphName, recentKey, keyed, input } = c;
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
      await this.threads.existing(input.parent_plan_id).catch(asArgument("parent_plan_id"));
    const id = planId ?? `${randomUUID().replaceAll("-", "")}${SEPARATOR}${graphName}`;
    if (this.threads.runs.has(id)) return { plan_id: id, status: "running", created: false, server: this.server };
    const started = await this.start(id, c);
    if (started) return started;
    this.recent.set(recentKey, { planId: id, at: this.threads.now() });
    if (input.parent_plan_id !== undefined) this.threads.parents.set(id, input.parent_plan_id);
    return { plan_id: id, status: "running", created: true, server: this.server };
  }

  /** Starts the new plan's run; what another process's create of the same key made first, if it did. */
  private async start(id: string, c: Request): Promise<Created | undefined> {
    const { graphName, runInput, request, keyed, input } = c;
    const starting = { checkpointId: NO_CHECKPOINT, summary: { core: startingCore(runInput.goal), request } };
    try {
      // A new plan starts on an empty thread only: checked while the run holds it, so another
      // process that made the plan this key names first cannot be run over.
      await beginRun(
        this.threads,
        id,
        starting,
        // Checked above (checkInput): the draft is the planner's shape.
        { kind: "run", input: runInput as PlanManagerInputType },
        (graph, config) => graph.invoke(runInput, config),
        async () => {
          if (await this.threads.saver.getTuple({ configurable: { thread_id: id, checkpoint_ns: "" } }))
            throw new PlanManagerError("thread_busy", `plan "${id}" was started by another create meanwhile`);
        },
      );
      return undefined;
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
  }

  /** A key reused for another request is refused (a payment API does the same); `new_run` needs a new key. */
  private sameRequest(key: string, planId: string, known: { request?: string }, c: Request) {
    if (c.input.new_run === true) throw keyConflict(key, planId, "newRun");
    if (known.request !== undefined && known.request !== c.request) throw keyConflict(key, planId, "other");
  }

  /**
   * Whether the plan is a create's row with no checkpoint that no live process holds: its process
   * ended before the run's first checkpoint. False when the saver cannot tell who holds it.
   */
  private async neverStarted(planId: string): Promise<boolean> {
    if (this.threads.runs.has(planId)) return false;
    if (await this.threads.saver.getTuple({ configurable: { thread_id: planId, checkpoint_ns: "" } })) return false;
    if ((await this.threads.statusRows([planId])).get(planId)?.checkpointId !== NO_CHECKPOINT) return false;
    return (await this.threads.held(planId)) === false;
  }

  /** The same key on another served graph names another plan id: refused as another request. */
  private async keyOnOtherGraphs(key: string, graphName: string): Promise<void> {
    for (const other of Object.keys(this.threads.graphs)) {
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
    const snapshot = await this.threads.snapshot(planId);
    const values = snapshot.values as (StatusValues & { context?: unknown; draft?: unknown }) | undefined;
    if (values?.status !== undefined && values.goal !== undefined)
      return { status: statusOf(snapshot, this.threads.runs.has(planId)), request: requestOf(graphName, values) };
    // No checkpoint yet, or only the run's first, which holds its input before the goal is read from it.
    const row = (await this.threads.statusRows([planId])).get(planId);
    const request = row?.checkpointId === NO_CHECKPOINT ? storedSummary(row.summary).request : undefined;
    if (values?.status !== undefined)
      return { status: statusOf(snapshot, this.threads.runs.has(planId)), ...(request ? { request } : {}) };
    if (row?.checkpointId === NO_CHECKPOINT)
      return { status: statusOf(storedSummary(row.summary).core.stored, true), ...(request ? { request } : {}) };
    return this.threads.runs.has(planId) ? { status: "running" } : undefined;
  }

  private recentPlan(key: string): string | undefined {
    const seen = this.recent.get(key);
    return seen && this.threads.now() - seen.at <= this.dedupeWindowMs ? seen.planId : undefined;
  }
}

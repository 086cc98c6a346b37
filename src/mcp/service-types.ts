/** The plan service's options, and what its methods take and answer (src/mcp/service.ts). */
import type { BaseCheckpointSaver, LangGraphRunnableConfig } from "@langchain/langgraph";
import type { SubmittedError } from "../plan/schema/interrupts.js";
import type { StoppableGraph } from "../worker/stop-run.js";
import type { PlanWakes } from "./wakes.js";
import type { ResumeValue } from "../plan/schema/interrupts.js";
import type { PlanManagerInputType } from "../runtime/state.js";

/** What the service needs of a served graph: a compiled plan manager with a checkpointer. */
export interface ServedGraph extends StoppableGraph {
  invoke(input: unknown, config: LangGraphRunnableConfig): Promise<unknown>;
}

/**
 * What a `PlanService` serves: the graphs by name, their checkpointer, the clock, and where runs of other
 * processes are heard of.
 */
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
  /**
   * Hand every run to `createWorker` processes instead of running it here: creates, answers and
   * resumes become jobs on the workers' queue (`openQueue` from langgraph-replan/worker, on the
   * database of `saver`), and `wait` is woken by the workers' announcements, so `wakes` is needed too
   * (docs/decisions/0074-workers-wake-plan-waits.md). Default: none — this process runs its plans.
   */
  workers?: PlanQueue;
  /**
   * Ask each question a plan waits on (plan review, escalation, human step) of the MCP client's user
   * too, through elicitation, when the client declared the capability
   * (docs/decisions/0061-questions-elicited-from-the-client.md). Default true; false is `--no-elicit`.
   */
  elicit?: boolean;
}

/** The input of `plan_create`. */
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

/** The answer of `plan_create`: the plan id, its status, and whether this call made it. */
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

/** The input of `plan_list`: statuses, archived plans, and the page. */
export interface ListInput {
  status?: string[];
  /** `"exclude"` (default) leaves archived plans out, `"only"` lists them alone, `"include"` both. */
  archived?: "exclude" | "only" | "include";
  cursor?: string;
  limit?: number;
}

/** The answer of `plan_list`: plans newest first, and the cursor of the next page. */
export interface Listed {
  plans: { plan_id: string; graph: string; goal: string; status: string; archived: boolean; updated_at?: string }[];
  next_cursor?: string;
}

/** The workers' queue as the service uses it: `openQueue(url)` from langgraph-replan/worker is one. */
export interface PlanQueue {
  enqueueRun(threadId: string, input: PlanManagerInputType): Promise<string>;
  enqueueResume(threadId: string, value: ResumeValue, interruptId?: string): Promise<string>;
  enqueueResumeStopped(threadId: string): Promise<string>;
  /**
   * Leaves a stop request for the worker running the thread (true), or, when none does, holds the
   * thread while `whenIdle` stops it in its checkpoint (false).
   */
  requestStop(threadId: string, reason: string | undefined, whenIdle: () => Promise<void>): Promise<boolean>;
}

/**
 * A plan's status as an agent reads it, from one checkpoint (never the history): each step with
 * its status and the trust labels of the facts it produced, progress, timing, the question
 * waiting for an answer, why it failed and whether that can be recovered, and usage.
 */
import type { StateSnapshot } from "@langchain/langgraph";
import type { InterruptPayload } from "../plan/schema/interrupts.js";
import type { Outcome } from "../plan/schema/outcome.js";
import type { QualitySummary } from "../plan/schema/quality.js";
import type { Plan } from "../plan/schema/plan.js";
import type { Budget, Fact, StepRun } from "../plan/schema/run.js";

export interface StatusValues {
  goal?: string;
  status?: string;
  plan?: Plan;
  steps?: Record<string, StepRun>;
  facts?: Record<string, Fact>;
  outcome?: Outcome;
  budget?: Budget;
  usage?: { cost?: number; inputTokens?: number; outputTokens?: number }[];
}

/**
 * The answer of `plan_status` (and `plan_wait`): read from the latest checkpoint, with the question waiting,
 * the error, usage and outcome.
 */
export interface PlanStatus {
  plan_id: string;
  graph: string;
  goal: string;
  status: string;
  plan_version: number | null;
  steps: {
    id: string;
    goal: string;
    status: string;
    attempts: number;
    /** The trust label of each fact the step produced, by fact key. */
    facts: Record<string, string>;
    /** When the attempt in flight started, for a run no live server holds (mcp/cut-run.ts). */
    started_at?: string;
    /** That attempt's side-effecting call was never answered: the run that takes the plan up settles it. */
    in_doubt?: true;
  }[];
  progress: { done: number; total: number };
  timing: { started_at: string | null; last_progress_at: string | null };
  /** The question the plan waits on (answer it with plan_answer). */
  question?: InterruptPayload;
  /** Only when the plan failed, ended partial or was stopped, or its run threw. */
  error?: { failure_reason: string; failed_step?: string; message?: string; recoverable: boolean; code?: string };
  outcome?: Outcome;
  /** How well a finished run went (`outcome.quality`, docs/decisions/0040-plan-quality-gate.md). */
  quality?: QualitySummary;
  usage: { cost: number; replan_cost: number; input_tokens: number; output_tokens: number };
  parent_plan_id?: string;
  /**
   * While the run is going on (not ended, stopped or asking): whether a live process holds it. False
   * when its server was closed or killed mid-step; a server started on the database takes it up.
   */
  server?: { live: boolean };
  /** Says what `server.live: false` means and what to do. */
  message?: string;
}

const DONE = new Set(["succeeded", "skipped", "invalidated"]);

/**
 * What a plan's status says of one checkpoint alone, before the service adds what only it knows
 * (whether it drives the run, the parent plan, what the run threw). JSON-safe: a status row
 * (storage/status-store.ts) holds it as text, and `planStatus` of the row gives what it gives of
 * the checkpoint.
 */
export interface StatusCore {
  goal: string;
  /** The checkpoint's status channel ("planning" before it has one). */
  stored: string;
  plan_version: number | null;
  steps: PlanStatus["steps"];
  progress: PlanStatus["progress"];
  timing: PlanStatus["timing"];
  question?: InterruptPayload;
  outcome?: Outcome;
  usage: PlanStatus["usage"];
  /**
   * The status is final but the run has work left: an aborted (or failed) run's undos run after its
   * status is written (docs/decisions/0039-compensation.md), and one may still ask a person.
   */
  ending?: true;
  /**
   * Written by the service that started a run from this checkpoint, before it answered "running":
   * a run is going on that this checkpoint does not show yet (in this process or another), so the
   * question it shows is being answered and the run has not ended.
   */
  running?: true;
}

const FINAL: ReadonlySet<string> = new Set(["completed", "partial", "failed", "aborted"]);

/** Whether the run of this status may still change it or ask something: not ended, stopped or asking. */
export function runGoingOn(core: StatusCore): boolean {
  if (core.running) return true;
  if (core.question || core.stored === "stopped") return false;
  return !FINAL.has(core.stored) || core.ending === true;
}

/** The status of the checkpoint `snapshot` shows, as a `StatusCore`. */
export function statusCore(snapshot: StateSnapshot): StatusCore {
  const values = (snapshot.values ?? {}) as StatusValues;
  const question = snapshot.tasks.flatMap((t) => t.interrupts ?? [])[0]?.value as InterruptPayload | undefined;
  return {
    ...valuesCore(values),
    ...(question ? { question } : {}),
    ...(FINAL.has(values.status ?? "") && !question && snapshot.next.length > 0 ? { ending: true as const } : {}),
  };
}

/**
 * What the run's state values alone say of its status: all of `statusCore` but the question and
 * whether work is left after a final status, which only the checkpoint's tasks show.
 */
export function valuesCore(values: StatusValues): StatusCore {
  const planned = values.plan?.steps ?? [];
  const runs = values.steps ?? {};
  const factsBy = new Map<string, Record<string, string>>();
  for (const [key, fact] of Object.entries(values.facts ?? {})) {
    const labels = factsBy.get(fact.producedBy) ?? {};
    labels[key] = fact.label;
    factsBy.set(fact.producedBy, labels);
  }
  const times = Object.values(runs).flatMap((r) => [r.startedAt, r.endedAt].filter((t): t is string => !!t));
  times.sort();
  const outcome = values.outcome;
  return {
    goal: values.goal ?? "",
    stored: values.status ?? "planning",
    plan_version: values.plan?.version ?? null,
    steps: planned.map((step) => ({
      id: step.id,
      goal: step.goal,
      status: runs[step.id]?.status ?? "pending",
      attempts: runs[step.id]?.attempts ?? 0,
      facts: factsBy.get(step.id) ?? {},
    })),
    progress: { done: planned.filter((s) => DONE.has(runs[s.id]?.status ?? "")).length, total: planned.length },
    timing: { started_at: times[0] ?? null, last_progress_at: times.at(-1) ?? null },
    ...(outcome ? { outcome } : {}),
    usage: usageOf(values),
  };
}

export function planStatus(
  planId: string,
  graph: string,
  snapshot: StateSnapshot | StatusCore,
  extra: { running: boolean; parentPlanId?: string; thrown?: { code?: string; message: string } },
): PlanStatus {
  const core = "stored" in snapshot ? snapshot : statusCore(snapshot);
  const { stored, question, outcome } = core;
  const running = extra.running || core.running === true;
  const status = running && !["completed", "partial", "failed", "aborted"].includes(stored) ? "running" : stored;
  const error = errorOf(stored, outcome, extra.thrown);
  return {
    plan_id: planId,
    graph,
    goal: core.goal,
    status,
    plan_version: core.plan_version,
    steps: core.steps,
    progress: core.progress,
    timing: core.timing,
    ...(question && !running ? { question } : {}),
    ...(error ? { error } : {}),
    ...(outcome ? { outcome } : {}),
    ...(outcome?.quality ? { quality: outcome.quality } : {}),
    usage: core.usage,
    ...(extra.parentPlanId ? { parent_plan_id: extra.parentPlanId } : {}),
  };
}

/** Why the plan stopped short, when it did (or what its run threw). */
function errorOf(
  stored: string,
  outcome: Outcome | undefined,
  thrown: { code?: string; message: string } | undefined,
): PlanStatus["error"] | undefined {
  if (thrown)
    return {
      failure_reason: "run_threw",
      message: thrown.message,
      recoverable: true,
      ...(thrown.code ? { code: thrown.code } : {}),
    };
  if (!["failed", "partial", "stopped", "aborted"].includes(stored)) return undefined;
  return {
    failure_reason: outcome?.failureReason ?? stored,
    ...(outcome?.failedStep ? { failed_step: outcome.failedStep } : {}),
    ...(outcome?.message ? { message: outcome.message } : {}),
    // A stop is resumable; a failure is when the outcome says so.
    recoverable: stored === "stopped" || outcome?.recoverable === true,
  };
}

function usageOf(values: StatusValues): PlanStatus["usage"] {
  const usage = values.usage ?? [];
  return {
    cost: values.budget?.spent ?? 0,
    replan_cost: values.budget?.replanSpent ?? 0,
    input_tokens: usage.reduce((n, u) => n + (u.inputTokens ?? 0), 0),
    output_tokens: usage.reduce((n, u) => n + (u.outputTokens ?? 0), 0),
  };
}

/**
 * The runs a plan service drives in its own process, by plan id: started in the background, woken
 * on when they return or pause, asked to stop or pause at their next step boundary (the same control
 * a worker's driver has, runtime/run-control.ts), and what they threw when the checkpoint cannot say.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { PlanManagerError, isPlanManagerError } from "../errors.js";
import { RUN_CONTROL, isRunPaused, type RunControl, type RunRequest } from "../runtime/run-control.js";

/** The say a service has over a run it drives: an operator's stop, or a pause at shutdown. */
interface Control extends RunControl {
  request?: RunRequest;
  /** Set when the run has taken its thread. */
  holds?: boolean;
}

interface Run {
  /** Settles when the run returns or pauses. */
  done: Promise<void>;
  controller: AbortController;
  control: Control;
}

export type Thrown = { code?: string; message: string };

/** At most this many runs' failures are kept (a server whose saver fails for days must not grow without end). */
export const MAX_FAILURES = 10_000;

export class BackgroundRuns {
  private readonly runs = new Map<string, Run>();
  /** Called once a run has returned or paused and no longer counts as running (mcp/wakes.ts announces it). */
  private readonly onSettled: (planId: string) => void;

  constructor(onSettled: (planId: string) => void = () => undefined) {
    this.onSettled = onSettled;
  }

  /**
   * What a background run threw, by plan id, until the plan runs again or is deleted (`forget`); at
   * most `MAX_FAILURES`, the oldest dropped first (that plan's status then shows its checkpoint alone).
   */
  private readonly failures = new Map<string, Thrown>();

  has(planId: string): boolean {
    return this.runs.has(planId);
  }

  failure(planId: string): Thrown | undefined {
    return this.failures.get(planId);
  }

  /** Drops what the plan's run threw (the plan was deleted). */
  forget(planId: string): void {
    this.failures.delete(planId);
  }

  /**
   * Runs `run` in the background on the plan's thread. What it throws (a planner that fails before
   * the first plan, a saver that cannot write) is kept for `failure`; a pause or a shutdown is not a failure.
   * Resolves once the run holds the plan's thread (`RunControl.held`) and `whenHeld` did not refuse
   * it (at once for a graph that does not say it calls `held`: `callsHeld` false); rejects with what
   * the run threw if it ended before that (another process held the thread, it was deleted, or
   * `whenHeld` refused), which is then the caller's error, not the plan's.
   */
  start<G>(
    planId: string,
    graph: G,
    run: (graph: G, config: LangGraphRunnableConfig) => Promise<unknown>,
    options: { callsHeld?: boolean; whenHeld?: () => Promise<void> } = {},
  ): Promise<void> {
    if (this.runs.has(planId)) throw new PlanManagerError("thread_busy", `plan "${planId}" is already running`);
    const controller = new AbortController();
    let held!: () => void;
    const holds = new Promise<void>((resolve) => (held = resolve));
    const control: Control = {
      wanted: () => control.request,
      held: async () => {
        await options.whenHeld?.();
        control.holds = true;
        held();
      },
    };
    if (!options.callsHeld) {
      control.holds = true;
      held();
    }
    this.failures.delete(planId);
    const config = { configurable: { thread_id: planId, [RUN_CONTROL]: control }, signal: controller.signal };
    let refused: { error: unknown } | undefined;
    const done = run(graph, config).then(
      () => undefined,
      (error: unknown) => {
        if (!control.holds) refused = { error };
        else if (!controller.signal.aborted && !isRunPaused(error)) this.failed(planId, thrown(error));
      },
    );
    const settled = done.finally(() => {
      this.runs.delete(planId);
      this.onSettled(planId);
    });
    this.runs.set(planId, { done: settled, controller, control });
    return Promise.race([
      holds,
      done.then(() => {
        if (refused) throw refused.error;
      }),
    ]);
  }

  private failed(planId: string, what: Thrown): void {
    this.failures.delete(planId);
    this.failures.set(planId, what);
    // A map in insertion order: the first key is the oldest failure.
    for (const oldest of this.failures.keys()) {
      if (this.failures.size <= MAX_FAILURES) break;
      this.failures.delete(oldest);
    }
  }

  /** Whether the plan's run (registered, not yet settled) has taken its thread. */
  holds(planId: string): boolean {
    return this.runs.get(planId)?.control.holds === true;
  }

  /** Waits for the plan's run to return or pause, at most `ms`: true if it did, false if time ran out, undefined if none runs. */
  async waitFor(planId: string, ms: number): Promise<boolean | undefined> {
    const run = this.runs.get(planId);
    return run ? untilOrAfter(run.done, ms) : undefined;
  }

  /** Asks the plan's run for a stop or a pause at its next step boundary, then waits as `waitFor` does. */
  async ask(planId: string, request: RunRequest, ms: number): Promise<boolean | undefined> {
    const run = this.runs.get(planId);
    if (!run) return undefined;
    run.control.request = request;
    return untilOrAfter(run.done, ms);
  }

  /** Asks every run to pause where it stands (a shutdown). */
  pauseAll(): void {
    for (const run of this.runs.values()) run.control.request = { kind: "pause" };
  }

  /** Stops every run through its signal (its next step boundary, calls with a key left to end); their plan ids. */
  abortAll(): string[] {
    for (const run of this.runs.values()) run.controller.abort();
    return [...this.runs.keys()];
  }

  async settled(): Promise<void> {
    await Promise.all([...this.runs.values()].map((r) => r.done));
  }
}

/** True when `done` settled within `ms`, false when the time ran out first. */
async function untilOrAfter(done: Promise<void>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  const settled = await Promise.race([done.then(() => true as const), late]);
  clearTimeout(timer);
  return settled;
}

function thrown(error: unknown): Thrown {
  if (isPlanManagerError(error)) return { code: error.code, message: error.message };
  return { message: error instanceof Error ? error.message : String(error) };
}

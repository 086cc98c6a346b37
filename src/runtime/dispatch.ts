/**
 * Tool calls in flight across executor visits (docs/decisions/0012-parallel-dispatch.md). An executor
 * visit starts calls and returns as soon as one has finished, so the checkpoint that ends the
 * visit makes that attempt durable while its siblings keep running; the next visit picks them
 * up here. The registry belongs to one run (`withDispatch`): a new run (a resume after a crash)
 * starts empty and calls again every step its checkpoint still shows as running.
 *
 * The registry also holds the caller's signal. When it aborts (the caller stopped the run), calls that
 * may be made again see their own signals abort, side-effecting ones run to their end, and the visit
 * waiting on them waits for all of them (each bounded by its step's timeout) so that their results
 * reach the visit's checkpoint before the run ends
 * (docs/decisions/0028-a-stopped-run-keeps-its-results.md).
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { CallOutcome } from "../policy/attempt/attempt.js";
import { errorInfo } from "../policy/ladder/deviation.js";
import type { RunningCall } from "../policy/attempt/may-start.js";
import type { UsageEntry } from "../contracts/usage.js";
import type { ValidationOutcome } from "../policy/attempt/agent-validation.js";
import type { SettledDoubt } from "../policy/attempt/next-attempt.js";
import { runPart, withRunPart } from "./run-parts.js";

/** What an agent step's attempt gathers while it runs: the key its tools see, its model calls, its validation. */
export interface AgentWork {
  /** The step's idempotency key: tools the agent calls find it in `config.configurable.idempotencyKey`. */
  key: string;
  usage: UsageEntry[];
  validation?: ValidationOutcome;
}

export interface Flight {
  call: RunningCall;
  attempt: number;
  key?: string;
  startedAt: string;
  /** How the attempt ended, as plain data (a class cannot cross a checkpoint). */
  result?: CallOutcome;
  /** Calls of the same tool running when this one ended, itself included (what AIMD halves). */
  toolCallsAtEnd?: number;
  /** Ends the stall watch of the call (set when the call starts); says whether it stalled. */
  stopWatching?: () => boolean;
  /** The call ran past `policy.stallFactor` × the step's `estimateMs`. */
  stalled?: boolean;
  /** An agent step's attempt: its model usage and validation (nodes/executor/agent-attempt.ts). */
  agent?: AgentWork;
  /** The tool was called (false when the run was stopped during the attempt's backoff). */
  called?: boolean;
  /** The attempt ended after the caller stopped the run (its failure may be the stop itself). */
  endedAfterStop?: boolean;
  /** What the effect journal made of the call, when it did more than pass it through. */
  effect?: "journaled" | "verified" | "in_doubt";
  /** The journal attempt of the intent in doubt (`effect: "in_doubt"`), which a person's retry approves. */
  inDoubtAttempt?: number;
  /** Calls in doubt the journal settled on the way, in order: each is a decision (runtime/run-attempt.ts). */
  settled?: SettledDoubt[];
}

export class Dispatcher {
  private readonly flights = new Map<string, Flight>();
  private readonly finished: Flight[] = [];
  private wake: (() => void) | undefined;

  /**
   * `shared` is false when the run did not get its own registry: the visit must then wait for
   * every call. `track` keeps the run's thread held while a call is in flight.
   */
  constructor(
    readonly shared: boolean,
    private readonly track: (work: Promise<unknown>) => void = () => undefined,
    /** The caller's signal: it aborts when the caller stops the run (its signal, or a stream left with `break`). */
    readonly stopSignal?: AbortSignal,
  ) {}

  /** The caller has stopped the run: nothing new starts, and the calls in flight are waited for. */
  get stopped(): boolean {
    return this.stopSignal?.aborted === true;
  }

  running(): RunningCall[] {
    return [...this.flights.values()].map((f) => f.call);
  }

  has(stepId: string): boolean {
    return this.flights.has(stepId);
  }

  get size(): number {
    return this.flights.size;
  }

  /**
   * Starts one attempt: `perform` drives it (runtime/run-attempt.ts: the backoff, then the call). A
   * drive that throws (a journal that cannot write, a sleep that rejects on a stop) ends the attempt
   * with that error: the visit waiting for it must never wait forever.
   */
  launch(flight: Flight, perform: () => Promise<CallOutcome>): void {
    this.flights.set(flight.call.stepId, flight);
    const driven = started(perform).catch((thrown: unknown): CallOutcome => ({ ok: false, error: errorInfo(thrown) }));
    const work = driven.then((result) => {
      flight.result = result;
      flight.endedAfterStop = this.stopped;
      flight.stalled = flight.stopWatching?.() ?? false;
      flight.toolCallsAtEnd = [...this.flights.values()].filter(
        (f) => f.call.tool === flight.call.tool && (f.result === undefined || f === flight),
      ).length;
      this.finished.push(flight);
      this.wake?.();
    });
    this.track(work);
  }

  /**
   * Waits until at least one attempt has ended — every one, with `all` or once the run is stopped —
   * then hands over every ended attempt in the order they ended and forgets them.
   */
  async takeFinished(all = false): Promise<Flight[]> {
    const waiting = () =>
      this.flights.size > 0 &&
      (this.finished.length === 0 || ((all || this.stopped) && this.finished.length < this.flights.size));
    // A stop only makes the wait longer (every call, not the first), so it needs no wake-up of its own.
    while (waiting()) await new Promise<void>((resolve) => (this.wake = resolve));
    this.wake = undefined;
    const done = this.finished.splice(0);
    for (const f of done) this.flights.delete(f.call.stepId);
    return done;
  }
}

/** The config a run's nodes see: it carries the run's registry of calls in flight. */
export function withDispatch<C extends { configurable?: Record<string, unknown> }>(
  config: C | undefined,
  track: (work: Promise<unknown>) => void,
  stopSignal?: AbortSignal,
): C {
  const dispatcher = new Dispatcher(true, track, stopSignal);
  return withRunPart(config, "dispatch", dispatcher);
}

export function dispatcherOf(config: LangGraphRunnableConfig): Dispatcher {
  const found = runPart(config, "dispatch");
  return found instanceof Dispatcher ? found : new Dispatcher(false);
}

/** The drive's promise; one that throws before it returns one is a rejected drive. */
function started(perform: () => Promise<CallOutcome>): Promise<CallOutcome> {
  try {
    return perform();
  } catch (thrown) {
    return Promise.reject(thrown);
  }
}

/**
 * The attempt machine's vocabulary (docs/decisions/0044-one-attempt-driver.md): the snapshot a drive
 * starts from, the records of what the driver performed (`Performed`), and the commands the machine
 * answers with (`AttemptCommand`: call, sleep, probe, ask, done). The machine is next-attempt.ts; the
 * performer is runtime/run-attempt.ts.
 */
import type { Plan } from "../../plan/schema/plan.js";
import type { CompensationRecord, ErrorInfo, Fact, SideEffectRecord, StepRun } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import type { Verdict } from "../ladder/classify.js";
import type { Decision } from "../ladder/decision.js";
import type { Deviation } from "../ladder/deviation.js";
import type { ProbeRead, SettledHow } from "../ladder/in-doubt.js";
import type { Before, CallOutcome, RunStanding } from "./attempt.js";

/** A call in doubt the effect journal settled without a person, and the key it settled. */
export interface SettledDoubt {
  how: SettledHow;
  key: string;
}

export interface AttemptSnapshot {
  step: Step;
  /** The step's record when the drive began (a fallback the model called itself: `usedFallback` set). */
  run: StepRun;
  threadId: string;
  /** The first call: the step's tool or its fallback, with the resolved arguments. */
  call: { tool: string; args: Record<string, unknown> };
  /** The step's resolved arguments, under which a fallback's own arguments go. */
  args: Record<string, unknown>;
  plan: Plan;
  facts: Readonly<Record<string, Fact>>;
  trusted: Readonly<Record<string, unknown>>;
  steps: Readonly<Record<string, StepRun>>;
  falsified?: readonly string[];
  committed: readonly SideEffectRecord[];
  compensations?: readonly CompensationRecord[] | undefined;
  spent: number;
  maxCost: number | undefined;
  /** The call's deadline (the step's `timeoutMs`, else the policy's default). */
  timeoutMs: number;
  /** When the drive began (ISO): decisions taken before any call is performed are stamped with it. */
  at: string;
  /** The checkpoint shows this attempt running with no call in flight (`beforeAttempt`). */
  again?: boolean;
  /** The run's clock (ms), for the freshness check. */
  now?: number;
  /** Given (createAgent): a retry or fallback goes on in this drive, and every deviation gets its verdict. */
  standing?: RunStanding;
}

/** What the driver performed, in order; `at`: its clock when it ended. */
export type Performed =
  | { kind: "slept"; at: string }
  /** The caller stopped the drive during a backoff (`error`: the stop's): nothing more is called in it. */
  | { kind: "stopped"; at: string; error: ErrorInfo }
  | {
      kind: "called";
      at: string;
      outcome: CallOutcome;
      /** The key the call went out (or was settled) under: the journal may move a redo to a fresh one. */
      key?: string;
      /**
       * The output came from the journal or the verify probe; or nothing settled a call in doubt; or
       * the call is in doubt and the step's verify probe is to settle it (`unsettled`: a `probe` follows).
       */
      effect?: "journaled" | "verified" | "in_doubt" | "unsettled";
      /** With `unsettled`: this call was cut (`outcome` is the cut's), or the journal held its intent already. */
      doubt?: "cut" | "found";
      /** With `in_doubt` or `unsettled`: the journal attempt of the intent in doubt. */
      inDoubtAttempt?: number;
      settled?: readonly SettledDoubt[];
    }
  /** The verify probe of a call in doubt ran, and said this. */
  | { kind: "probed"; at: string; read: ProbeRead };

/** The call to make: under `key` when it has side effects, cut at `timeoutMs`. */
export interface CallCommand {
  kind: "call";
  tool: string;
  args: Record<string, unknown>;
  key: string | undefined;
  /**
   * The operation's key whether or not the call has side effects, for an agent step (it hands it on
   * to the tools its agent calls); undefined for a step with neither side effects nor an agent.
   */
  operation: string | undefined;
  timeoutMs: number;
  attempt: number;
  charge: number;
  /** Decisions taken since the last command that are news now (a retry, a fallback). */
  announce: Decision[];
  /**
   * The journal held the call's intent in doubt and the verify probe says it did not happen: the same
   * attempt's call goes out again under the key, straight to a new intent.
   */
  notHappened?: true;
}

/**
 * The read-only verify probe of a call in doubt (docs/decisions/0068-probe-as-a-command.md): the step's
 * `verify` tool with its arguments and the trusted facts it reads, the key in its config, under the
 * call's deadline. The driver writes what its answer settles under the key and hands back `probed`.
 */
export interface ProbeCommand {
  kind: "probe";
  tool: string;
  args: Record<string, unknown>;
  key: string;
  timeoutMs: number;
  /** The call was just cut with this error: a probe that says it did not happen records it as the call's failure. */
  cut?: ErrorInfo;
}

/** How the drive ended. */
export type Ending =
  /** A check refused the call before it started; nothing was called. */
  | { kind: "refused"; before: Extract<Before, { kind: "refused" }>; deviation: Deviation; verdict?: Verdict }
  /** The committed operation's output is this call's; nothing was called. */
  | { kind: "reused"; before: Extract<Before, { kind: "reuse" }> }
  /** Judged a success; `broken`: it proved an assumption false (with its verdict, given a standing). */
  | { kind: "succeeded"; output: unknown; values: Record<string, unknown>; broken?: Deviation; verdict?: Verdict }
  /** Judged a deviation: `verdict` given a standing. */
  | { kind: "deviation"; deviation: Deviation; error: ErrorInfo; output?: unknown; verdict?: Verdict };

export interface DoneCommand {
  kind: "done";
  ending: Ending;
  /** The step's record at the end (a retry's `pending`/`failed` bookkeeping included). */
  run: StepRun;
  /** The call the drive ended on: the first, or the fallback once the ladder switched to it. */
  call: { tool: string; args: Record<string, unknown> };
  /** The last call performed, when the drive ended on one. */
  last?: Extract<Performed, { kind: "called" }>;
  /** Decisions the drive took, in order; `announced`: those the driver sent already. */
  decisions: Decision[];
  announced: Decision[];
  /** What this drive's attempts charged. */
  charged: number;
}

/**
 * What a person is asked about a call in doubt (`effect.in-doubt`), and what their answer acts on:
 * happened (the output under `key`), retry (one more call under it), or abort.
 */
export interface InDoubtAsk {
  stepId: string;
  /** The call in doubt: the step's tool or its fallback, with its arguments. */
  tool: string;
  args: Record<string, unknown>;
  key: string;
  /** The journal attempt of the intent asked about (another branch of the thread may have numbered it). */
  journalAttempt?: number;
  /** Why its outcome is unknown. */
  reason: string;
}

/**
 * A person is to be asked about a call in doubt; the drive ends with `done`. A drive cannot wait for a
 * person: each face raises the question where its engine can interrupt (the graph from the deviation,
 * through its classifier and human node; the middleware before the model's next call).
 */
export interface AskCommand {
  kind: "ask";
  question: InDoubtAsk;
  done: DoneCommand;
}

export type AttemptCommand =
  CallCommand | { kind: "sleep"; ms: number; announce: Decision[] } | ProbeCommand | AskCommand | DoneCommand;

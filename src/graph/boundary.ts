/**
 * What may enter a thread from outside a run: the keys `updateState` accepts, the input `invoke`
 * starts a run with, and whether the thread can run again at all. Every check here runs before
 * anything is written, so a rejected call leaves the thread exactly as it was
 * (docs/decisions/0017-run-boundary.md).
 */
import { isCommand } from "@langchain/langgraph";
import { PlanManagerError } from "../errors.js";
import { PlanDraftSchema } from "../plan/schema/plan.js";
import { FactKeySchema, LIMITS } from "../plan/schema/primitives.js";
import { factValue } from "../policy/ladder/answer-checks.js";
import { PlanManagerState } from "../runtime/state.js";

/** The state keys a caller may write with `updateState`; everything else belongs to the manager. */
export const WRITABLE_KEYS: readonly string[] = ["scopeChanges"];

const TERMINAL: ReadonlySet<string> = new Set(["completed", "partial", "failed", "aborted"]);

/** Updates the manager's own helpers write (an operator's stop and its reopening). */
const managerWrites = new WeakSet<object>();

/**
 * Marks `values` as written by the manager itself, so `updateState` takes keys it refuses from
 * outside. For the library's own helpers (worker/stop-run.ts); not exported from the package root.
 */
export function managerWrite<T extends object>(values: T): T {
  managerWrites.add(values);
  return values;
}

/**
 * Throws `invalid_update` for the first key of `values` a caller may not write; returns whether
 * the update comes from outside (false for the manager's own writes).
 */
export function checkOutsideUpdate(values: unknown): boolean {
  if (values === null || typeof values !== "object") return true;
  if (managerWrites.has(values)) return false;
  refuseOwnedKeys(Object.keys(values), "updateState");
  return true;
}

/**
 * A `Command` is a way in as much as `updateState` is: its `update` (an object, or `[key, value]`
 * pairs) may write only what `updateState` may, or a caller could write a trusted fact or reopen
 * a finished step by sending it as a run's input.
 */
export function checkCommandUpdate(input: unknown): void {
  if (input === null || input === undefined || !isCommand(input) || input.update == null) return;
  const update: unknown = input.update;
  const keys = Array.isArray(update)
    ? update.map((pair: unknown) => String(Array.isArray(pair) ? pair[0] : pair))
    : typeof update === "object" && update !== null
      ? Object.keys(update)
      : [String(update)];
  refuseOwnedKeys(keys, "Command.update");
}

function refuseOwnedKeys(keys: readonly string[], where: string): void {
  const key = keys.find((k) => !WRITABLE_KEYS.includes(k));
  if (key === undefined) return;
  const owner = OWNED.has(key) ? "the manager owns it" : "it is not a key of the plan manager's state";
  throw new PlanManagerError(
    "invalid_update",
    `${where}: "${key}" cannot be written from outside a run (${owner}); ` +
      `the keys you may write are: ${WRITABLE_KEYS.join(", ")}`,
    { path: key },
  );
}

/** Keys of the manager's state that are not writable, to tell "owned" from "unknown" in a message. */
const OWNED: ReadonlySet<string> = new Set(Object.keys(PlanManagerState.spec));

/**
 * Throws `invalid_input` when `input` cannot start a run: a goal that is no text, a context value
 * that is no fact. Returns the input to run with: context values normalised as a tool's output is
 * (a `Date` becomes its ISO string), so a resumed run reads what an uninterrupted one did.
 */
export function checkInput(input: unknown): unknown {
  if (input === null || input === undefined || isCommand(input)) return input;
  if (typeof input !== "object" || Array.isArray(input)) {
    throw inputError("input", `input must be an object like { goal, context? }, received ${typeof input}`);
  }
  const { goal, context } = input as { goal?: unknown; context?: unknown };
  if (typeof goal !== "string" || goal.trim() === "") {
    const received = typeof goal === "string" ? "a blank string" : goal === null ? "null" : typeof goal;
    throw inputError("goal", `goal must be a non-empty string, received ${received}`);
  }
  if (goal.length > LIMITS.maxGoalLength) {
    throw inputError(
      "goal",
      `goal is ${goal.length} characters, over the ${LIMITS.maxGoalLength}-character limit; ` +
        `pass long material in context, where a value may hold up to ${LIMITS.maxJsonBytes} bytes of JSON`,
    );
  }
  checkDraft((input as { draft?: unknown }).draft);
  if (context === undefined) return input;
  if (context === null || typeof context !== "object" || Array.isArray(context)) {
    throw inputError("context", "context must be an object mapping fact keys to JSON values");
  }
  const values: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(context)) {
    if (!FactKeySchema.safeParse(key).success) {
      throw inputError(`context.${key}`, `context key ${JSON.stringify(key)} is not a valid fact key`);
    }
    const json = factValue(value, `context.${key}`, "input");
    if (!json.ok) throw inputError(`context.${key}`, json.problem);
    values[key] = json.value;
  }
  return { ...input, context: values };
}

/**
 * A draft given in the input must have a draft's shape; the planner node checks it against the tools.
 * `at` names it in errors: the input's `draft`, or the argument it came in (the MCP tool's `plan`).
 */
export function checkDraft(draft: unknown, at = "draft"): void {
  if (draft === undefined) return;
  const parsed = PlanDraftSchema.safeParse(draft);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = [at, ...issue.path.map(String)].join(".");
    throw inputError(path, `${path}: ${issue.message}`);
  }
  // Arguments are free-form JSON: held to the fact limits here, before the input is checkpointed.
  parsed.data.steps.forEach((step, i) => {
    for (const [where, args] of [
      [`${at}.steps.${i}.args`, step.args],
      [`${at}.steps.${i}.fallback.args`, step.fallback?.args],
    ] as const) {
      if (args === undefined) continue;
      const json = factValue(args, where, "input");
      if (!json.ok) throw inputError(where, json.problem);
    }
  });
}

function inputError(path: string, problem: string): PlanManagerError {
  return new PlanManagerError("invalid_input", `input: ${problem}`, { path });
}

/** Whether a thread with this status has ended for good. */
export function isFinished(status: unknown): boolean {
  return typeof status === "string" && TERMINAL.has(status);
}

/**
 * Throws when `input` cannot run on a thread whose latest status is `status`. On a finished
 * thread: a new goal, or a `Command` on its latest checkpoint (it has no question to answer).
 * `invoke(null)` there passes: it returns the final state and writes nothing, so a process that
 * crashed after the last checkpoint can always ask; so does a run from an earlier checkpoint
 * (`fork`, time travel), which carries the effects committed since and so reuses them instead of
 * running them again (graph/committed-effects.ts). An answer (`Command({ resume })`) is refused on
 * any checkpoint of a finished thread: LangGraph resumes it at the end, where nothing takes it, so
 * it would be lost without a word. On a stopped thread, any run but a `Command` answering the
 * question it is `paused` at (docs/decisions/0017-run-boundary.md).
 */
export function checkCanRun(
  status: unknown,
  thread: string,
  input: unknown = null,
  fork = false,
  paused = false,
): void {
  if (typeof status !== "string") return;
  const command = input !== null && input !== undefined && isCommand(input);
  const answer = command && (input as { resume?: unknown }).resume !== undefined;
  const goal = input !== null && input !== undefined && !command;
  if (TERMINAL.has(status)) {
    if (answer) throw finished(thread, status, "it has no question to answer, so the answer was not taken");
    if (goal || (command && !fork)) throw finished(thread, status);
    return;
  }
  if (command && !fork && (status !== "stopped" || paused)) return;
  if (status === "stopped") {
    const lost = answer ? ", so the answer was not taken" : "";
    const then = answer ? ", then answer the question it asks again" : "";
    throw new PlanManagerError(
      "thread_stopped",
      `thread "${thread}" was stopped by an operator${lost}: carry on with resumeStopped(graph, config) ` +
        `or the CLI's resume command${then}`,
      { path: "status" },
    );
  }
}

/** True when a thread's latest snapshot is paused at a question (an interrupt is pending). */
export function hasPendingInterrupt(snapshot: { tasks: readonly { interrupts: readonly unknown[] }[] }): boolean {
  return snapshot.tasks.some((t) => t.interrupts.length > 0);
}

/**
 * `invoke(null)` resumes from the thread's last checkpoint: with none (a first run killed before its first
 * checkpoint, or a thread never started) there is nothing to resume, and LangGraph's own `EmptyInputError`
 * would not say what to do.
 */
export function nothingToResume(thread: string | undefined): PlanManagerError {
  const which = thread === undefined ? "the run has no thread_id or no checkpointer, so it" : `thread "${thread}"`;
  return new PlanManagerError(
    "thread_not_found",
    `${which} has no checkpoint, so there is nothing to resume (its first run ended before its first checkpoint, ` +
      "or it never started): start it with invoke({ goal, context? }, config)",
    { path: "input" },
  );
}

/** `thread_finished`, naming the status. */
export function finished(thread: string, status: string, why = "start a new run on a new thread_id"): PlanManagerError {
  return new PlanManagerError("thread_finished", `thread "${thread}" has finished (status: ${status}): ${why}`, {
    path: "status",
  });
}

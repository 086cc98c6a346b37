/**
 * The executor: at most one tool attempt per visit, so a checkpoint follows every attempt
 * (resume and exactly-once side effects rely on it). Success is the fast path (back to the
 * executor); anything else becomes a deviation for the classifier. The checks themselves are
 * pure functions in `policy/step-checks.ts`; this node reads state, calls them and the tool,
 * and writes the update.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { Runtime } from "../runtime/options.js";
import type { PlanManagerStateType, PlanManagerUpdate } from "../runtime/state.js";
import { factValues, makeFacts } from "../plan/facts.js";
import { operationKey } from "../plan/operation.js";
import { selectNext } from "../plan/ready.js";
import type { Plan, Step, StepRun } from "../plan/schema.js";
import { errorInfo, type Deviation } from "../policy/deviation.js";
import {
  checkBudget,
  checkCommittedEffect,
  checkInputs,
  checkPreconditions,
  judgeOutput,
  preview,
  type CheckFailure,
} from "../policy/step-checks.js";
import { callTool, StepTimeout } from "../runtime/call-tool.js";
import { activeAssumptionChecks, assumptionDeviation } from "../policy/assumptions.js";
import { humanStepPayload } from "../runtime/interrupts.js";
import { emit } from "../runtime/events.js";

/** What one executor visit works with. `changed` collects the step records it writes. */
interface Visit {
  rt: Runtime;
  state: PlanManagerStateType;
  config: LangGraphRunnableConfig;
  plan: Plan;
  trusted: Record<string, unknown>;
  changed: Record<string, StepRun>;
  now: () => string;
}

export function makeExecutor(rt: Runtime) {
  return async function executor(
    state: PlanManagerStateType,
    config: LangGraphRunnableConfig,
  ): Promise<PlanManagerUpdate> {
    const plan = state.plan;
    if (!plan) return { deviation: null };
    if (state.scopeChanges.length > 0) {
      const message = `scope change requested: ${state.scopeChanges.join("; ")}`;
      return { deviation: { kind: "scope_change", attempt: 0, message }, status: "running" };
    }
    const now = () => new Date(rt.clock.now()).toISOString();
    const v: Visit = { rt, state, config, plan, trusted: factValues(state.facts), changed: {}, now };
    const steps: Record<string, StepRun> = { ...state.steps };
    // Skips (a false `when`, a skipped dependency) cost nothing; take them all in this visit.
    for (;;) {
      const selection = selectNext(plan, steps, v.trusted);
      if (selection.kind === "skip") {
        const { step, reason, note } = selection;
        const run: StepRun = { ...(steps[step.id] ?? { attempts: 0 }), status: "skipped", skipReason: reason };
        steps[step.id] = v.changed[step.id] = run;
        emit(config, {
          type: "step_finished",
          stepId: step.id,
          goal: step.goal,
          status: "skipped",
          attempt: run.attempts,
          note,
        });
        continue;
      }
      if (selection.kind === "done") return { steps: v.changed, ...settle(state) };
      if (selection.kind === "blocked") {
        const message = `no step can run: waiting on ${selection.waiting.join(", ")}`;
        return {
          steps: v.changed,
          deviation: null,
          status: "failed",
          outcome: { summary: "", failureReason: "blocked", message, recoverable: false },
        };
      }
      return selection.step.human ? humanStep(v, selection.step) : runStep(v, selection.step);
    }
  };
}

/** Clears a handled deviation and marks the run as running, writing only what differs. */
function settle(state: PlanManagerStateType): PlanManagerUpdate {
  return {
    ...(state.deviation !== null ? { deviation: null } : {}),
    ...(state.status !== "running" ? { status: "running" as const } : {}),
  };
}

/** A human step: the human node raises the interrupt (its own writes are discarded while it waits). */
function humanStep(v: Visit, step: Step): PlanManagerUpdate {
  const previous = v.state.steps[step.id] ?? { status: "pending", attempts: 0 };
  const timeoutMs = step.human!.timeoutMs;
  v.changed[step.id] = { ...previous, status: "running", startedAt: previous.startedAt ?? v.now() };
  const canReplan = typeof v.rt.planner.replan === "function";
  const deadline = timeoutMs ? v.rt.clock.now() + timeoutMs : undefined;
  const pendingHuman = humanStepPayload(
    v.state.goal,
    v.plan.version,
    step,
    pick(v.trusted, step.inputs ?? []),
    canReplan,
    deadline,
  );
  return { steps: v.changed, deviation: null, status: "awaiting_human", pendingHuman };
}

async function runStep(v: Visit, step: Step): Promise<PlanManagerUpdate> {
  const { rt, state, config } = v;
  const previous: StepRun = state.steps[step.id] ?? { status: "pending", attempts: 0 };
  const notRun = { ...previous, status: "failed" as const };
  const pre =
    checkInputs(step, state.facts, v.trusted) ??
    checkPreconditions(step, v.trusted) ??
    checkBudget(step, state.budget.spent, rt.policy.budget.maxCost);
  if (pre) return fail(v, step, pre, notRun);

  const useFallback = previous.usedFallback === true && step.fallback !== undefined;
  const toolName = useFallback ? step.fallback!.tool : step.tool!;
  const args = { ...(useFallback ? step.fallback!.args : step.args), ...pick(v.trusted, step.inputs ?? []) };
  const threadId = String(config.configurable?.thread_id ?? "no-thread");
  const key =
    (step.sideEffects?.length ?? 0) > 0 && step.idempotent === false
      ? operationKey(threadId, step.id, toolName, args)
      : undefined;
  const conflict = checkCommittedEffect(step, key, previous, state.sideEffects, `${toolName} ${preview(args)}`);
  if (conflict) return fail(v, step, conflict, notRun);

  if (previous.nextDelayMs) await rt.clock.sleep(previous.nextDelayMs, config.signal);
  const attempt = previous.attempts + 1;
  const cost = step.cost ?? 0;
  const { nextDelayMs: _delay, error: _error, approvedKey: _approved, ...rest } = previous;
  const running: StepRun = {
    ...rest,
    status: "running",
    attempts: attempt,
    startedAt: v.now(),
    ...(cost > 0 ? { cost: (previous.cost ?? 0) + cost } : {}),
  };
  const charged: PlanManagerUpdate = cost > 0 ? { budget: { ...state.budget, spent: state.budget.spent + cost } } : {};
  emit(config, { type: "step_started", stepId: step.id, goal: step.goal, attempt, tool: toolName });

  const tool = rt.tools.get(toolName);
  if (!tool) {
    // Validation makes this unreachable for plans it accepted; kept as a hard stop at the registry boundary.
    const message = `tool "${toolName}" is not in the registry`;
    const error = { name: "PermanentError", message };
    return fail(
      v,
      step,
      { deviation: { kind: "error", message, error }, error },
      { ...running, endedAt: v.now() },
      charged,
    );
  }
  let output: unknown;
  try {
    const configurable = {
      stepId: step.id,
      planVersion: v.plan.version,
      attempt,
      ...(key ? { idempotencyKey: key } : {}),
    };
    output = await callTool(
      { tool, args, timeoutMs: step.timeoutMs ?? rt.policy.defaultTimeoutMs, configurable },
      config,
    );
  } catch (thrown) {
    const error = errorInfo(thrown);
    const kind = thrown instanceof StepTimeout ? "timeout" : "error";
    return fail(
      v,
      step,
      { deviation: { kind, message: `${step.id}: ${error.name}: ${error.message}`, error }, error },
      { ...running, endedAt: v.now() },
      charged,
    );
  }
  const judged = judgeOutput(step, output, v.trusted);
  const ended: StepRun = { ...running, endedAt: v.now() };
  if (!judged.ok)
    return fail(v, step, judged, judged.output === undefined ? ended : { ...ended, output: judged.output }, charged);
  return succeed(v, step, { ...ended, status: "succeeded", output: judged.output }, judged.values, key, charged);
}

/** Every failed or refused attempt ends here: one record, one `step_finished` event, one deviation. */
function fail(
  v: Visit,
  step: Step,
  failure: CheckFailure,
  run: StepRun,
  extra: PlanManagerUpdate = {},
): PlanManagerUpdate {
  const record: StepRun = { ...run, status: "failed", error: failure.error };
  v.changed[step.id] = record;
  emit(v.config, {
    type: "step_finished",
    stepId: step.id,
    goal: step.goal,
    status: "failed",
    attempt: record.attempts,
    note: failure.error.message,
  });
  const deviation: Deviation = { ...failure.deviation, stepId: step.id, attempt: record.attempts };
  return { ...extra, steps: v.changed, deviation, status: "running" };
}

function succeed(
  v: Visit,
  step: Step,
  run: StepRun,
  values: Record<string, unknown>,
  key: string | undefined,
  extra: PlanManagerUpdate,
): PlanManagerUpdate {
  const { state, plan } = v;
  v.changed[step.id] = run;
  const provenance = {
    producedBy: step.id,
    planVersion: plan.version,
    assumptions: step.assumptions ?? [],
    derivedFrom: step.inputs ?? [],
  };
  const facts = makeFacts(values, provenance);
  emit(v.config, {
    type: "step_finished",
    stepId: step.id,
    goal: step.goal,
    status: "succeeded",
    attempt: run.attempts,
  });
  // Write only the channels that changed: every written channel costs work at each superstep.
  const update: PlanManagerUpdate = {
    ...extra,
    steps: v.changed,
    guards: { ...state.guards, successes: state.guards.successes + 1 },
    ...settle(state),
  };
  if (Object.keys(facts).length > 0) update.facts = facts;
  // Each committed key is listed once: re-running an unchanged operation commits nothing new.
  if (key && !state.sideEffects.some((e) => e.idempotencyKey === key))
    update.sideEffects = [{ stepId: step.id, idempotencyKey: key, at: run.endedAt! }];

  // New evidence: re-check the assumptions that steps not yet run still rest on.
  const broken = activeAssumptionChecks(plan, { ...state.steps, ...v.changed }, state.guards.falsified, {
    ...v.trusted,
    ...values,
  });
  const deviation = assumptionDeviation(broken, step.id, run.attempts);
  if (deviation) update.deviation = deviation;
  return update;
}

function pick(values: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (Object.hasOwn(values, key)) out[key] = values[key];
  return out;
}

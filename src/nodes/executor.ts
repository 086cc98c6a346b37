/**
 * The executor: at most one tool attempt per visit, so a checkpoint follows every attempt
 * (resume and exactly-once side effects rely on it). Success is the fast path (back to the
 * executor); anything else becomes a deviation for the classifier.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import { compileExpression, evaluate } from "../expr/cel.js";
import type { Runtime } from "../graph/options.js";
import type { PlanManagerStateType, PlanManagerUpdate } from "../graph/state.js";
import { factValues, makeFacts, producedValues } from "../plan/facts.js";
import { selectNext } from "../plan/ready.js";
import { LIMITS, type Step, type StepRun } from "../plan/schema.js";
import { errorInfo, type Deviation } from "../policy/deviation.js";
import { jsonDepth, jsonSize } from "../plan/validate.js";
import { emit } from "./events.js";
import { activeAssumptionChecks } from "./assumptions.js";
import { operationKey } from "../plan/operation.js";
import { offered } from "./escalation.js";

export const HUMAN_STEP_OPTIONS = ["complete", "skip", "change_scope", "abort"] as const;

class StepTimeout extends Error {
  constructor(ms: number) {
    super(`step timed out after ${ms} ms`);
    this.name = "StepTimeout";
  }
}

export function makeExecutor(rt: Runtime) {
  return async function executor(state: PlanManagerStateType, config: LangGraphRunnableConfig): Promise<PlanManagerUpdate> {
    const plan = state.plan;
    if (!plan) return { deviation: null };
    const now = () => new Date(rt.clock.now()).toISOString();

    if (state.scopeChanges.length > 0) {
      const deviation: Deviation = { kind: "scope_change", attempt: 0, message: `scope change requested: ${state.scopeChanges.join("; ")}` };
      return { deviation, status: "running" };
    }

    /** Clears a handled deviation and marks the run as running, writing only what differs. */
    const settle = (): PlanManagerUpdate => ({
      ...(state.deviation !== null ? { deviation: null } : {}),
      ...(state.status !== "running" ? { status: "running" as const } : {}),
    });
    const steps: Record<string, StepRun> = { ...state.steps };
    const changed: Record<string, StepRun> = {};
    const trusted = factValues(state.facts);

    // Skips (a false `when`, a skipped dependency) cost nothing; take them all in this visit.
    for (;;) {
      const selection = selectNext(plan, steps, trusted);
      if (selection.kind === "skip") {
        const run: StepRun = { ...(steps[selection.step.id] ?? { attempts: 0 }), status: "skipped", skipReason: selection.reason };
        steps[selection.step.id] = changed[selection.step.id] = run;
        emit(config, { type: "step_finished", stepId: selection.step.id, goal: selection.step.goal, status: "skipped", attempt: run.attempts, note: selection.note });
        continue;
      }
      if (selection.kind === "done") return { steps: changed, ...settle() };
      if (selection.kind === "blocked") {
        return {
          steps: changed,
          deviation: null,
          status: "failed",
          outcome: { summary: "", failureReason: "blocked", message: `no step can run: waiting on ${selection.waiting.join(", ")}`, recoverable: false },
        };
      }
      return runStep(selection.step);
    }

    async function runStep(step: Step): Promise<PlanManagerUpdate> {
      const previous: StepRun = steps[step.id] ?? { status: "pending", attempts: 0 };
      const attempt = previous.attempts + 1;

      if (step.human) {
        const payload = {
          kind: "human_step" as const,
          reason: step.human.prompt,
          stepId: step.id,
          planVersion: plan!.version,
          options: offered(HUMAN_STEP_OPTIONS, typeof rt.planner.replan === "function"),
          context: { goal: state.goal, step: { id: step.id, goal: step.goal }, facts: pick(trusted, step.inputs ?? []) },
          ...(step.human.timeoutMs ? { deadline: rt.clock.now() + step.human.timeoutMs } : {}),
        };
        changed[step.id] = { ...previous, status: "running", startedAt: previous.startedAt ?? now() };
        return { steps: changed, deviation: null, status: "awaiting_human", pendingHuman: payload };
      }

      const deviate = (deviation: Omit<Deviation, "stepId" | "attempt">, run: StepRun, extra: PlanManagerUpdate = {}): PlanManagerUpdate => {
        changed[step.id] = run;
        return { ...extra, steps: changed, deviation: { ...deviation, stepId: step.id, attempt: run.attempts }, status: "running" };
      };

      // Inputs and preconditions read trusted facts only; a missing or untrusted fact is a failed precondition.
      const missingInputs = (step.inputs ?? []).filter((key) => !Object.hasOwn(trusted, key));
      if (missingInputs.length > 0) {
        const labels = missingInputs.map((k) => (state.facts[k] ? `${k} (${state.facts[k].label})` : `${k} (missing)`));
        return deviate({ kind: "precondition", message: `input fact${labels.length > 1 ? "s" : ""} not trusted: ${labels.join(", ")}`, missing: missingInputs }, { ...previous, status: "failed", error: { name: "PreconditionFailed", message: `inputs not trusted: ${labels.join(", ")}` } });
      }
      for (const expression of step.preconditions ?? []) {
        const result = evaluate(expression, "precondition", trusted);
        if (!result.ok || result.value !== true) {
          const why = result.ok ? "is false" : result.missing ? `is false (${result.message})` : `could not be evaluated (${result.message})`;
          const message = `precondition ${JSON.stringify(expression)} ${why}`;
          const read = compileExpression(expression, "precondition");
          return deviate({ kind: "precondition", message, expression, facts: read.ok ? [...read.expression.facts] : [], ...(result.ok || !result.missing ? {} : { missing: result.missing }) }, { ...previous, status: "failed", error: { name: "PreconditionFailed", message } });
        }
      }

      const cost = step.cost ?? 0;
      const maxCost = rt.policy.budget.maxCost;
      if (maxCost !== undefined && state.budget.spent + cost > maxCost) {
        const message = `step "${step.id}" costs ${cost}; ${round(state.budget.spent)} of ${maxCost} is spent, so it would exceed budget.maxCost`;
        return deviate({ kind: "budget", message }, { ...previous, status: "failed", error: { name: "BudgetExhausted", message } });
      }

      const useFallback = previous.usedFallback === true && step.fallback !== undefined;
      const toolName = useFallback ? step.fallback!.tool : step.tool!;
      const tool = rt.tools.get(toolName);
      const args = { ...(useFallback ? step.fallback!.args : step.args), ...pick(trusted, step.inputs ?? []) };
      const threadId = String(config.configurable?.thread_id ?? "no-thread");
      const hasEffect = (step.sideEffects?.length ?? 0) > 0 && step.idempotent === false;
      const key = hasEffect ? operationKey(threadId, step.id, toolName, args) : undefined;

      // A step that already committed one operation must not quietly commit a different one
      // (backtracking, a replan that changed its arguments): a person decides.
      const committed = key ? state.sideEffects.findLast((e) => e.stepId === step.id) : undefined;
      if (key && committed && committed.idempotencyKey !== key && previous.approvedKey !== key) {
        const message = `step "${step.id}" already committed its side effect under key ${committed.idempotencyKey}; ` +
          `running it again with a changed operation (${toolName} ${preview(args)}) would commit a second one under ${key}`;
        return deviate(
          { kind: "side_effect_changed", message, committedKey: committed.idempotencyKey, proposedKey: key },
          { ...previous, status: "failed", error: { name: "CommittedSideEffect", message } },
        );
      }

      if (previous.nextDelayMs) await rt.clock.sleep(previous.nextDelayMs, config.signal);
      const startedAt = now();
      const running: StepRun = { ...previous, status: "running", attempts: attempt, startedAt };
      if (cost > 0) running.cost = (previous.cost ?? 0) + cost;
      delete running.nextDelayMs;
      delete running.error;
      delete running.approvedKey;
      const budget = { ...state.budget, spent: state.budget.spent + cost };
      emit(config, { type: "step_started", stepId: step.id, goal: step.goal, attempt, tool: toolName });

      if (!tool) {
        // Validation makes this unreachable for plans it accepted; kept as a hard stop for the registry boundary.
        const message = `tool "${toolName}" is not in the registry`;
        return deviate({ kind: "error", message, error: { name: "PermanentError", message } }, { ...running, status: "failed", endedAt: now(), error: { name: "PermanentError", message } }, { budget });
      }

      let output: unknown;
      try {
        output = await invokeWithTimeout(tool, args, config, step.timeoutMs ?? rt.policy.defaultTimeoutMs, key, step.id, plan!.version, attempt);
      } catch (error) {
        const timedOut = error instanceof StepTimeout;
        const info = errorInfo(error);
        const failed: StepRun = { ...running, status: "failed", endedAt: now(), error: info };
        emit(config, { type: "step_finished", stepId: step.id, goal: step.goal, status: "failed", attempt, note: info.message });
        return deviate({ kind: timedOut ? "timeout" : "error", message: `${step.id}: ${info.name}: ${info.message}`, error: info }, failed, { budget });
      }

      const endedAt = now();
      const size = jsonSize(output);
      if (size <= LIMITS.maxJsonBytes && jsonDepth(output) > LIMITS.maxJsonDepth) {
        const message = `output is nested deeper than ${LIMITS.maxJsonDepth} levels`;
        return deviate({ kind: "signal_unmet", message: `${step.id}: ${message}` }, { ...running, status: "failed", endedAt, error: { name: "OutputTooLarge", message } }, { budget });
      }
      if (size > LIMITS.maxJsonBytes) {
        const message = `output is ${size} bytes of JSON, over the ${LIMITS.maxJsonBytes}-byte fact limit`;
        return deviate({ kind: "signal_unmet", message: `${step.id}: ${message}` }, { ...running, status: "failed", endedAt, error: { name: "OutputTooLarge", message } }, { budget });
      }
      if (step.successSignal) {
        const signal = evaluate(step.successSignal, "successSignal", trusted, output);
        if (!signal.ok || signal.value !== true) {
          const why = signal.ok ? `is false` : `could not be evaluated (${signal.message})`;
          const message = `success signal ${JSON.stringify(step.successSignal)} ${why} for output ${preview(output)}`;
          emit(config, { type: "step_finished", stepId: step.id, goal: step.goal, status: "failed", attempt, note: message });
          return deviate({ kind: "signal_unmet", message: `${step.id}: ${message}`, expression: step.successSignal }, { ...running, status: "failed", endedAt, output, error: { name: "SuccessSignalUnmet", message } }, { budget });
        }
      }
      const { values, missing } = producedValues(step, output);
      if (missing.length > 0) {
        const message = `output ${preview(output)} lacks produced field${missing.length > 1 ? "s" : ""} ${missing.join(", ")}`;
        return deviate({ kind: "signal_unmet", message: `${step.id}: ${message}` }, { ...running, status: "failed", endedAt, output, error: { name: "SuccessSignalUnmet", message } }, { budget });
      }

      const succeeded: StepRun = { ...running, status: "succeeded", endedAt, output };
      changed[step.id] = succeeded;
      const facts = makeFacts(values, { producedBy: step.id, planVersion: plan!.version, assumptions: step.assumptions ?? [], derivedFrom: step.inputs ?? [] });
      const guards = { ...state.guards, successes: state.guards.successes + 1 };
      emit(config, { type: "step_finished", stepId: step.id, goal: step.goal, status: "succeeded", attempt });
      // Write only the channels that changed: every written channel costs work at each superstep.
      const update: PlanManagerUpdate = { steps: changed, guards, ...settle() };
      if (Object.keys(facts).length > 0) update.facts = facts;
      if (cost > 0) update.budget = budget;
      // Each committed key is listed once: re-running an unchanged operation commits nothing new.
      if (key && !state.sideEffects.some((e) => e.idempotencyKey === key)) {
        update.sideEffects = [{ stepId: step.id, idempotencyKey: key, at: endedAt }];
      }

      // New evidence: re-check the assumptions that steps not yet run still rest on.
      const nextTrusted = { ...trusted, ...values };
      const broken = activeAssumptionChecks(plan!, { ...steps, [step.id]: succeeded }, state.guards.falsified, nextTrusted);
      const [first] = broken;
      if (first) {
        const others = broken.length > 1 ? ` (also false: ${broken.slice(1).map((a) => a.id).join(", ")})` : "";
        update.deviation = {
          kind: "assumption_broken",
          stepId: step.id,
          attempt,
          assumptionId: first.id,
          ...(broken.length > 1 ? { assumptionIds: broken.map((a) => a.id) } : {}),
          message: `assumption "${first.id}" (${first.statement}) is false after step "${step.id}": check ${JSON.stringify(first.check)}${others}`,
        };
      }
      return update;
    }
  };

  async function invokeWithTimeout(
    tool: NonNullable<ReturnType<Runtime["tools"]["get"]>>,
    args: Record<string, unknown>,
    config: LangGraphRunnableConfig,
    timeoutMs: number,
    key: string | undefined,
    stepId: string,
    planVersion: number,
    attempt: number,
  ): Promise<unknown> {
    // The run's own signal (config.signal) is handled by LangGraph; ours aborts on timeout.
    const controller = new AbortController();
    const signal = controller.signal;
    const toolConfig = {
      callbacks: config.callbacks,
      signal,
      configurable: { ...config.configurable, stepId, planVersion, attempt, ...(key ? { idempotencyKey: key } : {}) },
    };
    const call = tool.invoke(args, toolConfig);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        controller.abort();
        reject(new StepTimeout(timeoutMs));
      }, timeoutMs);
    });
    try {
      return await Promise.race([call, timeout]);
    } finally {
      clearTimeout(timer);
      call.catch(() => undefined);
    }
  }
}

function pick(values: Record<string, unknown>, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) if (Object.hasOwn(values, key)) out[key] = values[key];
  return out;
}

function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

function round(n: number): number {
  return Math.round(n * 1e6) / 1e6;
}

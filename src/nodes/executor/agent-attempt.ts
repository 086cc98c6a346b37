/**
 * An agent step's attempt as a call the dispatcher runs like a tool call (docs/decisions/0021-agent-steps.md):
 * the model or agent the step names (a tiered chat-model step runs on `models[tier]`), the prompt
 * with the previous answer and why it failed, the validation tool, and one usage entry per model
 * call. Usage is written with the attempt's end record, in the same checkpoint: a crash before it
 * re-runs the attempt, a resume after it does not, so nothing is counted twice.
 */
import type { RunnableConfig } from "@langchain/core/runnables";
import { stepMessages, type Feedback } from "../../steps/prompt.js";
import { askAgent, askChatModel } from "../../steps/run-step.js";
import { StepUsageMeter } from "../../steps/usage-meter.js";
import { producedValues } from "../../plan/facts.js";
import type { StepRun } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import { currentTier, isAnswerFailure } from "../../policy/ladder/agent-routing.js";
import type { ValidationOutcome } from "../../policy/attempt/agent-validation.js";
import { errorInfo } from "../../policy/ladder/deviation.js";
import type { Invocable } from "../../runtime/call-tool.js";
import { TRACE_TAGS, withHandler } from "../../contracts/trace.js";
import type { AgentWork } from "../../runtime/dispatch.js";
import type { Visit } from "./visit.js";

/** What an agent attempt leaves for its end record, beside its answer. */

/**
 * The previous attempt's answer and why it was wrong, for the retry's prompt (`policy.agentFeedback`;
 * not after a 503).
 */
export function feedbackOf(v: Visit, previous: StepRun): Feedback | undefined {
  const { error } = previous;
  if (!v.rt.policy.agentFeedback || error === undefined || previous.usedFallback || !isAnswerFailure(error))
    return undefined;
  return { attempt: previous.attempts, output: previous.output ?? null, reason: error.message };
}

function modelName(model: unknown): string | undefined {
  const named = model as { model?: unknown; modelName?: unknown };
  if (typeof named.model === "string") return named.model;
  return typeof named.modelName === "string" ? named.modelName : undefined;
}

/** The call that does the step's attempt; its usage and validation land in `work`. */
export function agentCall(v: Visit, step: Step, previous: StepRun, attempt: number, work: AgentWork) {
  const { rt } = v;
  const handle = rt.agents.get(step.agent!)!;
  const tier = currentTier(step, previous);
  const model = handle.kind === "chat" ? ((tier && (rt.models[tier] ?? rt.models.default)) ?? handle.model) : undefined;
  const feedback = feedbackOf(v, previous);
  const messages = stepMessages({
    goal: v.state.goal,
    plan: v.plan,
    step,
    steps: v.steps,
    facts: v.state.facts,
    ...(feedback ? { feedback } : {}),
  });
  const threadId = String(v.config.configurable?.thread_id ?? "no-thread");
  const name = model ? modelName(model) : undefined;
  const invocable: Invocable = {
    invoke: async (_args, config) => {
      const meter = new StepUsageMeter({
        stepId: step.id,
        attempt,
        ...(tier ? { tier } : {}),
        ...(name ? { modelName: name } : {}),
        ...(rt.prices ? { prices: rt.prices } : {}),
        now: rt.clock.now,
      });
      const own = config.configurable ?? {};
      const configurable = {
        // A per-attempt thread: an agent compiled with its own checkpointer resumes the attempt it was in.
        thread_id: `${threadId}:${step.id}:${attempt}`,
        stepId: step.id,
        planVersion: own.planVersion,
        attempt,
        idempotencyKey: work.key,
      };
      const agentConfig: RunnableConfig = {
        // The run's callbacks (a tracer sees the model's calls, under the step's metadata) and the meter.
        callbacks: withHandler(config.callbacks, meter),
        ...(config.metadata ? { metadata: config.metadata } : {}),
        tags: [...(config.tags ?? []), TRACE_TAGS.noStream],
        configurable,
        ...(config.signal ? { signal: config.signal } : {}),
      };
      try {
        const answer = model
          ? await askChatModel(model, messages, step.produces ?? [], agentConfig)
          : await askAgent((handle as Extract<typeof handle, { kind: "graph" }>).graph, messages, agentConfig);
        if (step.validate) work.validation = await validateAnswer(v, step, answer, agentConfig);
        return answer;
      } finally {
        work.usage.push(...meter.entries);
      }
    },
  };
  return invocable;
}

/** Runs the step's validation tool on the produced values (nothing to validate when a value is missing). */
async function validateAnswer(
  v: Visit,
  step: Step,
  answer: unknown,
  config: RunnableConfig,
): Promise<ValidationOutcome | undefined> {
  const { values, missing } = producedValues(step, answer);
  if (missing.length > 0) return undefined;
  const tool = v.rt.tools.get(step.validate!.tool);
  if (!tool) return { ok: false, message: `tool "${step.validate!.tool}" is not in the registry` };
  try {
    const output: unknown = await tool.invoke({ ...step.validate!.args, ...values }, config);
    return { ok: true, output };
  } catch (thrown) {
    return { ok: false, message: errorInfo(thrown).message };
  }
}

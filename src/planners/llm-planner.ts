/**
 * `llmPlanner`: plans and scoped replans from any LangChain chat model with structured output.
 * Invalid drafts (schema or plan validator) go back to the model with the issues, up to
 * `maxValidationRetries`; then a typed error.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { Runnable } from "@langchain/core/runnables";
import { PlanManagerError } from "../errors.js";
import type { PlanDraft } from "../plan/schema.js";
import { callModel, type ModelCallSettings, type PriceTable } from "./model-call.js";
import { LlmPlanDraftSchema, toPlanDraft, type LlmPlanDraft } from "./llm-schema.js";
import type { PlanRequest, Planner, ReplanRequest } from "../contracts/planner.js";
import { PLANNER_SYSTEM_PROMPT, feedbackPrompt, planPrompt, replanPrompt } from "./prompts.js";

export interface LlmPlannerOptions {
  /** Any LangChain chat model with `withStructuredOutput`. Required. */
  model: BaseChatModel;
  /** Model for replans. Default: `model`. */
  replanModel?: BaseChatModel;
  /** Follow-up attempts after an invalid draft. Default 2. */
  maxValidationRetries?: number;
  /** Extra instructions appended to the system prompt. Default: none. */
  instructions?: string;
  /** USD per million input/output tokens, by model name. Default: none (cost 0). */
  prices?: PriceTable;
  /** Retries and time for model calls (rate limits, timeouts, 5xx). */
  calls?: ModelCallSettings;
}

function modelName(model: BaseChatModel): string | undefined {
  const named = model as unknown as { model?: unknown; modelName?: unknown };
  return typeof named.model === "string" ? named.model : typeof named.modelName === "string" ? named.modelName : undefined;
}

export function llmPlanner(options: LlmPlannerOptions): Planner {
  if (!options?.model || typeof options.model.withStructuredOutput !== "function") {
    throw new PlanManagerError("invalid_options", "llmPlanner: model must be a LangChain chat model with withStructuredOutput", { path: "model" });
  }
  const maxValidationRetries = options.maxValidationRetries ?? 2;
  if (!Number.isInteger(maxValidationRetries) || maxValidationRetries < 0) {
    throw new PlanManagerError("invalid_options", "llmPlanner: maxValidationRetries must be a whole number >= 0", { path: "maxValidationRetries" });
  }
  const system = options.instructions ? `${PLANNER_SYSTEM_PROMPT}\n\n${options.instructions}` : PLANNER_SYSTEM_PROMPT;
  const settings: ModelCallSettings = { ...options.calls, ...(options.prices ? { prices: options.prices } : {}) };

  async function draftWithFeedback(model: BaseChatModel, prompt: string, validate: (d: unknown) => { message: string }[], report: PlanRequest["reportUsage"]): Promise<PlanDraft> {
    const structured = model.withStructuredOutput(LlmPlanDraftSchema, { name: "plan_draft", strict: true }) as unknown as Runnable<BaseMessage[], unknown>;
    const messages: BaseMessage[] = [new SystemMessage(system), new HumanMessage(prompt)];
    let lastIssues: { message: string }[] = [];
    for (let round = 0; round <= maxValidationRetries; round++) {
      const answer = await callModel(structured, messages, modelName(model), settings, report);
      const parsed = LlmPlanDraftSchema.safeParse(answer);
      let issues: { message: string }[];
      let draft: PlanDraft | undefined;
      if (!parsed.success) {
        issues = parsed.error.issues.slice(0, 20).map((i) => ({ message: `${i.path.join(".") || "answer"}: ${i.message}` }));
      } else {
        const converted = toPlanDraft(parsed.data as LlmPlanDraft);
        draft = converted.draft;
        issues = [...converted.issues.map((i) => ({ message: `${i.path.join(".")}: ${i.message}` })), ...validate(draft)];
      }
      if (issues.length === 0 && draft) return draft;
      lastIssues = issues;
      messages.push(new AIMessage(JSON.stringify(answer ?? null)), new HumanMessage(feedbackPrompt(issues)));
    }
    throw new PlanManagerError("invalid_plan", `the model's plan was still invalid after ${maxValidationRetries + 1} attempts:\n- ${lastIssues.map((i) => i.message).join("\n- ")}`, { issues: lastIssues });
  }

  return {
    plan: (req: PlanRequest) => draftWithFeedback(options.model, planPrompt(req), req.validate, req.reportUsage),
    replan: (req: ReplanRequest) => draftWithFeedback(options.replanModel ?? options.model, replanPrompt(req), req.validate, req.reportUsage),
  };
}

/**
 * `llmClassifier`: consulted only for failures the rules call `unknown`. It may choose only
 * among the ladder's actions; its decision is logged with rule id `llm.classifier` and its reason.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import type { Runnable } from "@langchain/core/runnables";
import { z } from "zod";
import { PlanManagerError } from "../errors.js";
import type { FallbackClassifier } from "../contracts/classifier.js";
import { FailureClassSchema } from "../plan/schema.js";
import { callModel, type ModelCallSettings, type PriceTable, type UsageReport } from "./model-call.js";

export interface LlmClassifierOptions {
  model: BaseChatModel;
  prices?: PriceTable;
  calls?: ModelCallSettings;
}

const SYSTEM = `You classify a failed step of an agent's plan. Choose the failure class and the least disruptive action that can work: retry (the same call may succeed), fallback (the step has a fallback tool), replan_local / replan_global (the plan's approach is wrong), skip (only for optional steps), escalate (a person must decide), abort (continuing would cause harm). Explain briefly.`;

export function llmClassifier(options: LlmClassifierOptions): FallbackClassifier {
  if (!options?.model || typeof options.model.withStructuredOutput !== "function") {
    throw new PlanManagerError("invalid_options", "llmClassifier: model must be a LangChain chat model with withStructuredOutput", { path: "model" });
  }
  return {
    async classify({ deviation, step, allowed }) {
      const Schema = z.strictObject({
        failureClass: FailureClassSchema,
        action: z.enum(allowed as [string, ...string[]]),
        reason: z.string(),
      });
      const structured = options.model.withStructuredOutput(Schema, { name: "classification", strict: true }) as unknown as Runnable<BaseMessage[], unknown>;
      let usage: UsageReport | undefined;
      const answer = await callModel(
        structured,
        [new SystemMessage(SYSTEM), new HumanMessage(JSON.stringify({ failure: deviation, step: step ? { id: step.id, goal: step.goal, tool: step.tool, fallback: step.fallback?.tool ?? null, optional: step.optional ?? false } : null, allowedActions: allowed }))],
        undefined,
        { ...options.calls, ...(options.prices ? { prices: options.prices } : {}) },
        (u) => (usage = u),
      ).catch(() => undefined);
      const parsed = Schema.safeParse(answer);
      if (!parsed.success) return undefined;
      const verdict = { failureClass: parsed.data.failureClass, action: parsed.data.action as (typeof allowed)[number], reason: `LLM classifier: ${parsed.data.reason}` };
      return usage ? { verdict, usage } : { verdict };
    },
  };
}

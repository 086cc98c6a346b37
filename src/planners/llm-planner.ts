/**
 * `llmPlanner`: plans and scoped replans from any LangChain chat model with structured output.
 * Invalid drafts (schema or plan validator) go back to the model with the issues, up to
 * `maxValidationRetries`; then a typed error. Answers are read leniently (`LlmPlanAnswerSchema`):
 * a provider that does not enforce the strict schema still gets its plan run.
 */
import type { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, SystemMessage, type BaseMessage } from "@langchain/core/messages";
import { PlanManagerError } from "../errors.js";
import type { PlanDraft } from "../plan/schema/plan.js";
import {
  callModel,
  resolvePrices,
  resolveCallSettings,
  structuredOutput,
  type ModelCall,
  type ModelCallSettings,
  type PriceTable,
} from "./model-call.js";
import { LlmPlanAnswerSchema, LlmPlanDraftSchema, toPlanDraft } from "./llm-schema.js";
import type { ExtendRequest, PlanRequest, Planner, ReplanRequest } from "../contracts/planner.js";
import type { ModelTrace } from "../contracts/trace.js";
import { PLANNER_SYSTEM_PROMPT, extendPrompt, feedbackPrompt, planPrompt, replanPrompt } from "./prompts.js";
import { EXTERNAL_STEPS_RULE } from "./prompt-texts.js";

/** Options of `llmPlanner`. */
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
  /** Model calls: `{ maxRetries }` for errors that may clear (rate limits, timeouts, 5xx). Default 3. */
  calls?: ModelCallSettings;
  /**
   * Plan at most this many steps at a time (a rolling horizon): drafts say whether the goal needs
   * more, and the rest is planned by `extend` as the plan runs. Default: none (one whole plan).
   */
  horizon?: number;
  /**
   * The caller is an agent that does work itself (the planning service's client): the model may give
   * it a step (`external: { instructions }`; docs/decisions/0042-external-steps.md). Default false:
   * a draft with an external step goes back to the model like any invalid draft.
   */
  callerDoesWork?: boolean;
}

function modelName(model: BaseChatModel): string | undefined {
  const named = model as unknown as { model?: unknown; modelName?: unknown };
  if (typeof named.model === "string") return named.model;
  return typeof named.modelName === "string" ? named.modelName : undefined;
}

/**
 * A planner that drafts, replans and extends with a chat model's structured output; invalid drafts go back to
 * the model with their issues (docs/guides/plan-and-run.md).
 */
export function llmPlanner(options: LlmPlannerOptions): Planner {
  if (!options?.model || typeof options.model.withStructuredOutput !== "function") {
    const message = "llmPlanner: model must be a LangChain chat model with withStructuredOutput";
    throw new PlanManagerError("invalid_options", message, { path: "model" });
  }
  const maxValidationRetries = options.maxValidationRetries ?? 2;
  if (!Number.isInteger(maxValidationRetries) || maxValidationRetries < 0) {
    const message = "llmPlanner: maxValidationRetries must be a whole number >= 0";
    throw new PlanManagerError("invalid_options", message, { path: "maxValidationRetries" });
  }
  const horizon = checkHorizon(options.horizon);
  const callerDoesWork = checkCallerDoesWork(options.callerDoesWork);
  const base = callerDoesWork ? `${PLANNER_SYSTEM_PROMPT}\n\n${EXTERNAL_STEPS_RULE}` : PLANNER_SYSTEM_PROMPT;
  const system = options.instructions ? `${base}\n\n${options.instructions}` : base;
  const withinHorizon = (validate: (d: unknown) => { message: string }[]) =>
    callerCheck(callerDoesWork)(horizonCheck(horizon)(validate));
  const checked = callerCheck(callerDoesWork);
  const settings = resolveCallSettings("llmPlanner", options.calls);
  const prices = resolvePrices("llmPlanner", options.prices);

  const draftWithFeedback = (
    model: BaseChatModel,
    prompt: string,
    validate: (d: unknown) => { message: string }[],
    req: Pick<PlanRequest, "reportUsage" | "signal">,
    trace: ModelTrace | undefined,
  ) => {
    const name = modelName(model);
    const call: ModelCall = {
      ...(name ? { modelName: name } : {}),
      ...(prices ? { prices } : {}),
      settings,
      report: req.reportUsage,
      ...(req.signal ? { signal: req.signal } : {}),
      ...(trace ? { trace } : {}),
    };
    const messages: BaseMessage[] = [new SystemMessage(system), new HumanMessage(prompt)];
    return draftRounds(
      structuredOutput(model, LlmPlanDraftSchema, "plan_draft"),
      messages,
      call,
      validate,
      maxValidationRetries,
    );
  };

  return {
    plan: (req: PlanRequest, trace?: ModelTrace) =>
      draftWithFeedback(options.model, planPrompt(req, horizon), withinHorizon(req.validate), req, trace),
    replan: (req: ReplanRequest, trace?: ModelTrace) =>
      draftWithFeedback(options.replanModel ?? options.model, replanPrompt(req), checked(req.validate), req, trace),
    extend: (req: ExtendRequest, trace?: ModelTrace) =>
      draftWithFeedback(
        options.replanModel ?? options.model,
        extendPrompt(req, horizon),
        withinHorizon(req.validate),
        req,
        trace,
      ),
  };
}

function checkHorizon(horizon: number | undefined): number | undefined {
  if (horizon !== undefined && (!Number.isInteger(horizon) || horizon < 1)) {
    const message = "llmPlanner: horizon must be a whole number >= 1";
    throw new PlanManagerError("invalid_options", message, { path: "horizon" });
  }
  return horizon;
}

function checkCallerDoesWork(value: unknown): boolean {
  if (value !== undefined && typeof value !== "boolean") {
    const message = "llmPlanner: callerDoesWork must be true or false";
    throw new PlanManagerError("invalid_options", message, { path: "callerDoesWork" });
  }
  return value === true;
}

/** Without `callerDoesWork`, an external step goes back to the model like any invalid draft: nobody would do it. */
function callerCheck(callerDoesWork: boolean) {
  return (validate: (d: unknown) => { message: string }[]) =>
    (draft: unknown): { message: string }[] => {
      if (callerDoesWork) return validate(draft);
      const steps = (draft as PlanDraft).steps ?? [];
      const external = steps.filter((s) => s.external !== undefined).map((s) => `"${s.id}"`);
      if (external.length === 0) return validate(draft);
      const message =
        `step ${external.join(", ")} is external, but no caller here does work itself: ` +
        "give each a catalogue tool (or a human task) and set external to null";
      return [{ message }, ...validate(draft)];
    };
}

/** A draft longer than the horizon goes back to the model like any invalid draft. */
function horizonCheck(horizon: number | undefined) {
  return (validate: (d: unknown) => { message: string }[]) =>
    (draft: unknown): { message: string }[] => {
      const steps = (draft as PlanDraft).steps ?? [];
      if (horizon === undefined || steps.length <= horizon) return validate(draft);
      const over = `the draft has ${steps.length} steps`;
      const message = `${over}; plan at most ${horizon} (the horizon) and set complete to false`;
      return [{ message }, ...validate(draft)];
    };
}

/** Asks, checks, and feeds the problems back, up to `maxValidationRetries` more times; then a typed error. */
async function draftRounds(
  structured: Parameters<typeof callModel>[0],
  messages: BaseMessage[],
  call: ModelCall,
  validate: (d: unknown) => { message: string }[],
  maxValidationRetries: number,
): Promise<PlanDraft> {
  let lastIssues: { message: string }[] = [];
  for (let round = 0; round <= maxValidationRetries; round++) {
    const result = await callModel(structured, messages, call);
    if (!result.ok && result.failure !== "unparseable") {
      throw new PlanManagerError("planner_failed", result.message, { cause: result.error });
    }
    // A reply that does not parse is a failed draft like one that does not validate: asked again.
    const { draft, issues } = result.ok
      ? readAnswer(result.value, validate)
      : { draft: undefined, issues: [{ message: unparsedMessage(result.message) }] };
    if (issues.length === 0 && draft) return draft;
    lastIssues = issues;
    const said = result.ok ? JSON.stringify(result.value ?? null) : (result.reply ?? "");
    messages.push(new AIMessage(said), new HumanMessage(feedbackPrompt(issues)));
  }
  const listed = lastIssues.map((i) => i.message).join("\n- ");
  const message = `the model's plan was still invalid after ${maxValidationRetries + 1} attempts:\n- ${listed}`;
  throw new PlanManagerError("invalid_plan", message, { issues: lastIssues });
}

/** The parse error without the error id that `callModel` appends (the id stays in the usage entry). */
function unparsedMessage(message: string): string {
  return message.replace(/ \[err_[0-9a-f]+\]$/, "");
}

function readAnswer(
  answer: unknown,
  validate: (d: unknown) => { message: string }[],
): { draft?: PlanDraft; issues: { message: string }[] } {
  const parsed = LlmPlanAnswerSchema.safeParse(answer);
  if (!parsed.success) {
    const first = parsed.error.issues.slice(0, 20);
    return { issues: first.map((i) => ({ message: `${i.path.join(".") || "answer"}: ${i.message}` })) };
  }
  const { draft, issues } = toPlanDraft(parsed.data);
  const conversion = issues.map((i) => ({ message: `${i.path.join(".")}: ${i.message}` }));
  return { draft, issues: [...conversion, ...validate(draft)] };
}

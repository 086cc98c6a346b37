/**
 * A plan's question as an MCP elicitation form, and the form's answer as `plan_answer`'s
 * (docs/decisions/0061-questions-elicited-from-the-client.md). The form is flat, as the protocol
 * asks: an `action` to pick from the question's options, plus the fields its answers need (a
 * reason, a constraint, a request, the values of the facts the step produces, or an output); the
 * question's facts are in the message. Pure: the answer is checked by `plan_answer`'s own checks.
 */
import type { InterruptPayload, ResumeAction } from "../plan/schema/interrupts.js";
import { questionText } from "./task-status.js";

/** One field of a form: text, or a choice of text. */
export type FormField =
  | { type: "string"; title: string; description?: string }
  | { type: "string"; title: string; description?: string; oneOf: { const: string; title: string }[] };

export interface ElicitForm {
  mode: "form";
  message: string;
  requestedSchema: { type: "object"; properties: Record<string, FormField>; required: string[] };
}

/** The content of an accepted form, as the protocol carries it. */
export type FormContent = Record<string, string | number | boolean | string[]>;

/** A message longer than this is cut (a client shows it to a person, not a log). */
export const MAX_MESSAGE_CHARS = 4_000;
/** One value shown in the message (an error, an output, a fact) is cut past this. */
const MAX_VALUE_CHARS = 600;

/** Fields an answer other than the step's values may need, by the actions that read them. */
const TEXT_FIELDS = {
  reason: { actions: ["abort", "reject"], title: "Reason", description: "Why (abort, reject); optional." },
  constraint: { actions: ["replan"], title: "Constraint", description: "What the new plan must respect (replan)." },
  request: { actions: ["change_scope"], title: "New request", description: "The changed goal (change_scope)." },
} as const satisfies Record<string, { actions: readonly ResumeAction[]; title: string; description: string }>;

const ACTION_TITLES: Readonly<Record<ResumeAction, string>> = {
  approve: "Approve",
  retry: "Retry",
  skip: "Skip the step",
  abort: "Abort the plan",
  replan: "Replan",
  provide: "Provide the step's facts",
  change_scope: "Change the goal",
  complete: "Done: give the step's output",
  reject: "Reject the proposal",
  happened: "It happened: give its output",
  submit: "Submit",
};

/** Actions whose answer carries values: `complete` and `happened` an output, `provide` facts. */
const VALUE_ACTIONS: ReadonlySet<ResumeAction> = new Set(["complete", "happened", "provide"]);

/** Whether a person is asked this question: every kind but an external step, which is the calling agent's. */
export function elicitable(question: InterruptPayload): boolean {
  return question.kind !== "external_step" && answerable(question).length > 0;
}

/** The question's options a form can answer (a submission is the calling agent's, through plan_submit). */
function answerable(question: InterruptPayload): ResumeAction[] {
  return question.options.filter((action) => action !== "submit");
}

/** The names of the fields holding the step's values: its fact keys, renamed where one is a field of the form. */
export function valueFields(produces: readonly string[]): Map<string, string> {
  const taken = new Set<string>(["action", "output", ...Object.keys(TEXT_FIELDS)]);
  return new Map(produces.map((key) => [taken.has(key) ? `fact.${key}` : key, key]));
}

/**
 * The form for `question`. `produces` are the fact keys of the step it is about (one field each,
 * for `complete`, `provide` and `happened`); without them, `output` takes the whole value.
 * `refused` says why the previous answer was refused, for the form asked once more.
 */
export function elicitForm(
  question: InterruptPayload,
  produces: readonly string[] | undefined,
  refused?: string,
): ElicitForm {
  const actions = answerable(question);
  const properties: Record<string, FormField> = {
    action: {
      type: "string",
      title: "Answer",
      oneOf: actions.map((action) => ({ const: action, title: ACTION_TITLES[action] })),
    },
  };
  for (const [name, field] of Object.entries(TEXT_FIELDS))
    if (field.actions.some((action) => actions.includes(action)))
      properties[name] = { type: "string", title: field.title, description: field.description };
  if (actions.some((action) => VALUE_ACTIONS.has(action))) Object.assign(properties, valueProperties(produces));
  return {
    mode: "form",
    message: clip(messageOf(question, refused), MAX_MESSAGE_CHARS),
    requestedSchema: { type: "object", properties, required: ["action"] },
  };
}

function valueProperties(produces: readonly string[] | undefined): Record<string, FormField> {
  const hint = "JSON, or plain text";
  if (!produces?.length)
    return { output: { type: "string", title: "Output", description: `The value (complete, happened): ${hint}.` } };
  const properties: Record<string, FormField> = {};
  for (const [name, key] of valueFields(produces))
    properties[name] = {
      type: "string",
      title: key,
      description: `Fact "${key}" (complete, provide, happened): ${hint}.`,
    };
  return properties;
}

/**
 * The answer an accepted form gives, as `plan_answer` takes it; what it lacks or gets wrong is for
 * `plan_answer`'s checks to say. A value field holds JSON, or text taken as it is; an empty one is left out.
 */
export function answerFrom(
  content: FormContent,
  produces: readonly string[] | undefined,
  undo = false,
): Record<string, unknown> {
  const action = String(content.action ?? "");
  const text = (name: string) => {
    const value = content[name];
    return value === undefined || value === "" ? undefined : String(value);
  };
  const answer: Record<string, unknown> = { action };
  for (const [name, field] of Object.entries(TEXT_FIELDS))
    if ((field.actions as readonly string[]).includes(action) && text(name) !== undefined) answer[name] = text(name);
  if (!VALUE_ACTIONS.has(action as ResumeAction)) return answer;
  // An undo's output is the undo tool's, not the step's facts.
  const values = undo || !produces?.length ? undefined : factsFrom(content, produces);
  if (action === "provide") answer.facts = values ?? jsonOrText(text("output")) ?? {};
  else answer.output = values ?? jsonOrText(text("output"));
  return answer;
}

function factsFrom(content: FormContent, produces: readonly string[]): Record<string, unknown> {
  const facts: Record<string, unknown> = {};
  for (const [name, key] of valueFields(produces)) {
    const value = content[name];
    if (value !== undefined && value !== "") facts[key] = typeof value === "string" ? jsonOrText(value) : value;
  }
  return facts;
}

function jsonOrText(value: string | undefined): unknown {
  if (value === undefined) return undefined;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/** Whether the question is about an undo that failed: `happened` then carries the undo tool's output. */
export function asksAboutUndo(question: InterruptPayload): boolean {
  return question.kind === "escalation" && question.context.compensation?.failed !== undefined;
}

/** The question in words, with the facts a person needs to answer it. */
function messageOf(question: InterruptPayload, refused: string | undefined): string {
  const lines = [questionText(question).replace(/ \(plan_answer\)$/, ""), ...factLines(question)];
  if (question.error) lines.push(`Last answer refused: ${question.error}`);
  if (refused) lines.push(`Your answer was refused: ${refused}. Answer once more, or later with plan_answer.`);
  return lines.join("\n");
}

function factLines(question: InterruptPayload): string[] {
  switch (question.kind) {
    case "plan_review":
      return [
        `Goal: ${question.context.goal}`,
        ...question.context.steps.map((s, i) => `${i + 1}. ${s.id}: ${s.goal}${s.tool ? ` (tool ${s.tool})` : ""}`),
        ...(question.context.rule ? [`Held by rule ${question.context.rule}`] : []),
        ...(question.context.findings ?? []).map((f) => `Finding: ${shown(f)}`),
      ];
    case "human_step":
      return [
        `Goal: ${question.context.goal}`,
        ...Object.entries(question.context.facts).map(([key, value]) => `Fact ${key}: ${shown(value)}`),
        ...(question.context.deadline ? [`Deadline: ${question.context.deadline}`] : []),
      ];
    case "escalation":
      return escalationLines(question.context);
    default:
      return [];
  }
}

function escalationLines(context: Extract<InterruptPayload, { kind: "escalation" }>["context"]): string[] {
  const { step, inDoubt, compensation } = context;
  const failed = compensation?.failed;
  return [
    `Goal: ${context.goal}`,
    `Rule: ${context.rule}${context.failureClass ? ` (${context.failureClass})` : ""}`,
    ...(step ? [`Step ${step.id}: ${step.goal}${step.tool ? ` (tool ${step.tool})` : ""}`] : []),
    ...(context.attempts !== undefined ? [`Attempts: ${context.attempts}`] : []),
    ...(context.error !== undefined ? [`Error: ${shown(context.error)}`] : []),
    ...(inDoubt ? [`Call in doubt: tool ${inDoubt.tool}, key ${inDoubt.key}`] : []),
    ...(failed
      ? [`Undo failed: step ${failed.stepId}, key ${failed.idempotencyKey}, error ${shown(failed.error ?? "unknown")}`]
      : []),
    ...(compensation?.missing ?? []).map((m) => `Not undone: step ${m.stepId}, key ${m.idempotencyKey}`),
    ...(context.tried ?? []).map((line) => `Tried: ${line}`),
  ];
}

function shown(value: unknown): string {
  return clip(typeof value === "string" ? value : (JSON.stringify(value) ?? String(value)), MAX_VALUE_CHARS);
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

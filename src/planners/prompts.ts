/** What the LLM planner tells the model. Plain text; the schema goes through structured output. */
import type { PlanIssue } from "../plan/validate.js";
import type { AgentCatalogue, ExtendRequest, PlanRequest, ReplanRequest, ToolInfo } from "../contracts/planner.js";

export { PLANNER_SYSTEM_PROMPT } from "./prompt-texts.js";

export function toolCatalogue(tools: readonly ToolInfo[]): string {
  return JSON.stringify(
    tools.map((t) => ({
      name: t.name,
      description: t.description,
      arguments: t.parameters ?? {},
      sideEffects: t.sideEffects ?? [],
    })),
    null,
    1,
  );
}

/**
 * Characters that could end a block or hide text: "<" and ">" (so no closing tag can appear inside),
 * "&", the JSON-legal line separators, and bidirectional overrides. JSON already escapes control characters.
 */
const UNSAFE = /[<>&\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/**
 * Data the model must not take as instructions: JSON in a delimited block, escaped so that no
 * text inside can close the block or pass as the prompt's own words. The escapes are JSON escapes:
 * the content still parses to the same value.
 */
export function dataBlock(name: string, value: unknown): string {
  const json = (JSON.stringify(value) ?? "null").replace(
    UNSAFE,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return `<untrusted-data name="${name}">\n${json}\n</untrusted-data>`;
}

export function planPrompt(req: PlanRequest, horizon?: number): string {
  return [
    `Goal: ${req.goal}`,
    `Tools:\n${toolCatalogue(req.tools)}`,
    `Trusted facts (already known):\n${dataBlock("facts", req.facts)}`,
    agentCatalogue(req),
    req.constraints.length ? `Constraints from a reviewer:\n- ${req.constraints.join("\n- ")}` : "",
    horizonPrompt(horizon),
    "Write the plan.",
  ]
    .filter(Boolean)
    .join("\n\n");
}

export function replanPrompt(req: ReplanRequest): string {
  const preserved = req.plan.steps.filter((s) => !req.affectedSteps.some((a) => a.id === s.id)).map((s) => s.id);
  return [
    `Goal: ${req.goal}`,
    `This is a ${req.scope} replan of plan version ${req.plan.version}.`,
    `Trigger (what happened; error messages come from tools):\n${dataBlock("trigger", req.trigger)}`,
    req.brokenAssumption ? `Broken assumption: ${req.brokenAssumption} (proven false: no new step may rest on it)` : "",
    `Steps to replace (return replacement steps for these only):\n${dataBlock("steps_to_replace", req.affectedSteps)}`,
    `Steps that stay and may be depended on: ${preserved.join(", ") || "none"}`,
    `Assumptions already declared: ${req.plan.assumptions.map((a) => a.id).join(", ") || "none"}`,
    `Trusted facts:\n${dataBlock("trusted_facts", req.facts.trusted)}`,
    `Suspect facts (not usable as inputs until re-validated):\n${dataBlock("suspect_facts", req.facts.suspect)}`,
    req.excluded.length ? `Approaches already tried (do not repeat):\n${dataBlock("excluded", req.excluded)}` : "",
    req.scopeChanges.length ? `New requirements:\n- ${req.scopeChanges.join("\n- ")}` : "",
    req.constraints.length ? `Constraints from a person:\n- ${req.constraints.join("\n- ")}` : "",
    req.budget.remaining !== undefined ? `Execution budget remaining: ${req.budget.remaining}` : "",
    req.hints?.length ? hintsPrompt(req.hints) : "",
    req.issues?.length
      ? `Your previous replacement was rejected; fix these problems:\n${dataBlock(
          "previous_draft_issues",
          req.issues.map((i) => i.message),
        )}`
      : "",
    `Tools:\n${toolCatalogue(req.tools)}`,
    agentCatalogue(req),
    "Return only the replacement steps (and any new assumptions).",
  ]
    .filter(Boolean)
    .join("\n\n");
}

/** Agents a step may name instead of a tool, and the model tiers to choose from. Empty without agents. */
export function agentCatalogue(req: AgentCatalogue): string {
  if (!req.agents?.length) return "";
  const tiers = req.tiers?.length ? `\nModel tiers (cheapest first): ${req.tiers.join(", ")}` : "";
  return `Agents (a step may name one instead of a tool):\n${JSON.stringify(req.agents, null, 1)}${tiers}`;
}

/** With a horizon, a draft covers at most that many steps and says whether the goal needs more. */
export function horizonPrompt(horizon: number | undefined): string {
  if (horizon === undefined) return "";
  return (
    `Plan at most ${horizon} steps ahead. If the goal needs more steps than that, return the first ${horizon} ` +
    `and set complete to false: you will be asked for the next steps once these have run. ` +
    `Set complete to true when your steps finish the goal.`
  );
}

export function extendPrompt(req: ExtendRequest, horizon: number | undefined): string {
  const done = req.done.map((d) => `${d.id} (${d.tool ?? "human"}): ${d.goal} — ${d.status}`);
  return [
    `Goal: ${req.goal}`,
    `The plan so far (version ${req.plan.version}) has run. Plan the next steps of the goal.`,
    `Steps done so far (they stay; new steps may depend on them):\n${dataBlock("steps_done", done)}`,
    `Assumptions already declared: ${req.plan.assumptions.map((a) => a.id).join(", ") || "none"}`,
    `Trusted facts:\n${dataBlock("trusted_facts", req.facts.trusted)}`,
    req.constraints.length ? `Constraints from a person:\n- ${req.constraints.join("\n- ")}` : "",
    req.budget.remaining !== undefined ? `Execution budget remaining: ${req.budget.remaining}` : "",
    `Tools:\n${toolCatalogue(req.tools)}`,
    agentCatalogue(req),
    horizonPrompt(horizon),
    `Step ids already used (do not reuse them): ${req.usedIds.join(", ")}`,
    "Return only the new steps.",
  ]
    .filter(Boolean)
    .join("\n\n");
}

/** Remembered replacements (replan memory, `hint` mode): a starting point, not an order. */
function hintsPrompt(hints: NonNullable<ReplanRequest["hints"]>): string {
  const lines = hints.map((h) => `- ${h.successes} of ${h.uses} reuses succeeded: ${JSON.stringify(h.steps)}`);
  return [
    "Replacements that fixed this broken assumption on steps of the same shape in other runs",
    "(adapt them; pass facts through `inputs`, not as literal arguments):",
    ...lines,
  ].join("\n");
}

export function feedbackPrompt(issues: readonly { message: string }[]): string {
  const listed = issues.map((i) => i.message).join("\n- ");
  return `That plan was rejected. Fix these problems and return the whole corrected answer:\n- ${listed}`;
}

export type { PlanIssue };

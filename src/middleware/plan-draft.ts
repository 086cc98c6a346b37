/**
 * A plan draft from the model: validated by the graph's validator against the agent's tools and
 * the assumptions already proven false, and enriched like the graph enriches one (a step whose
 * tool has side effects is marked so). Also the message the model reads once a version is recorded.
 */
import { factValues } from "../plan/facts.js";
import { selectReady } from "../plan/ready.js";
import type { Plan, PlanDraft } from "../plan/schema/plan.js";
import type { PlanIssue } from "../plan/issues.js";
import { formatIssues, validatePlan, verifyIssues } from "../plan/validate.js";
import { checkOperations } from "../plan/validate-fields.js";
import type { CompensationRecord } from "../plan/schema/run.js";
import type { AgentPlanValues } from "./agent-state.js";
import type { CallEnv, ToolReply } from "./settle.js";

export type Checked = { ok: true; draft: PlanDraft } | { ok: false; result: ToolReply };

export function validateDraft(env: CallEnv, args: unknown, tools: ReadonlySet<string>): Checked {
  const { state, options } = env;
  const drafted = draftTools(args);
  // Before the first model call of a resumed process the agent's tools are not known yet: trust the draft's.
  const known = tools.size > 0 ? tools : new Set(drafted);
  const external = (state.plan?.assumptions ?? []).map((a) => a.id).filter((a) => !state.planRun.falsified.includes(a));
  const ctx = {
    tools: known,
    policy: options.policy,
    falsified: state.planRun.falsified,
    externalAssumptions: external,
  };
  const checked = validatePlan(args, ctx);
  if (checked.ok) {
    const human = checked.draft.steps.find((s) => s.human);
    // Inside createAgent the agent is the caller: its own work is a step with one of its tools.
    const callers = checked.draft.steps.find((s) => s.external);
    const duplicate = duplicateOperation(checked.draft, options.sideEffectTools);
    if (duplicate) return { ok: false, result: { content: rejected(duplicate), status: "error", update: {} } };
    // A verify probe runs when a call's outcome is unknown: one with side effects would be a second
    // effect, so only read-only tools may probe (docs/decisions/0038-effect-journal.md).
    const probes = verifyIssues(checked.draft, { ...ctx, sideEffectTools: options.sideEffectTools });
    if (probes.length > 0)
      return { ok: false, result: { content: rejected(formatIssues(probes)), status: "error", update: {} } };
    const unsupported = unsupportedHere(checked.draft, options.sideEffectTools);
    if (!human && !callers && !unsupported) return checked;
    const message = human
      ? `step "${human.id}" is a human step; inside createAgent use humanInTheLoopMiddleware instead`
      : callers
        ? `step "${callers.id}" is external; inside createAgent you do the work yourself: give the step one of your tools`
        : unsupported!;
    return { ok: false, result: { content: rejected(message), status: "error", update: {} } };
  }
  return { ok: false, result: { content: rejected(formatIssues(checked.issues)), status: "error", update: {} } };
}

/**
 * Two side-effecting steps that make the same call are refused as the graph refuses them
 * (`duplicate_operation`): their keys would be equal, so the second would reuse the first's effect.
 * Only steps that carry their arguments are compared: a step without them gets its arguments from
 * the model's call, and two of those are two calls.
 */
function duplicateOperation(draft: PlanDraft, sideEffectTools: ReadonlySet<string>): string | undefined {
  const issues: PlanIssue[] = [];
  const steps = draft.steps.filter((s) => s.args !== undefined);
  checkOperations({ ...draft, steps }, { sideEffectTools }, (issue) => issues.push(issue) > 0);
  return issues.length > 0 ? formatIssues(issues) : undefined;
}

/**
 * An assumption's watcher runs before steps start, outside every step's key and journal: one of
 * `sideEffectTools` would be an unplanned effect, so only read-only tools may watch, as in the graph.
 */
function unsupportedHere(draft: PlanDraft, sideEffectTools: ReadonlySet<string>): string | undefined {
  const watched = (draft.assumptions ?? []).find((a) => a.watch !== undefined && sideEffectTools.has(a.watch.tool));
  if (watched)
    return (
      `assumption "${watched.id}" watch names tool "${watched.watch!.tool}", which declares side effects; ` +
      "a watcher must only read (give a read-only lookup tool)"
    );
  return undefined;
}

function rejected(issues: string): string {
  return `The plan was not recorded:\n${issues}\nFix it and call write_plan again.`;
}

function draftTools(args: unknown): string[] {
  const { steps, assumptions } = (args ?? {}) as { steps?: unknown; assumptions?: unknown };
  const named = (x: unknown) => (typeof x === "string" ? [x] : []);
  const stepTools = Array.isArray(steps)
    ? steps.flatMap((s: unknown) => {
        const step = s as { tool?: unknown; fallback?: { tool?: unknown } } | null;
        return [...named(step?.tool), ...named(step?.fallback?.tool)];
      })
    : [];
  // A watcher is one of the agent's tools too.
  const watchTools = Array.isArray(assumptions)
    ? assumptions.flatMap((a: unknown) => named((a as { watch?: { tool?: unknown } } | null)?.watch?.tool))
    : [];
  return [...stepTools, ...watchTools];
}

/**
 * `sideEffectTools` mapped onto the steps, as the graph maps a tool's metadata (plan/enrich.ts): a
 * step calling such a tool declares it and is not idempotent, whatever the model wrote, so the
 * policy's one effect key (policy/attempt/attempt.ts) and the review rules read the step alone.
 */
export function enrich(draft: PlanDraft, sideEffectTools: ReadonlySet<string>): PlanDraft {
  // That a tool honours keys is the developer's claim (`effects.honoursKeys`), never the model's:
  // believed, it would let a call in doubt go out again (docs/decisions/0043-effects-in-the-middleware.md).
  const steps = draft.steps.map(({ honoursIdempotencyKey: _claim, ...s }) => {
    // The step's fallback runs in its place: a side-effecting fallback makes the step side-effecting.
    const tools = [s.tool, s.fallback?.tool].filter((t): t is string => t !== undefined && sideEffectTools.has(t));
    if (tools.length === 0) return s;
    return { ...s, sideEffects: s.sideEffects?.length ? s.sideEffects : tools, idempotent: false };
  });
  return { ...draft, steps };
}

export function committedMessage(
  state: Pick<AgentPlanValues, "steps" | "facts"> & { plan: Plan },
  fresh: readonly string[],
  keptCommitted: readonly string[],
  compensations: readonly CompensationRecord[] = [],
): string {
  const { plan } = state;
  const readiness = selectReady(plan, state.steps, factValues(state.facts));
  const ready = readiness.kind === "ready" ? readiness.steps.map((s) => `${s.id} (${s.tool})`) : [];
  const lines = [`Plan version ${plan.version} recorded: ${plan.steps.length} steps.`];
  if (fresh.length > 0) lines.push(`New steps: ${fresh.join(", ")}.`);
  if (keptCommitted.length > 0)
    lines.push(
      `Kept as they were (their side effects are committed and never run twice): ${keptCommitted.join(", ")}.`,
    );
  const pending = compensations.filter((c) => c.status === "pending").map((c) => `${c.stepId} (${c.tool})`);
  if (pending.length > 0)
    lines.push(`Left the plan; their side effects are undone before your next turn: ${pending.join(", ")}.`);
  const undone = compensations.filter((c) => c.status === "done").map((c) => `${c.stepId} (${c.tool})`);
  if (undone.length > 0) lines.push(`Undone, their side effects compensated: ${undone.join(", ")}.`);
  const failed = compensations.filter((c) => c.status === "failed").map((c) => `${c.stepId} (${c.error?.message})`);
  if (failed.length > 0) lines.push(`Could not be undone, their side effects still stand: ${failed.join(", ")}.`);
  lines.push(ready.length > 0 ? `Ready now: ${ready.join(", ")}.` : "No step is ready.");
  return lines.join("\n");
}

/**
 * The plan validator. Plans come from LLMs, so nothing is trusted: schema, ids, dependencies,
 * cycles, tools against the registry, CEL expressions, retry settings. Issues are data
 * (a `code` union with a `path` and the step they concern); `formatIssues` renders them.
 */
import { compileExpression, type ExpressionKind } from "../expr/cel.js";
import { retryPolicyProblem } from "./retry.js";
import { MAX_ISSUES, type KeyLookup, type PlanIssue, type PlanValidation, type ValidationContext } from "./issues.js";
import { PlanDraftSchema, type PlanDraft } from "./schema/plan.js";
import { LIMITS } from "./schema/primitives.js";
import { type Step } from "./schema/step.js";
import { checkInputs, checkOperations, unknownFields } from "./validate-fields.js";
import { nearest } from "./nearest.js";

export type { PlanIssue, PlanIssueCode, PlanValidation, ValidationContext } from "./issues.js";

/** A context's list as a set, the set itself when it is one (an extension passes thousands of ids). */
const asSet = (list: readonly string[] | KeyLookup | undefined): KeyLookup =>
  list === undefined ? new Set() : "has" in list ? list : new Set(list);

/**
 * Checks a plan draft against the schema and the tools, agents and limits of `ctx`: every issue, or the
 * checked draft. Nothing runs before a plan passes.
 */
export function validatePlan(input: unknown, ctx: ValidationContext): PlanValidation {
  // zod strips unknown keys; a plan from an LLM with `tolo: "x"` must not lose its tool silently.
  const unknown = unknownFields(input);
  if (unknown.length > 0) return { ok: false, issues: unknown.slice(0, MAX_ISSUES) };
  const parsed = PlanDraftSchema.safeParse(input);
  if (!parsed.success) {
    const issues = parsed.error.issues.slice(0, MAX_ISSUES).map((issue): PlanIssue => {
      const stepId = stepIdAt(input, issue.path);
      return {
        code: issue.code === "too_big" ? "too_large" : "schema",
        path: issue.path.map((p) => (typeof p === "symbol" ? String(p) : p)),
        ...(stepId === undefined ? {} : { stepId }),
        message: issue.message,
      };
    });
    return { ok: false, issues };
  }
  const draft = parsed.data;
  const issues: PlanIssue[] = [];
  /** Records an issue; false once the list is full, so costly checks can stop. */
  const add = (issue: PlanIssue): boolean => {
    if (issues.length < MAX_ISSUES) issues.push(issue);
    return issues.length < MAX_ISSUES;
  };

  const assumptionIds = checkPlanLevel(draft, ctx, add);

  const ids = new Set<string>();
  // Sets, not lists: an extension of a long plan checks each new id against thousands
  // (docs/decisions/0030-long-runs-per-step-cost.md).
  const external = asSet(ctx.externalSteps);
  const retired = asSet(ctx.retiredSteps);
  draft.steps.forEach((step, i) => {
    if (ids.has(step.id) || external.has(step.id))
      add({
        code: "duplicate_id",
        path: ["steps", i, "id"],
        stepId: step.id,
        message: `step id "${step.id}" is used twice`,
      });
    else if (retired.has(step.id))
      add({
        code: "duplicate_id",
        path: ["steps", i, "id"],
        stepId: step.id,
        message: `step id "${step.id}" belonged to a step an earlier plan version removed; use a new id`,
      });
    ids.add(step.id);
  });
  const known = { has: (id: string) => ids.has(id) || external.has(id) };

  draft.steps.forEach((step, i) => validateStep(step, i, known, assumptionIds, ctx, add));
  checkInputs(draft, ctx, add);
  checkOperations(draft, ctx, add);
  for (const stepId of findCycle(draft.steps)) {
    const index = draft.steps.findIndex((s) => s.id === stepId);
    add({
      code: "cycle",
      path: ["steps", index, "dependsOn"],
      stepId,
      message: `step "${stepId}" is part of a dependency cycle`,
    });
  }
  return issues.length > 0 ? { ok: false, issues } : { ok: true, draft };
}

/** What concerns the whole draft: its horizon, and its assumptions (ids unique, checks compile). */
function checkPlanLevel(draft: PlanDraft, ctx: ValidationContext, add: (issue: PlanIssue) => boolean): Set<string> {
  if (draft.complete === false && ctx.canExtend === false) {
    const message =
      "the draft says it is not complete (complete: false), but the planner has no extend function to plan the rest";
    add({ code: "horizon_without_extend", path: ["complete"], message });
  }
  const assumptionIds = new Set(ctx.externalAssumptions ?? []);
  (draft.assumptions ?? []).forEach((a, i) => {
    if (assumptionIds.has(a.id) && !(ctx.externalAssumptions ?? []).includes(a.id)) {
      add({
        code: "duplicate_assumption",
        path: ["assumptions", i, "id"],
        message: `assumption id "${a.id}" is used twice`,
      });
    }
    assumptionIds.add(a.id);
    if (a.check) checkExpression(a.check, "check", ["assumptions", i, "check"], undefined, add);
    if (a.watch) checkWatch(a.id, a.watch, i, ctx, add);
  });
  return assumptionIds;
}

/**
 * An assumption's watcher is a registered tool without side effects, and its check compiles: it runs before steps
 * start, outside every step's key and journal, so a watcher that wrote would be an unplanned effect
 * (docs/decisions/0041-evidence-freshness-and-drift.md).
 */
function checkWatch(
  id: string,
  watch: NonNullable<PlanDraft["assumptions"]>[number]["watch"] & object,
  i: number,
  ctx: ValidationContext,
  add: (issue: PlanIssue) => boolean,
) {
  const path = ["assumptions", i, "watch", "tool"];
  if (!ctx.tools.has(watch.tool)) {
    const message = `assumption "${id}" watch names tool "${watch.tool}", which is not in the registry (${listTools(ctx.tools)})`;
    add({ code: "invalid_watch_tool", path, message });
  } else if (ctx.sideEffectTools?.has(watch.tool)) {
    const message =
      `assumption "${id}" watch names tool "${watch.tool}", which declares side effects; ` +
      "a watcher must only read (give a read-only lookup tool)";
    add({ code: "invalid_watch_tool", path, message });
  }
  checkExpression(watch.check, "watch", ["assumptions", i, "watch", "check"], undefined, add);
}

/** Where and what to report for one step. */
interface StepCheck {
  step: Step;
  at: (...rest: (string | number)[]) => (string | number)[];
  add: (issue: PlanIssue) => void;
}

function validateStep(
  step: Step,
  i: number,
  known: { has(id: string): boolean },
  assumptions: ReadonlySet<string>,
  ctx: ValidationContext,
  add: (issue: PlanIssue) => void,
) {
  const c: StepCheck = { step, at: (...rest) => ["steps", i, ...rest], add };
  if (step.agent !== undefined || step.validate !== undefined) checkAgent(c, ctx);
  else checkTools(c, ctx.tools);
  checkReferences(c, known, assumptions, ctx.falsified ?? []);
  checkCompensate(c, ctx.tools);
  const { at } = c;
  (step.preconditions ?? []).forEach((expr, j) =>
    checkExpression(expr, "precondition", at("preconditions", j), step.id, add),
  );
  if (step.successSignal) checkExpression(step.successSignal, "successSignal", at("successSignal"), step.id, add);
  if (step.when) checkExpression(step.when, "when", at("when"), step.id, add);
  const problem = retryPolicyProblem({ ...ctx.policy.defaultRetry, ...step.retry });
  if (problem)
    add({ code: "invalid_retry", path: at("retry"), stepId: step.id, message: `step "${step.id}" retry: ${problem}` });
  checkArgsSize(c);
  checkVerify(c, ctx);
  checkFreshFor(c);
}

/**
 * The verify probes of a validated draft, checked as `validatePlan` checks them: `planMiddleware`
 * checks side-effecting steps' operations its own way, so it asks for this check alone.
 */
export function verifyIssues(draft: PlanDraft, ctx: ValidationContext): PlanIssue[] {
  const issues: PlanIssue[] = [];
  draft.steps.forEach((step, i) =>
    checkVerify({ step, at: (...rest) => ["steps", i, ...rest], add: (issue) => issues.push(issue) }, ctx),
  );
  return issues;
}

/** `freshFor` bounds the step's inputs: a key that is not one of them bounds nothing, and says the plan is confused. */
function checkFreshFor({ step, at, add }: StepCheck) {
  for (const key of Object.keys(step.freshFor ?? {})) {
    if ((step.inputs ?? []).includes(key)) continue;
    const inputs = step.inputs?.length ? `its inputs: ${step.inputs.join(", ")}` : "it has no inputs";
    const message = `step "${step.id}" freshFor names "${key}", which is not one of its inputs (${inputs})`;
    add({ code: "invalid_freshness", path: at("freshFor", key), stepId: step.id, message });
  }
}

/**
 * A step's `verify` probe is a registered tool without side effects: it runs when a call's outcome is
 * unknown, so a probe that wrote would be a second effect (docs/decisions/0038-effect-journal.md).
 */
function checkVerify({ step, at, add }: StepCheck, ctx: ValidationContext) {
  const tool = step.verify?.tool;
  if (tool === undefined) return;
  const path = at("verify", "tool");
  if (!ctx.tools.has(tool)) {
    const message = `step "${step.id}" verify names tool "${tool}", which is not in the registry (${listTools(ctx.tools)})`;
    add({ code: "invalid_verify_tool", path, stepId: step.id, message });
  } else if (ctx.sideEffectTools?.has(tool)) {
    const message =
      `step "${step.id}" verify names tool "${tool}", which declares side effects; ` +
      "a verify probe must only read (give a read-only lookup tool)";
    add({ code: "invalid_verify_tool", path, stepId: step.id, message });
  }
}

/**
 * A step runs a registered tool, is answered by a person or is done by the calling agent (`external`),
 * one of them; a fallback is registered too (an external step's fallback is a tool the manager runs).
 */
function checkTools({ step, at, add }: StepCheck, tools: ReadonlySet<string>) {
  const stepId = step.id;
  if (step.human && step.tool) {
    const message = `step "${stepId}" is a human step and cannot also name tool "${step.tool}"`;
    add({ code: "human_step_with_tool", path: at("tool"), stepId, message });
  }
  if (step.external && (step.tool !== undefined || step.human)) {
    const other = step.tool !== undefined ? `tool "${step.tool}"` : "a human task";
    const message = `step "${stepId}" is done by the calling agent (external) and names ${other}: a step has one of tool, agent, human, external`;
    add({ code: "several_executors", path: at(step.tool !== undefined ? "tool" : "human"), stepId, message });
  }
  if (!step.human && !step.tool && !step.external)
    add({
      code: "missing_tool",
      path: at("tool"),
      stepId,
      message: `step "${stepId}" needs a tool (or a human task, or external instructions for the calling agent)`,
    });
  if (step.tool && !step.human && !step.external && !tools.has(step.tool)) {
    const message = `step "${stepId}" names tool "${step.tool}", which is not in the registry (${listTools(tools)})`;
    add({ code: "unknown_tool", path: at("tool"), stepId, message });
  }
  if (step.fallback && !tools.has(step.fallback.tool)) {
    const message =
      `step "${stepId}" falls back to tool "${step.fallback.tool}", which is not in the registry ` +
      `(${listTools(tools)})`;
    add({ code: "unknown_fallback_tool", path: at("fallback", "tool"), stepId, message });
  }
}

/** A step's undo runs a registered tool, like its fallback (docs/decisions/0039-compensation.md). */
function checkCompensate({ step, at, add }: StepCheck, tools: ReadonlySet<string>) {
  if (!step.compensate || tools.has(step.compensate.tool)) return;
  const message =
    `step "${step.id}" compensate names tool "${step.compensate.tool}", which is not in the registry ` +
    `(${listTools(tools)})`;
  add({ code: "unknown_compensate_tool", path: at("compensate", "tool"), stepId: step.id, message });
}

/** An agent step names a registered agent and nothing else to run; its validation and fallback tools are registered. */
function checkAgent({ step, at, add }: StepCheck, ctx: ValidationContext) {
  const stepId = step.id;
  const agents = [...(ctx.agents ?? [])];
  if (step.agent === undefined) {
    const message = `step "${stepId}" has a validation tool but no agent: validate checks an agent's answer`;
    add({ code: "missing_tool", path: at("agent"), stepId, message });
  } else if (step.tool !== undefined || step.human !== undefined || step.external !== undefined) {
    const other =
      step.tool !== undefined
        ? `tool "${step.tool}"`
        : step.human !== undefined
          ? "a human task"
          : "external instructions";
    const message = `step "${stepId}" names agent "${step.agent}" and ${other}: a step has one of tool, agent, human, external`;
    const field = step.tool !== undefined ? "tool" : step.human !== undefined ? "human" : "external";
    add({ code: "several_executors", path: at(field), stepId, message });
  } else if (!agents.includes(step.agent)) {
    const near = nearest(step.agent, agents);
    const hint = near ? `; did you mean "${near}"?` : "";
    const known = agents.length > 0 ? `agents: ${agents.join(", ")}` : "no agents are given to createPlanManager";
    const message = `step "${stepId}" names agent "${step.agent}", which is not registered (${known})${hint}`;
    add({ code: "unknown_agent", path: at("agent"), stepId, message });
  }
  for (const [field, tool] of [
    ["validate", step.validate?.tool],
    ["fallback", step.fallback?.tool],
  ] as const) {
    if (tool === undefined || ctx.tools.has(tool)) continue;
    const code = field === "fallback" ? "unknown_fallback_tool" : "unknown_tool";
    const known = listTools(ctx.tools);
    const message = `step "${stepId}" ${field} names tool "${tool}", which is not in the registry (${known})`;
    add({ code, path: at(field, "tool"), stepId, message });
  }
  if (step.validate?.successSignal)
    checkExpression(step.validate.successSignal, "successSignal", at("validate", "successSignal"), stepId, add);
}

/** Dependencies name other steps of the plan; assumptions are declared and not already proven false. */
function checkReferences(
  { step, at, add }: StepCheck,
  known: { has(id: string): boolean },
  assumptions: ReadonlySet<string>,
  falsified: readonly string[],
) {
  const stepId = step.id;
  (step.dependsOn ?? []).forEach((dep, j) => {
    const path = at("dependsOn", j);
    if (dep === stepId) add({ code: "self_dependency", path, stepId, message: `step "${stepId}" depends on itself` });
    else if (!known.has(dep)) {
      const message = `step "${stepId}" depends on "${dep}", which is not a step of the plan`;
      add({ code: "dangling_dependency", path, stepId, message });
    }
  });
  (step.assumptions ?? []).forEach((a, j) => {
    const path = at("assumptions", j);
    if (falsified.includes(a)) {
      const message = `step "${stepId}" rests on assumption "${a}", which was already proven false`;
      add({ code: "falsified_assumption", path, stepId, message });
    } else if (!assumptions.has(a)) {
      const message = `step "${stepId}" rests on assumption "${a}", which the plan does not declare`;
      add({ code: "unknown_assumption", path, stepId, message });
    }
  });
}

function checkArgsSize({ step, at, add }: StepCheck) {
  if (step.args === undefined) return;
  const stepId = step.id;
  if (jsonSize(step.args) > LIMITS.maxJsonBytes) {
    const message = `step "${stepId}" args exceed ${LIMITS.maxJsonBytes} bytes of JSON`;
    add({ code: "too_large", path: at("args"), stepId, message });
  } else if (jsonDepth(step.args) > LIMITS.maxJsonDepth) {
    const message = `step "${stepId}" args are nested deeper than ${LIMITS.maxJsonDepth} levels`;
    add({ code: "too_large", path: at("args"), stepId, message });
  }
}

function checkExpression(
  source: string,
  kind: ExpressionKind,
  path: (string | number)[],
  stepId: string | undefined,
  add: (issue: PlanIssue) => void,
) {
  const compiled = compileExpression(source, kind);
  if (!compiled.ok) {
    const where = stepId ? `step "${stepId}" ${path.slice(2).join(".")}` : path.join(".");
    const costly = compiled.code === "too_costly";
    add({
      code: costly ? "expression_too_costly" : "invalid_expression",
      path,
      ...(stepId === undefined ? {} : { stepId }),
      message: `${where}: CEL expression ${JSON.stringify(source.slice(0, 80))} ${costly ? "is too costly" : "does not compile"}: ${compiled.message}`,
    });
  }
}

/** Ids of steps on a dependency cycle (Kahn's algorithm: whatever cannot be ordered). */
export function findCycle(steps: readonly Step[]): string[] {
  const ids = new Set(steps.map((s) => s.id));
  const indegree = new Map<string, number>();
  const dependents = new Map<string, string[]>();
  for (const s of steps) {
    const deps = (s.dependsOn ?? []).filter((d) => ids.has(d) && d !== s.id);
    indegree.set(s.id, deps.length);
    for (const d of deps) dependents.set(d, [...(dependents.get(d) ?? []), s.id]);
  }
  const queue = [...indegree].filter(([, n]) => n === 0).map(([id]) => id);
  while (queue.length > 0) {
    const id = queue.pop()!;
    indegree.delete(id);
    for (const next of dependents.get(id) ?? []) {
      const n = (indegree.get(next) ?? 0) - 1;
      indegree.set(next, n);
      if (n === 0) queue.push(next);
    }
  }
  return [...indegree.keys()];
}

function stepIdAt(input: unknown, path: readonly PropertyKey[]): string | undefined {
  if (path[0] !== "steps" || typeof path[1] !== "number") return undefined;
  const steps = (input as { steps?: unknown } | null)?.steps;
  const step = Array.isArray(steps) ? (steps[path[1]] as { id?: unknown } | undefined) : undefined;
  return typeof step?.id === "string" ? step.id.slice(0, LIMITS.maxIdLength) : undefined;
}

function listTools(tools: ReadonlySet<string>): string {
  const names = [...tools].slice(0, 20);
  return names.length > 0 ? `registered: ${names.join(", ")}` : "no tools are registered";
}

/** Length of a value's JSON; unserialisable values (cycles, BigInt) count as infinitely large. */
export function jsonSize(value: unknown): number {
  try {
    return JSON.stringify(value)?.length ?? 0;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}

/** Nesting depth of a JSON value, counted without recursion so hostile depth cannot overflow the stack. */
export function jsonDepth(value: unknown): number {
  let max = 0;
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (d > max) max = d;
    if (d > LIMITS.maxJsonDepth) return d;
    if (v !== null && typeof v === "object") for (const child of Object.values(v)) stack.push([child, d + 1]);
  }
  return max;
}

/** Plan issues as lines for a model or a person. */
export function formatIssues(issues: readonly PlanIssue[]): string {
  return issues.map((i) => `- ${i.message}`).join("\n");
}

/**
 * The `write_plan` tool: the model's plan draft (`{ steps, assumptions? }`), validated by the
 * graph's plan validator. The first plan becomes version 1 (after a person's review with
 * `reviewPlan`); a later one is a revision that passes the replan guards — `maxReplans`, the
 * no-progress fingerprint, the capability guard — before it becomes the next version. A held
 * revision waits for a person here, before anything is written, so asking again on resume is safe.
 */
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import type { Plan, PlanDraft } from "../plan/schema/plan.js";
import type { CompensationRecord } from "../plan/schema/run.js";
import { compensationRecords, withoutCompensation } from "../policy/compensation/abandoned.js";
import { missingDecision } from "../policy/compensation/verdict.js";
import { abandonedByRevision } from "./compensate.js";
import { capabilityBaseline, capabilityGuard, reviewedEffects } from "../policy/capability/guard.js";
import type { Decision } from "../policy/ladder/decision.js";
import type { GuardHit } from "../policy/ladder/guards.js";
import { answerRule } from "../policy/ladder/person.js";
import { revisionCountGuard, revisionProgressGuard, untrustedFirstPlanGuard } from "../policy/replan/plan-writes.js";
import { decisionAt } from "./decisions.js";
import { committedMessage, enrich, validateDraft } from "./plan-draft.js";
import { overBudget } from "./plan-budget.js";
import { ask, reviewRequest } from "./person-review.js";
import { revise, type Revision } from "./revision.js";
import { standing, type CallEnv, type ToolReply } from "./settle.js";
import { callFindings } from "../policy/capability/taint.js";
import { untrustedText, vouchedText } from "./call-taint.js";
import type { QualityFinding } from "../plan/schema/quality.js";
import { gateVersion, qualityWrite, revisionGate, sentBack } from "./version-gate.js";

/** The name of the tool the model writes its plan with. */
export const WRITE_PLAN = "write_plan";

/** A tool named by a step for its verify probe or its undo: arguments, and facts read as arguments. */
const ToolCallArgs = z.object({
  tool: z.string(),
  args: z.record(z.string(), z.unknown()).optional(),
  inputs: z.array(z.string()).optional(),
});

const StepArgs = z.looseObject({
  id: z.string().describe('A unique step id, e.g. "fetch_rate"'),
  goal: z.string().describe("What the step achieves, in a few words"),
  tool: z.string().describe("The tool the step calls"),
  args: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("The tool's arguments for this step; the call runs with them (facts named in inputs are added)"),
  operation: z
    .string()
    .optional()
    .describe("A label naming the operation, when the same side-effecting call is meant more than once"),
  dependsOn: z.array(z.string()).optional().describe("Ids of the steps that must succeed first"),
  assumptions: z.array(z.string()).optional().describe("Ids of the assumptions the step rests on"),
  produces: z.array(z.string()).optional().describe("Fields of the tool's output to record as facts"),
  inputs: z.array(z.string()).optional().describe("Facts the step reads (added to its call's arguments)"),
  freshFor: z
    .record(z.string(), z.number().int())
    .optional()
    .describe("How old (ms) each input may be when the step starts; an older one is observed again first"),
  inputsFreshForMs: z.number().int().optional().describe("How old (ms) any input may be when the step starts"),
  successSignal: z.string().optional().describe('CEL over output and facts, e.g. "output.ok == true"'),
  fallback: z
    .object({ tool: z.string(), args: z.record(z.string(), z.unknown()).optional() })
    .optional()
    .describe("A tool to try when this step's tool fails for good"),
  verify: ToolCallArgs.optional().describe(
    "For a side-effecting step: a read-only lookup tool answering { happened, output? }, run when a call's outcome is unknown",
  ),
  compensate: ToolCallArgs.optional().describe(
    "For a side-effecting step: the tool that undoes it (cancel, refund), run if a revision drops the step after it committed; inputs are facts it reads",
  ),
});

const AssumptionArgs = z.object({
  id: z.string(),
  statement: z.string(),
  check: z.string().optional().describe("CEL over facts; false means the assumption is broken"),
  watch: z
    .object({
      tool: z.string(),
      args: z.record(z.string(), z.unknown()).optional(),
      check: z.string(),
      everyMs: z.number().int().optional(),
    })
    .optional()
    .describe(
      "A read-only tool called before each step resting on the assumption; check (CEL over output and facts) false means it drifted",
    ),
  estimate: z
    .object({
      low: z.number().optional(),
      high: z.number().optional(),
      unit: z.string().optional(),
      confidence: z.enum(["low", "medium", "high"]).optional(),
      evidence: z.array(z.string()).optional(),
    })
    .optional()
    .describe("For a numeric assumption: its range, how sure you are, and the facts it rests on"),
});

/** The tool the model calls; `planMiddleware` answers it (the function runs only without the middleware). */
export const writePlanTool = tool(
  async () => "write_plan is answered by planMiddleware; add planMiddleware to the agent's middleware",
  {
    name: WRITE_PLAN,
    description:
      "Write or revise the plan: the whole list of steps, each with the tool it calls, the steps it depends " +
      "on and the assumptions it rests on. Call it before other tools, and again when told a step failed or an " +
      "assumption is false. Completed steps are kept and never run twice.",
    schema: z.object({ steps: z.array(StepArgs).min(1), assumptions: z.array(AssumptionArgs).optional() }),
  },
);

export async function writePlan(env: CallEnv, args: unknown, tools: ReadonlySet<string>): Promise<ToolReply> {
  const checked = validateDraft(env, args, tools);
  if (!checked.ok) return checked.result;
  const draft = enrich(checked.draft, env.options.sideEffectTools);
  return env.state.plan ? revision(env, env.state.plan, draft, tools) : firstPlan(env, draft, tools);
}

async function firstPlan(env: CallEnv, draft: PlanDraft, tools: ReadonlySet<string>): Promise<ToolReply> {
  const dear = overBudget(env, { version: 1, steps: draft.steps, assumptions: draft.assumptions ?? [] }, {});
  if (dear) return dear;
  const decisions: Decision[] = [];
  // The model may have read tool output before its first plan: a side effect fed from it waits too.
  const hold = untrustedFirstPlan(env, draft);
  // The quality gate, before the first step (docs/decisions/0040-plan-quality-gate.md).
  const gated = gateVersion(env, { plan: { version: 1, steps: draft.steps, assumptions: draft.assumptions ?? [] } });
  if (env.options.reviewPlan || hold || gated.hold) {
    const place = { attempt: 0, planVersion: 0, at: env.at() };
    const held = [hold, gated.hold].filter((h): h is GuardHit => h !== undefined);
    for (const h of held) decisions.push(decisionAt({ rule: h.rule, reason: h.reason }, place));
    const title =
      held.length > 0
        ? `The plan needs a person: ${held.map((h) => h.reason).join("; ")}`
        : "Review the plan before any step runs";
    const answer = ask(review(env, draft, title, held[0], gated.findings));
    if (answer.type === "reject") {
      const reason = `a person rejected the plan${answer.message ? `: ${answer.message}` : ""}`;
      decisions.push(decisionAt({ rule: answerRule("reject-plan"), reason, by: "person" }, place));
      return {
        content: `${reason}. Write another with write_plan.`,
        status: "error",
        update: { decisions },
      };
    }
    if (answer.type === "edit") {
      const edited = validateDraft(env, answer.args, tools);
      if (!edited.ok) return edited.result;
      draft = enrich(edited.draft, env.options.sideEffectTools);
    }
    const reason = answer.type === "edit" ? "a person edited and approved the plan" : "a person approved the plan";
    decisions.push(decisionAt({ rule: answerRule("approve-plan"), reason, by: "person" }, place));
  }
  const plan: Plan = { version: 1, steps: draft.steps, assumptions: draft.assumptions ?? [] };
  const state = { ...env.state, plan };
  return {
    content: committedMessage(state, [], []),
    status: "success",
    update: {
      plan,
      status: "running",
      decisions,
      planRun: { overBudget: null, qualityReturns: 0 },
      ...qualityWrite(gated.findings),
    },
  };
}

async function revision(env: CallEnv, old: Plan, draft: PlanDraft, tools: ReadonlySet<string>): Promise<ToolReply> {
  const { state, options } = env;
  const place = { attempt: 0, planVersion: old.version, at: env.at() };
  const spent = revisionCountGuard(standing(state).count, options.policy);
  if (spent) {
    const decision = decisionAt(spent, place);
    const content = `The plan was not revised: ${spent.reason}. Finish with what is done, or stop and report.`;
    return { content, status: "error", update: { decisions: [decision] } };
  }
  let rev = revise({ ...state, plan: old }, draft, state.planRun.trigger, env.at());
  const dear = overBudget(env, rev.plan, { ...state.steps, ...rev.resets });
  if (dear) return dear;
  // The quality gate reads what the revision adds; a draft it would hold goes back first.
  const gated = gateVersion(env, revisionGate(old, rev.plan, rev.added));
  const back = sentBack(env, gated);
  if (back) return back;
  const hold = guard(env, old, rev) ?? gated.hold;
  const decisions: Decision[] = [];
  let current = draft;
  if (hold) {
    if (gated.hold && hold !== gated.hold) decisions.push(decisionAt(gated.hold, place));
    decisions.push(decisionAt({ rule: hold.rule, reason: hold.reason }, place));
    const held = { draft, hit: hold, approved: hold.reason, findings: gated.findings };
    const answered = personReview(env, old, held, decisions, tools);
    if ("result" in answered) return answered.result;
    if (answered.edited) ({ draft: current, rev } = answered.edited);
  }
  const committed = await undoAndCommit(env, old, { rev, draft: current, decisions }, tools);
  if (committed.status !== "success") return committed;
  return { ...committed, update: { ...committed.update, ...qualityWrite(gated.findings) } };
}

/**
 * A person's say on a held revision (the capability guards, or effects it would abandon): rejected,
 * it is not recorded; edited, the person's draft is checked and revised in its place; approved, it
 * goes on. The decisions the answer makes are pushed onto `decisions`.
 */
function personReview(
  env: CallEnv,
  old: Plan,
  held: { draft: PlanDraft; hit: GuardHit; approved: string; findings?: readonly QualityFinding[] },
  decisions: Decision[],
  tools: ReadonlySet<string>,
): { result: ToolReply } | { edited?: { draft: PlanDraft; rev: Revision } } {
  const { state, options } = env;
  const place = { attempt: 0, planVersion: old.version, at: env.at() };
  const title = `The revision needs a person: ${held.hit.reason}`;
  const answer = ask(review(env, held.draft, title, held.hit, held.findings));
  if (answer.type === "reject") {
    const reason = `a person rejected the revision${answer.message ? `: ${answer.message}` : ""}`;
    decisions.push(decisionAt({ rule: answerRule("reject-replan"), reason, by: "person" }, place));
    return { result: { content: `${reason}.`, status: "error", update: { decisions } } };
  }
  let edited: { draft: PlanDraft; rev: Revision } | undefined;
  if (answer.type === "edit") {
    const checked = validateDraft(env, answer.args, tools);
    if (!checked.ok) return { result: { ...checked.result, update: { decisions } } };
    const draft = enrich(checked.draft, options.sideEffectTools);
    edited = { draft, rev: revise({ ...state, plan: old }, draft, state.planRun.trigger, env.at()) };
  }
  // A revision answering a broken assumption replaces its branch; any other rewrites the plan.
  const action = state.planRun.trigger !== null ? "replan_local" : "replan_global";
  const reason = `a person approved: ${held.approved}`;
  decisions.push(decisionAt({ rule: answerRule("approve-replan"), action, reason, by: "person" }, place));
  return edited ? { edited } : {};
}

/**
 * The effects the revision abandons (docs/decisions/0043-effects-in-the-middleware.md): those
 * without `compensate` are a person's to let stand first (`compensate.missing`), asked before
 * anything is called; then the revision is recorded with the undos, which run before the next model call.
 */
function undoAndCommit(
  env: CallEnv,
  old: Plan,
  r: { rev: Revision; draft: PlanDraft; decisions: Decision[] },
  tools: ReadonlySet<string>,
): ToolReply {
  const { state } = env;
  const { decisions } = r;
  let { rev, draft } = r;
  let abandoned = abandonedByRevision(env, old, rev);
  const missing = withoutCompensation(abandoned);
  if (missing.length > 0) {
    const held = missingDecision(missing, { after: -1, planVersion: old.version, at: env.at() });
    decisions.push(held);
    const hit = { rule: held.rule, reason: held.reason };
    const approved = `the effects of ${missing.map((m) => m.step.id).join(", ")} stand`;
    const answered = personReview(env, old, { draft, hit, approved }, decisions, tools);
    if ("result" in answered) return answered.result;
    if (answered.edited) {
      ({ draft, rev } = answered.edited);
      abandoned = abandonedByRevision(env, old, rev);
    }
  }
  if (abandoned.length === 0) return commit(env, rev, decisions);
  // The abandoned steps leave the plan; their undos wait, and run before the next model call
  // (middleware/compensate.ts), as the graph's run before its next step.
  const records = compensationRecords(abandoned, state.facts, env.at());
  const undone = new Set(records.filter((c) => c.status === "pending").map((c) => c.stepId));
  if (undone.size > 0) rev = revise({ ...state, plan: old }, draft, state.planRun.trigger, env.at(), undone);
  return commit(env, rev, decisions, records);
}

/** The first guard that holds the revision for a person, in the rule table's order. */
function guard(env: CallEnv, old: Plan, rev: Revision): GuardHit | undefined {
  const { state, options } = env;
  const trigger = state.planRun.trigger;
  const stale = revisionProgressGuard({
    triggered: trigger !== null,
    added: rev.added.length,
    proposed: rev.proposed,
    replaced: rev.replaced,
    seen: state.planRun.fingerprints,
    assumption: trigger?.assumption,
  });
  if (stale) return stale;
  const sideEffectsOf = (t: string) => (options.sideEffectTools.has(t) ? [t] : []);
  const versions = [old.steps, ...state.planHistory.map((e) => e.replaced)];
  const again = new Set(rev.added.map((s) => s.id));
  const finished = rev.plan.steps.filter((s) => !again.has(s.id) && state.steps[s.id]?.status === "succeeded");
  const capability = capabilityGuard({
    replacement: rev.added,
    previous: old.steps,
    proposed: rev.plan.steps,
    baseline: capabilityBaseline(versions, [state.goal]),
    facts: state.facts,
    replanTools: options.policy.replanTools,
    sideEffectsOf,
    untrusted: untrustedText(state),
    finished: new Set(finished.map((s) => s.id)),
  });
  return capability ?? reviewedEffects(rev.added, (t) => options.sideEffectTools.has(t), options.reviewPlan);
}

function commit(
  env: CallEnv,
  rev: Revision,
  decisions: Decision[],
  compensations: CompensationRecord[] = [],
): ToolReply {
  const content = committedMessage(
    { ...env.state, plan: rev.plan },
    rev.record.newSteps,
    rev.keptCommitted,
    compensations,
  );
  return {
    content,
    status: "success",
    update: {
      ...(compensations.length > 0 ? { compensations } : {}),
      plan: rev.plan,
      planHistory: [rev.history],
      replans: [rev.record],
      steps: rev.resets,
      decisions,
      planRun: {
        trigger: null,
        fingerprints: [rev.proposed],
        lastReplanAt: cooldownFrom(env.state),
        overBudget: null,
        qualityReturns: 0,
      },
    },
  };
}

/** A revision answering a broken assumption starts its cooldown (`policy.replanCooldownSteps`). */
function cooldownFrom(state: CallEnv["state"]): Record<string, number> {
  const assumption = state.planRun.trigger?.assumption;
  return assumption === undefined ? {} : { [assumption]: (state.planRun.successes ?? []).length };
}

/** A first plan's side-effecting step whose arguments carry untrusted text the model read already. */
function untrustedFirstPlan(env: CallEnv, draft: PlanDraft): GuardHit | undefined {
  const texts = untrustedText(env.state);
  if (texts.length === 0) return undefined;
  const known = vouchedText(env.state);
  // A side-effecting step's fallback is checked like its own call: both vouch later (taint.ts).
  const findings = draft.steps.flatMap((step) => {
    const sideEffects = step.idempotent === false ? (step.sideEffects ?? []) : [];
    if (sideEffects.length === 0) return [];
    const calls = [
      ...(step.tool === undefined ? [] : [{ tool: step.tool, args: step.args ?? {} }]),
      ...(step.fallback ? [{ tool: step.fallback.tool, args: step.fallback.args ?? {} }] : []),
    ];
    return calls.flatMap((call) => callFindings({ stepId: step.id, ...call, sideEffects }, known, texts));
  });
  return untrustedFirstPlanGuard(findings);
}

function review(
  env: CallEnv,
  draft: PlanDraft,
  description: string,
  hold: GuardHit | undefined,
  findings: readonly QualityFinding[] = [],
) {
  const where = {
    rule: hold?.rule ?? "reviewPlan",
    planVersion: env.state.plan?.version ?? 0,
    ...(findings.length > 0 ? { findings: [...findings] } : {}),
  };
  return reviewRequest("plan_review", { name: WRITE_PLAN, args: draft, description }, where);
}

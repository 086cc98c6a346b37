/**
 * One replan, decided (docs/architecture.md "The graph", replanner): from the replan's frame and
 * what was gathered for it — replan memory's read, the planner's answers so far — to what must still be
 * gathered, or the outcome with the writes to make. The replanner node gathers what this asks for
 * and asks again; once it says `apply`, the node writes state, then the store. Pure: the same
 * inputs give the same step, with no store, planner or clock in reach.
 */
import type { PlanIssue } from "../../plan/validate.js";
import type { Plan } from "../../plan/schema/plan.js";
import type { QualityFinding } from "../../plan/schema/quality.js";
import type { CompensationRecord } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import type { CapabilityHit } from "../capability/guard.js";
import { leaves, type TaintedText } from "../capability/taint.js";
import type { Decision } from "../ladder/decision.js";
import { shapeDraft, type DraftRules, type ReplanFrame, type ShapedDraft, type StoppedDraft } from "./draft.js";
import { sendBackDraft, type GuardHit } from "../ladder/guards.js";
import type { ReplanMemoryMode } from "../options.js";
import { mergeSteps } from "./merge.js";
import {
  recallFrom,
  recallKey,
  rejectRecalled,
  type MemoryHint,
  type MemoryRead,
  type MemoryWrite,
  type Recall,
} from "./recall.js";
import { compensationGate, versionCompensations } from "./compensation-gate.js";
import { reviewNewSteps, type ReviewedRun } from "../capability/review.js";
import { qualityPolicy } from "../quality/findings.js";
import { qualityGate, qualityIssues } from "../quality/gate.js";
import type { EffectsSnapshot } from "../compensation/abandoned.js";
import {
  replanPrecheck,
  replanTransition,
  type ProposedVersion,
  type ReplanOutcome,
  type ReplanSnapshot,
} from "./replan.js";
import { reviewPending, versionHold, versionAdds, versionFindings } from "./version-quality.js";

/** What one request to the planner came back with: a draft (unchecked), or why there is none. */
export type PlannerAnswer = { draft: unknown } | { failed: GuardHit; issues?: PlanIssue[] };

/** Where the steps a person may have to approve came from: another thread's answer is untrusted text here. */
export interface DraftOrigin {
  remembered: boolean;
  untrusted: TaintedText[];
}

/** The capability guard (`policy.replanTools`) bound to the run: merged steps in, what holds them out. */
export type CapabilityReview = (
  replacement: readonly Step[],
  proposed: readonly Step[],
  origin: DraftOrigin,
) => CapabilityHit | undefined;

/**
 * What the run's options set for every replan it makes: they decide, nothing decides about them.
 * They come apart from the replan's data, so they reach only what they decide
 * (docs/decisions/0070-run-settings-apart-from-the-data.md).
 */
export interface ReplanSettings {
  rules: DraftRules;
  /** Replan memory's mode; `off` when the run has no store. */
  memory: ReplanMemoryMode;
  /** Whether a reviewer model is configured: the quality gate asks it about the proposed version. */
  reviewer?: boolean | undefined;
}

/** One replan: its frame, the run's records, and what was gathered for it so far. */
export interface ReplanData {
  frame: ReplanFrame;
  /** What was read from replan memory, once asked for. */
  read?: MemoryRead | undefined;
  /** The planner's answers so far, in the order they were asked for. */
  answers: readonly PlannerAnswer[];
  /** This replan's outcome id (runtime/replan-memory.ts `outcomeId`): a discarded entry's failure is filed under it. */
  outcomeId: string;
  /** The run's records the capability review reads (policy/capability/review.ts). */
  run?: ReviewedRun | undefined;
  /** A review bound elsewhere, used instead of the run's (a test's stand-in). */
  review?: CapabilityReview | undefined;
  /** The run's committed effects and compensations: a version abandoning one without `compensate` is asked about. */
  effects?: EffectsSnapshot | undefined;
  /** The reviewer's findings about the proposed version, once asked for. */
  reviewed?: readonly QualityFinding[] | undefined;
}

/** The settings and one replan's data in one object. */
export interface ReplanInput extends ReplanSettings, ReplanData {}

/** What the node gathers for one ask, through its one gather port. */
export type Gathered = { read: MemoryRead } | { answer: PlannerAnswer } | { reviewed: QualityFinding[] };

/** What the decision has been given so far, of what it asked for. */
export type Gathering = Pick<ReplanData, "read" | "answers" | "reviewed">;

/** What was gathered, with one more answer: a planner's after the earlier ones. */
export function withGathered(gathering: Gathering, got: Gathered): Gathering {
  if ("answer" in got) return { ...gathering, answers: [...gathering.answers, got.answer] };
  return { ...gathering, ...got };
}

/** What to gather next, or the decision to apply. */
export type ReplanStep = ReplanAsk | ReplanDecision;

/** What the node's gather port is asked for: replan memory's entries, a planner's draft, the reviewer's findings. */
export type ReplanAsk =
  | { next: "read_memory"; key: string }
  | { next: "ask_planner"; hints?: MemoryHint[]; issues?: PlanIssue[] }
  | { next: "review_version"; plan: Plan };

export interface ReplanDecision {
  next: "apply";
  outcome: ReplanOutcome;
  /** Replan memory's decisions (reused, hinted, passed over): they come before the outcome's. */
  notes: Decision[];
  /** Store writes, made after the state writes; one that fails is reported, never the run's failure. */
  writes: MemoryWrite[];
  /** Whether the planner (or memory) was consulted, so the replan budget is charged. */
  charged: boolean;
  /** The quality gate's findings about the proposed version, when it found some. */
  findings?: QualityFinding[];
  /** The `quality.hold` decision, when those findings hold a version to commit. */
  qualityHold?: Decision;
  /** A version to commit: the run's compensations with those of the effects it abandons, when it abandons some. */
  compensations?: CompensationRecord[];
}

/** The next step of one replan, under the run's settings: given with its data in one object, or apart. */
export function decideReplan(input: ReplanInput): ReplanStep;
export function decideReplan(settings: ReplanSettings, input: ReplanData): ReplanStep;
export function decideReplan(settings: ReplanSettings, input: ReplanData = settings as ReplanInput): ReplanStep {
  const { rules } = settings;
  const { frame: f } = input;
  const early = replanPrecheck(snapshot(f), rules.policy);
  if (early) return { next: "apply", outcome: early, notes: [], writes: [], charged: false };
  const key = recallKey(f, settings.memory);
  if (key !== undefined && input.read === undefined) return { next: "read_memory", key };
  let recall: Recall =
    key === undefined || input.read === undefined
      ? { notes: [], writes: [] }
      : recallFrom(rules, f, settings.memory, key, input.read, input.outcomeId);
  let drafted = recall.draft ? shapeDraft(rules, f, recall.draft) : undefined;
  if (drafted && "hit" in drafted) {
    // A remembered draft that a guard stops is the entry's failure, not this run's: the planner answers.
    recall = rejectRecalled(f, recall, drafted.hit, input.outcomeId);
    drafted = undefined;
  }
  if (!drafted) {
    const planned = fromPlanner(rules, f, input.answers, recall.hints);
    if ("next" in planned) return planned;
    drafted = planned;
  }
  // Last gate before a version: a replan may not widen what the run can do unseen (docs/architecture.md
  // "Untrusted facts").
  const held = "hit" in drafted ? undefined : capabilityReview(f, drafted.steps, recall, reviewOf(rules, input));
  const s = snapshot(f, recall);
  const outcome = compensationGate(replanTransition(s, drafted, held), s, input.effects);
  const decided = { next: "apply", outcome, notes: recall.notes, writes: recall.writes, charged: true } as const;
  return gated(
    settings,
    input,
    outcome.kind === "commit" ? { ...decided, ...undoes(f, outcome.proposal, input.effects) } : decided,
  );
}

/** What a committed version writes for the effects it abandons (policy/replan/compensation-gate.ts). */
function undoes(f: ReplanFrame, proposal: ProposedVersion, effects: EffectsSnapshot | undefined) {
  return versionCompensations(f.plan, proposal, effects, proposal.record.at ?? f.at);
}

/**
 * The quality gate on the proposed version, before its first step (docs/decisions/0040-plan-quality-gate.md):
 * the reviewer is asked first when one is configured; the findings hold only a version to commit.
 */
function gated(settings: ReplanSettings, input: ReplanData, decided: ReplanDecision): ReplanDecision | ReplanAsk {
  const { outcome } = decided;
  if (outcome.kind === "escalate") return decided;
  const { policy } = settings.rules;
  const plan = outcome.proposal.plan;
  if (reviewPending(policy, settings.reviewer, input.reviewed)) return { next: "review_version", plan };
  const findings = versionFindings(policy, versionAdds(input.frame, outcome.proposal), input.reviewed);
  if (findings.length === 0) return decided;
  const after = input.frame.decisions.length + decided.notes.length;
  const held =
    outcome.kind === "commit"
      ? versionHold(policy, findings, { after, planVersion: plan.version, at: input.frame.at })
      : undefined;
  return { ...decided, findings, ...(held ? { qualityHold: held } : {}) };
}

/** The planner's draft; an invalid one goes back with its issues while `policy.replanDraftRetries` allows. */
function fromPlanner(
  rules: DraftRules,
  f: ReplanFrame,
  answers: readonly PlannerAnswer[],
  hints: MemoryHint[] | undefined,
): StoppedDraft | ShapedDraft | Extract<ReplanStep, { next: "ask_planner" }> {
  const ask = (issues?: PlanIssue[]) =>
    ({ next: "ask_planner", ...(hints ? { hints } : {}), ...(issues ? { issues } : {}) }) as const;
  const first = answers[0];
  if (first === undefined) return ask();
  let drafted = answered(rules, f, first);
  for (let sent = 0; ; sent++) {
    // A draft the quality gate would hold goes back too, while retries remain; after that it commits and is held.
    const issues = "hit" in drafted ? drafted.issues : gateIssues(rules, f, drafted);
    if (!sendBackDraft(issues, sent, rules.policy)) break;
    const again = answers[sent + 1];
    if (again === undefined) return ask(issues);
    drafted = answered(rules, f, again);
  }
  return drafted;
}

/** The quality gate's findings that would hold the version this draft makes, as typed issues (policy/quality/gate.ts). */
function gateIssues(rules: DraftRules, f: ReplanFrame, drafted: ShapedDraft): PlanIssue[] {
  const quality = qualityPolicy(rules.policy);
  if (!quality) return [];
  const known = new Set(f.plan.assumptions.map((a) => a.id));
  const added = (drafted.proposed.assumptions ?? []).filter((a) => !known.has(a.id));
  const plan = {
    version: f.plan.version + 1,
    steps: mergeSteps(f.plan.steps, [...f.affectedIds], drafted.steps),
    assumptions: [...f.plan.assumptions, ...added],
  };
  const input = {
    plan,
    goal: f.goal ?? "",
    added: new Set(drafted.steps.map((s) => s.id)),
    addedAssumptions: new Set(added.map((a) => a.id)),
  };
  return qualityIssues(qualityGate(input, quality), quality);
}

function answered(rules: DraftRules, f: ReplanFrame, answer: PlannerAnswer): StoppedDraft | ShapedDraft {
  if ("draft" in answer) return shapeDraft(rules, f, answer.draft);
  return answer.issues ? { hit: answer.failed, issues: answer.issues } : { hit: answer.failed };
}

/**
 * Whether the merged steps may become a version without a person. Another thread's answer from
 * replan memory, reused or shown as a hint, is untrusted text here: it may carry what that thread read.
 */
function capabilityReview(
  f: Pick<ReplanFrame, "plan" | "affectedIds">,
  replacement: readonly Step[],
  recall: Recall,
  review: CapabilityReview,
) {
  const learned = recall.learned === true;
  const remembered = learned && recall.memory?.source === "memory";
  const hinted = learned ? (recall.hints ?? []).flatMap((h) => leaves(h.steps)) : [];
  const untrusted = hinted.map((text) => ({ text, source: "replan memory" as const }));
  return review(replacement, mergeSteps(f.plan.steps, [...f.affectedIds], replacement), { remembered, untrusted });
}

/** The review the input names, else the run's own, with each executor's side effects from the draft rules. */
function reviewOf(rules: DraftRules, { run, review }: ReplanData): CapabilityReview {
  if (review) return review;
  const sideEffectsOf = rules.sideEffectsOf ?? ((name: string) => rules.metadataOf(name)?.sideEffects ?? []);
  const bound = { replanTools: rules.policy.replanTools, sideEffectsOf };
  return (replacement, proposed, origin) =>
    run ? reviewNewSteps(bound, run, replacement, proposed, origin) : undefined;
}

/** The snapshot the pure transition reads, once memory has answered (or was not asked). */
function snapshot(f: ReplanFrame, recall?: Recall): ReplanSnapshot {
  return {
    plan: f.plan,
    steps: f.steps,
    decisions: f.decisions,
    notes: recall?.notes ?? [],
    scopeChanges: f.scopeChanges,
    trigger: f.trigger,
    scope: f.scope,
    assumption: f.assumption,
    affectedIds: f.affectedIds,
    guards: f.guards,
    falsification: f.falsification,
    memory: recall?.memory,
    at: f.at,
  };
}

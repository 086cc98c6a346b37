/**
 * The capability review of a proposed version (docs/architecture.md "Untrusted facts"): what the
 * run did before (every earlier plan version, rebuilt from the history) against what the proposal
 * would do. Pure: the run's records and the tools' side effects come in as data, so the replan
 * decides it inside its own step machine (docs/decisions/0054-capability-review-in-policy.md).
 */
import { originalSteps, stepsOfEveryVersion, type PlanVersionEntry } from "../../plan/history.js";
import type { Plan } from "../../plan/schema/plan.js";
import type { Fact, StepRun } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import { firstUnfinished, isFinished, stepPosition } from "../../plan/ready.js";
import type { Decision } from "../ladder/decision.js";
import {
  capabilityBaseline,
  capabilityGuard,
  planBaseline,
  type CapabilityHit,
  type CapabilityRules,
} from "./guard.js";
import { failureTexts, leaves, literals, uses, type TaintedText } from "./taint.js";
import type { CapabilityBaseline } from "./types.js";
import { factTexts, failureLookup, givenFact, VOUCHED } from "./run-texts.js";
import { occurs } from "./words.js";

/** The run's records the review reads (a plain slice of the graph's state). */
export interface ReviewedRun {
  goal: string;
  plan?: Plan | undefined;
  planHistory: readonly PlanVersionEntry[];
  steps: Readonly<Record<string, StepRun>>;
  facts: Readonly<Record<string, Fact>>;
  decisions: readonly Decision[];
  scopeChanges: readonly string[];
  guards?: { constraints: readonly string[] } | undefined;
}

/** What the run lets the review read besides its records: the guard's setting and each executor's side effects. */
export type ReviewRules = CapabilityRules;

/** Where a draft came from, when not from the planner alone: replan memory's answer or hints. */
export interface DraftOrigin {
  /** The draft is a learned replan memory entry (another thread's answer). */
  remembered?: boolean;
  /** Untrusted text the planner was shown besides the run's own (replan memory's hints). */
  untrusted?: readonly TaintedText[];
  /** The proposed plan keeps the run's plan as its first steps (an extension): those before its first unfinished one are not looked at. */
  appended?: boolean;
}

/** What earlier plan versions of the run did, and the text the run trusted (goal, inputs, a person's words). */
export function runBaseline(run: ReviewedRun, original: readonly Step[] = originalSteps(run)): CapabilityBaseline {
  // A person's words: replan constraints, and the scope changes this version plans for.
  const people = () => [run.goal, ...(run.guards?.constraints ?? []), ...run.scopeChanges];
  const trusted = () => {
    const inputs = Object.values(run.facts).filter(givenFact);
    return [...people(), ...inputs.flatMap((f) => leaves(f.value))];
  };
  const baseline = versionBaseline(run, trusted, original);
  // Not spread: `known` is built on its first read, and with `knows` nothing here reads it.
  return {
    tools: baseline.tools,
    inputs: baseline.inputs,
    get known() {
      return baseline.known;
    },
    knows: knowsOf(run, people, original),
  };
}

/** What earlier versions used; arguments vouch only from the first plan. */
function versionBaseline(run: ReviewedRun, trusted: () => string[], original: readonly Step[]): CapabilityBaseline {
  // A later version nobody reviewed may carry a copied value.
  // A run whose versions only appended (extensions) had no step but the current plan's: that
  // baseline grows with the plan instead of being gathered again (docs/decisions/0030-long-runs-per-step-cost.md).
  if (run.plan && run.planHistory.every((e) => e.replaced.length === 0))
    return planBaseline(run.plan.steps, trusted, original);
  // Only which steps some version had matters, not which version: each definition once.
  return capabilityBaseline([stepsOfEveryVersion(run)], trusted(), original);
}

/**
 * Whether a value occurs in the baseline's `known` text, without building it: a person's words,
 * the given facts from their index, the first plan's arguments (docs/decisions/0058-incremental-taint-index.md).
 */
function knowsOf(run: ReviewedRun, people: () => string[], original: readonly Step[]) {
  let vouched: string[] | undefined;
  let given: ReturnType<typeof factTexts> | undefined;
  return (value: string): boolean => {
    if (people().some((k) => occurs(value, k))) return true;
    given ??= factTexts(run.facts);
    if (given.shelves[VOUCHED]!.find(value) !== undefined) return true;
    vouched ??= original.flatMap((step) => uses(step).flatMap(literals));
    return vouched.some((k) => occurs(value, k));
  };
}

/** Whether new steps may become a version without a person, per `policy.replanTools`. */
export function reviewNewSteps(
  rules: ReviewRules,
  run: ReviewedRun,
  replacement: readonly Step[],
  proposed: readonly Step[],
  origin: DraftOrigin = {},
): CapabilityHit | undefined {
  const again = new Set(replacement.map((s) => s.id));
  // Asked only of the proposed plan's ids, so no list of them is made (a long plan has thousands).
  const finished = { has: (id: string) => !again.has(id) && isFinished(run.steps[id]) };
  const original = originalSteps(run);
  // Tools' error messages reach the planner too (its trigger quotes them): they are untrusted like facts.
  // Gathered when the guard first reads them, as it does to trace a literal (docs/decisions/0030-long-runs-per-step-cost.md).
  let untrusted: TaintedText[] | undefined;
  return capabilityGuard(rules, {
    replacement,
    previous: run.plan?.steps ?? [],
    proposed,
    baseline: runBaseline(run, original),
    facts: run.facts,
    get untrusted() {
      if (untrusted === undefined) {
        const runs = [...Object.values(run.steps), ...run.planHistory.flatMap((e) => Object.values(e.runs ?? {}))];
        untrusted = [...failureTexts(runs, run.decisions), ...(origin.untrusted ?? [])];
      }
      return untrusted;
    },
    untrustedLookup: failureLookup(run, origin.untrusted),
    previousStep: (id) => {
      const at = run.plan && stepPosition(run.plan, id);
      return at === undefined ? undefined : run.plan!.steps[at];
    },
    remembered: origin.remembered === true,
    finished,
    ...(origin.appended && run.plan ? { finishedBefore: firstUnfinished(run.plan, run.steps) } : {}),
    original,
  });
}

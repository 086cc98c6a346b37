/**
 * The new-capability guard (docs/architecture.md "Untrusted facts"): facts, tools' error messages
 * and replan memory reach the planner, so a replan may be steered by text nobody trusted. A replan
 * therefore may not quietly widen what the run can do: a step whose tool or agent no earlier plan
 * version used, if it has side effects (or is off the operator's allow-list), waits for a person;
 * so does a side-effecting step whose arguments carry data produced after the original plan was
 * made (taint.ts), or whose inputs a step the replan adds now feeds (flow.ts).
 * Pure: the caller hands in the earlier versions and the registry's view.
 */
import type { Fact } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";
import type { GuardHit } from "../ladder/guards.js";
import { canonical } from "../../plan/diff.js";
import { flowOf, keptFeeds, newFeed } from "./flow.js";
import {
  leaves,
  literals,
  shown,
  taintFindings,
  uses,
  type Taint,
  type TaintKeys,
  type TaintedText,
  type ToolUse,
} from "./taint.js";
import type { CapabilityBaseline, CapabilityFinding } from "./types.js";
import type { ReplanTools } from "../options.js";
import { factTexts, givenFact, PRODUCED, type TextLookup } from "./run-texts.js";
import { occurs } from "./words.js";

/**
 * The run's rules the guard applies, from its options: which new tools need a person, and what
 * each executor changes. They are read only where a finding is decided, so they come apart from
 * the proposal (docs/decisions/0070-run-settings-apart-from-the-data.md).
 */
export interface CapabilityRules {
  replanTools: ReplanTools;
  /** Side effects the registry declares for a tool, or an agent's tools for `agent:NAME`; [] when none. */
  sideEffectsOf: (tool: string) => readonly string[];
}

/** What the guard weighs: the steps a replan adds or hands back, against what the run already did and produced. */
export interface CapabilityProposal {
  /** The steps the replan adds or hands back (after merging). */
  replacement: readonly Step[];
  /** The plan version being replaced. */
  previous: readonly Step[];
  /** The whole proposed plan (its not-yet-run steps may produce facts a new step reads). */
  proposed: readonly Step[];
  baseline: CapabilityBaseline;
  facts: Readonly<Record<string, Fact>>;
  /** Untrusted text the planner read besides facts: tools' error messages, replan memory's hints. Default none. */
  untrusted?: readonly TaintedText[];
  /**
   * `untrusted` looked up by value (an index over the run's records): when given, the guard reads
   * it instead of the list (docs/decisions/0058-incremental-taint-index.md). Default: `untrusted` scanned.
   */
  untrustedLookup?: TextLookup;
  /** The step of `previous` with an id, from the plan's own index. Default: `previous` scanned for the replacement's ids. */
  previousStep?: (id: string) => Step | undefined;
  /** The replacement is a learned replan memory entry, another thread's answer. Default false. */
  remembered?: boolean;
  /** Steps of the proposed plan that already ran and will not run again (asked of its steps' ids). Default none. */
  finished?: { has(id: string): boolean };
  /**
   * Every proposed step before this position ran and will not run again: the guard does not look at
   * them (an extension of a rolling run keeps thousands; docs/decisions/0050-compact-extension-records.md). Default 0.
   */
  finishedBefore?: number;
  /**
   * Plan version 1's steps: a producer not among them (as defined there) is new, whichever replan
   * added it. Default: only the steps this replan adds are new.
   */
  original?: readonly Step[];
}

/** What the capability guard reads, in one object: the run's rules and the proposal. */
export interface CapabilityInput extends CapabilityRules, CapabilityProposal {}

/** The capability guard's verdict: the rule that fired and what it found. */
export interface CapabilityHit extends GuardHit {
  rule: "guard.new-capability" | "guard.untrusted-arguments";
  findings: CapabilityFinding[];
}

/**
 * Under a plan review (`reviewPlan`), a revision that adds a step using a side-effecting tool waits
 * for a person, whatever tools earlier versions used.
 */
export function reviewedEffects(
  added: readonly Step[],
  sideEffecting: (tool: string) => boolean,
  reviewPlan: boolean,
): Pick<CapabilityHit, "rule" | "reason"> | undefined {
  const effectful = added.filter((s) => s.tool !== undefined && sideEffecting(s.tool));
  if (!reviewPlan || effectful.length === 0) return undefined;
  const names = effectful.map((s) => `${s.id} (${s.tool})`).join(", ");
  return { rule: "guard.new-capability", reason: `the revision adds side-effecting steps ${names} (reviewPlan)` };
}

/** A held proposal that no longer applies (the plan moved on while it waited): the guard still stands. */
export function staleHold(version: number): Pick<CapabilityHit, "rule" | "reason"> {
  const reason = `the held replan no longer applies to plan version ${version}; nothing was changed`;
  return { rule: "guard.new-capability", reason };
}

/** The earlier versions' tools (main and fallback), inputs per tool and argument values. */
export function capabilityBaseline(
  versions: readonly (readonly Step[])[],
  trustedText: readonly string[],
  vouched?: readonly Step[],
) {
  const tools = new Set<string>();
  const inputs = new Map<string, Set<string>>();
  const known: string[] = [...trustedText];
  const add = (map: Map<string, Set<string>>, key: string, value: string) =>
    map.set(key, (map.get(key) ?? new Set<string>()).add(value));
  for (const step of versions.flat()) {
    for (const use of uses(step)) {
      tools.add(use.tool);
      if (!inputs.has(use.tool)) inputs.set(use.tool, new Set());
      for (const k of use.inputs) add(inputs, use.tool, k);
      if (!vouched) known.push(...literals(use));
    }
  }
  // Arguments vouch only where someone vouched for them: a version a replan made unreviewed may
  // already carry a copied value (a read-only step first, the payment to it in the next replan).
  for (const step of vouched ?? []) for (const use of uses(step)) known.push(...literals(use));
  return { tools, inputs, known } satisfies CapabilityBaseline;
}

/** What one plan's steps used, gathered once and extended as the plan grows (see `planBaseline`). */
interface Gathered {
  steps: readonly Step[];
  tools: Set<string>;
  inputs: Map<string, Set<string>>;
}
const gathered = new WeakMap<Step, Gathered>();

/**
 * `capabilityBaseline([steps], trustedText, vouched)` for the steps of one plan, remembered by its
 * first step: a plan that only appends to the one seen last (an extension hands back every step
 * as the same object) adds just its new steps (docs/decisions/0030-long-runs-per-step-cost.md).
 * The tool and input sets are shared with the next call: the answer is for use at once, not to keep.
 */
export function planBaseline(
  steps: readonly Step[],
  trustedText: readonly string[] | (() => readonly string[]),
  vouched?: readonly Step[],
): CapabilityBaseline {
  const text = typeof trustedText === "function" ? trustedText : () => trustedText;
  if (steps.length === 0) return capabilityBaseline([steps], text(), vouched);
  let g = gathered.get(steps[0]!);
  if (g === undefined || g.steps.length > steps.length || !g.steps.every((step, i) => steps[i] === step)) {
    g = { steps: [], tools: new Set(), inputs: new Map() };
    gathered.set(steps[0]!, g);
  }
  for (let i = g.steps.length; i < steps.length; i++)
    for (const use of uses(steps[i]!)) {
      g.tools.add(use.tool);
      const read = g.inputs.get(use.tool) ?? new Set<string>();
      g.inputs.set(use.tool, read);
      for (const k of use.inputs) read.add(k);
    }
  g.steps = steps;
  // Argument values and trusted text matter only when a literal is traced: gathered on first read,
  // so an extension that traces none does not read every fact (the inputs among them).
  let known: string[] | undefined;
  return {
    tools: g.tools,
    inputs: g.inputs,
    get known() {
      if (known === undefined) {
        known = [...text()];
        for (const step of vouched ?? steps) for (const use of uses(step)) known.push(...literals(use));
      }
      return known;
    },
  };
}

/**
 * Why this replan needs a person's approval, or undefined when it may run as proposed. The run's
 * rules come in one object with the proposal, or apart from it (as the replan's review holds them).
 */
export function capabilityGuard(input: CapabilityInput): CapabilityHit | undefined;
export function capabilityGuard(rules: CapabilityRules, proposal: CapabilityProposal): CapabilityHit | undefined;
export function capabilityGuard(
  rules: CapabilityRules,
  input: CapabilityProposal = rules as CapabilityInput,
): CapabilityHit | undefined {
  const before = previousSteps(input);
  // Only what the replan adds or changes: a step handed back as it was is not new.
  const added = input.replacement.filter((s) => changed(before.get(s.id), s));
  const addedIds = new Set(added.map((s) => s.id));
  const original = input.original && new Map(input.original.map((s) => [s.id, s]));
  // A producer is new when this replan adds it or, as far as plan version 1 is known, an earlier one did.
  const isNew = (s: Step) => addedIds.has(s.id) || (original !== undefined && changed(original.get(s.id), s));
  const finished = input.finished ?? new Set<string>();
  const findings: CapabilityFinding[] = [];
  const taint: Taint = taintOf(input);
  const flow = flowOf(input.proposed, addedIds, finished, input.baseline, taint, isNew);
  const fedBy = (key: string) => newFeed(flow, key);
  const effectsOf = (step: Step, use: ToolUse) => [
    ...new Set([
      ...rules.sideEffectsOf(use.tool),
      ...(use.main ? (step.sideEffects ?? []) : []),
      // An undo changes the world as much as the call it undoes, whatever its tool declares.
      ...(use.as === "compensation" ? [`undo of ${(step.sideEffects ?? []).join(", ") || "a side effect"}`] : []),
    ]),
  ];
  for (const step of added) {
    for (const use of uses(step)) {
      const sideEffects = effectsOf(step, use);
      if (!input.baseline.tools.has(use.tool) && needsReview(use.tool, sideEffects, rules.replanTools))
        findings.push({
          kind: "new_tool",
          stepId: step.id,
          tool: use.tool,
          sideEffects,
          detail: newTool(use, sideEffects),
        });
      if (sideEffects.length > 0)
        findings.push(...taintFindings(step.id, use, sideEffects, input.baseline, taint, fedBy));
    }
  }
  findings.push(...keptFeeds(flow, input.proposed, effectsOf, input.finishedBefore));
  if (findings.length === 0) return undefined;
  const fresh = findings.some((f) => f.kind === "new_tool");
  return {
    rule: fresh ? "guard.new-capability" : "guard.untrusted-arguments",
    reason: `the replan needs a person's approval: ${findings.map((f) => f.detail).join("; ")}`,
    findings,
  };
}

/** Whether `step` is not `earlier` (absent, or a different step once written out). */
function changed(earlier: Step | undefined, step: Step): boolean {
  return earlier === undefined || (earlier !== step && canonical(earlier) !== canonical(step));
}

/** The steps of the version being replaced that the replacement hands back or changes, by id. */
function previousSteps(input: CapabilityProposal): Map<string, Step> {
  const before = new Map<string, Step>();
  if (input.previousStep) {
    for (const { id } of input.replacement) {
      const step = input.previousStep(id);
      if (step !== undefined) before.set(id, step);
    }
    return before;
  }
  // Only the replacement's ids are looked up: a long plan is scanned, not indexed.
  const wanted = new Set(input.replacement.map((s) => s.id));
  for (const s of input.previous) if (wanted.has(s.id)) before.set(s.id, s);
  return before;
}

function needsReview(tool: string, sideEffects: readonly string[], replanTools: ReplanTools): boolean {
  if (replanTools === "any") return false;
  if (replanTools === "read-only") return sideEffects.length > 0;
  return !replanTools.includes(tool);
}

function newTool(use: ToolUse, sideEffects: readonly string[]): string {
  const effects =
    sideEffects.length > 0 ? ` (side effects: ${sideEffects.join(", ")})` : " (not on policy.replanTools)";
  const as = use.as ? ` as a ${use.as}` : "";
  if (use.main && use.tool.startsWith("agent:"))
    return `step "${use.stepId}" would run ${shown(use.tool)}${effects}, an agent no earlier plan version used`;
  return `step "${use.stepId}" would call ${use.tool}${as}${effects}, a tool no earlier plan version used`;
}

/**
 * Data produced after the original plan was made: facts a tool or agent produced (not the caller's
 * input, not a person's answer), facts steps of the proposed plan will produce when they run, and
 * the untrusted text the planner read besides facts.
 */
function taintOf(input: CapabilityProposal): Taint {
  let people: Set<string> | undefined;
  const person = (id: string) => {
    people ??= new Set(input.proposed.filter((s) => s.human).map((s) => s.id));
    return people.has(id);
  };
  const trusted = (f: Fact) => givenFact(f) || person(f.producedBy);
  // Built on first use, key by key for `keys`: a version whose new steps trace no literal and
  // read a few keys does not walk every fact of a long run (docs/decisions/0030-long-runs-per-step-cost.md).
  let texts: TaintedText[] | undefined;
  let index: ReturnType<typeof factTexts> | undefined;
  return {
    keys: taintKeys(input, trusted),
    get texts() {
      if (texts === undefined) {
        texts = [];
        for (const key of Object.keys(input.facts)) {
          const fact = input.facts[key]!;
          if (trusted(fact)) continue;
          // The values themselves, not their JSON: a quote or newline in a page must match as written.
          for (const text of leaves(fact.value)) texts.push({ text, source: "tool output" });
        }
        texts.push(...(input.untrusted ?? []));
      }
      return texts;
    },
    // The same answer as `texts` scanned, from the facts' index (docs/decisions/0058-incremental-taint-index.md).
    find(value) {
      index ??= factTexts(input.facts);
      const fact = index.shelves[PRODUCED]!.find(value, (e) => !person(e.meta));
      if (fact !== undefined) return { text: fact.text, source: "tool output" };
      if (input.untrustedLookup) return input.untrustedLookup.find(value);
      return input.untrusted?.find((t) => occurs(value, t.text));
    },
    remembered: input.remembered === true,
  };
}

/**
 * Why a key is tainted: a fact some tool or agent produced, else a key a step of the proposed plan
 * will produce (the first such step), else not tainted.
 */
function taintKeys(input: CapabilityProposal, trusted: (f: Fact) => boolean): TaintKeys {
  let producers: Map<string, string> | undefined;
  const get = (key: string): string | undefined => {
    const fact = Object.hasOwn(input.facts, key) ? input.facts[key] : undefined;
    if (fact !== undefined && !trusted(fact)) return `produced by step "${fact.producedBy}"`;
    if (producers === undefined) {
      producers = new Map();
      for (const step of input.proposed)
        if (!step.human) for (const k of step.produces ?? []) if (!producers.has(k)) producers.set(k, step.id);
    }
    const id = producers.get(key);
    return id === undefined ? undefined : `to be produced by step "${id}"`;
  };
  return { get, has: (key) => get(key) !== undefined };
}

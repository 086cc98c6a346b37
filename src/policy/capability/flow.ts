/**
 * What feeds a key a side-effecting step reads. "This tool read this key in an earlier version"
 * vouches for a flow only while nothing untrusted enters it upstream: a step a new version adds
 * that now produces the key — a read-only tool echoing an injected value, a lookup pointed at an
 * injected id, a parser reading a page — carries that value on, even through a kept step that has
 * yet to run. A new step that produces the key from what the run knew (the caller's input, an
 * earlier version's arguments) and from flows its tool already had carries nothing untrusted: a
 * fallback source for a failed lookup passes. Pure; docs/decisions/0013-untrusted-facts-do-not-steer-the-plan.md.
 */
import type { Step } from "../../plan/schema/step.js";
import type { CapabilityBaseline, CapabilityFinding } from "./types.js";
import { knownOf, literals, shown, traced, uses, type Taint, type ToolUse } from "./taint.js";

export interface Flow {
  /** Steps of the proposed plan by the keys they produce. */
  producers: ReadonlyMap<string, readonly Step[]>;
  /** Steps the version adds or changes. */
  added: ReadonlySet<string>;
  /** Whether a producer is not what the original plan had: added by this replan or an earlier one. */
  isNew: (step: Step) => boolean;
  /** Steps that already ran and will not run again: what they read is spent. */
  finished: { has(id: string): boolean };
  baseline: CapabilityBaseline;
  taint: Taint;
  /** Each key's answer once found (a chain is walked once, however many steps read it). */
  memo: Map<string, string | undefined>;
  clean: Map<string, boolean>;
}

export function flowOf(
  proposed: readonly Step[],
  added: ReadonlySet<string>,
  finished: { has(id: string): boolean },
  baseline: CapabilityBaseline,
  taint: Taint,
  isNew: (step: Step) => boolean,
): Flow {
  // Built on first use: a version whose steps read no tainted key never walks the whole plan
  // (docs/decisions/0030-long-runs-per-step-cost.md).
  let producers: Map<string, Step[]> | undefined;
  const flow: Flow = {
    get producers() {
      if (producers === undefined) {
        producers = new Map();
        for (const step of proposed)
          if (!step.human)
            for (const key of step.produces ?? []) producers.set(key, [...(producers.get(key) ?? []), step]);
      }
      return producers;
    },
    added,
    isNew,
    finished,
    baseline,
    taint,
    memo: new Map(),
    clean: new Map(),
  };
  return flow;
}

/**
 * Why `key` no longer comes from where an earlier version took it — `fed by step "X", which this
 * replan adds` — or undefined when every step that will produce it (and what feeds those) is as
 * before.
 */
export function newFeed(flow: Flow, key: string): string | undefined {
  if (flow.memo.has(key)) return flow.memo.get(key);
  // A key met again on its own chain (a cycle the validator let through) adds nothing new.
  flow.memo.set(key, undefined);
  const found = feedOf(flow, key);
  flow.memo.set(key, found);
  return found;
}

function feedOf(flow: Flow, key: string): string | undefined {
  for (const producer of flow.producers.get(key) ?? []) {
    const fresh = flow.isNew(producer);
    // A finished step's inputs are spent, but what it produced from its own arguments is the fact now.
    if (flow.finished.has(producer.id)) {
      if (fresh && !clean(flow, producer)) return fedBy(flow, producer.id);
      continue;
    }
    if (fresh && !clean(flow, producer)) return fedBy(flow, producer.id);
    for (const input of producer.inputs ?? []) {
      if (!flow.taint.keys.has(input)) continue;
      const read = uses(producer).every((u) => flow.baseline.inputs.get(u.tool)?.has(input));
      if (fresh && !read) return fedBy(flow, producer.id);
      const deeper = newFeed(flow, input);
      if (deeper !== undefined) return deeper;
    }
  }
  return undefined;
}

/**
 * Side-effecting steps kept as they were, yet to run, that read what a new step now feeds. `from`:
 * the proposed steps before it have all finished (none of them is looked at).
 */
export function keptFeeds(
  flow: Flow,
  proposed: readonly Step[],
  effectsOf: (step: Step, use: ToolUse) => string[],
  from = 0,
): CapabilityFinding[] {
  const findings: CapabilityFinding[] = [];
  for (let at = Math.max(0, from); at < proposed.length; at++) {
    const step = proposed[at]!;
    if (flow.added.has(step.id) || flow.finished.has(step.id)) continue;
    for (const use of uses(step)) {
      const sideEffects = effectsOf(step, use);
      if (sideEffects.length === 0) continue;
      for (const key of use.inputs) {
        const feed = flow.taint.keys.has(key) ? newFeed(flow, key) : undefined;
        if (feed === undefined) continue;
        const detail = `step "${step.id}" would pass fact "${key}" (${feed}) to ${shown(use.tool)}`;
        findings.push({ kind: "untrusted_input", stepId: step.id, tool: use.tool, sideEffects, detail });
      }
    }
  }
  return findings;
}

const fedBy = (flow: Flow, id: string) =>
  flow.added.has(id) ? `fed by step "${id}", which this replan adds` : `fed by step "${id}", which a replan added`;

/** No untrusted literal in the arguments of any call the step may make. */
function clean(flow: Flow, step: Step): boolean {
  const cached = flow.clean.get(step.id);
  if (cached !== undefined) return cached;
  const known = knownOf(flow.baseline);
  const result = uses(step).every((u) => literals(u).every((v) => traced(v, known, flow.taint) === undefined));
  flow.clean.set(step.id, result);
  return result;
}

/**
 * What feeds a key a side-effecting step reads. "This tool read this key in an earlier version"
 * vouches for a flow only while nothing untrusted enters it upstream: a step a new version adds
 * that now produces the key — a read-only tool echoing an injected value, a lookup pointed at an
 * injected id, a parser reading a page — carries that value on, even through a kept step that has
 * yet to run. A new step that produces the key from what the run knew (the caller's input, an
 * earlier version's arguments) and from flows its tool already had carries nothing untrusted: a
 * fallback source for a failed lookup passes. Pure; docs/decisions/0013-untrusted-facts-do-not-steer-the-plan.md.
 */
import type { Step } from "../plan/schema.js";
import type { CapabilityBaseline } from "./capability.js";
import { leaves, traced, uses, type Taint } from "./capability-taint.js";

export interface Flow {
  /** Steps of the proposed plan by the keys they produce. */
  producers: ReadonlyMap<string, readonly Step[]>;
  /** Steps the version adds or changes. */
  added: ReadonlySet<string>;
  /** Steps that already ran and will not run again: what they read is spent. */
  finished: ReadonlySet<string>;
  baseline: CapabilityBaseline;
  taint: Taint;
}

export function flowOf(
  proposed: readonly Step[],
  added: ReadonlySet<string>,
  finished: ReadonlySet<string>,
  baseline: CapabilityBaseline,
  taint: Taint,
): Flow {
  const producers = new Map<string, Step[]>();
  for (const step of proposed)
    if (!step.human) for (const key of step.produces ?? []) producers.set(key, [...(producers.get(key) ?? []), step]);
  return { producers, added, finished, baseline, taint };
}

/**
 * Why `key` no longer comes from where an earlier version took it — `fed by step "X", which this
 * replan adds` — or undefined when every step that will produce it (and what feeds those) is as
 * before.
 */
export function newFeed(flow: Flow, key: string, seen: Set<string> = new Set()): string | undefined {
  if (seen.has(key)) return undefined;
  seen.add(key);
  for (const producer of flow.producers.get(key) ?? []) {
    if (flow.finished.has(producer.id)) continue;
    const fresh = flow.added.has(producer.id);
    if (fresh && !clean(flow, producer)) return fedBy(producer.id);
    for (const input of producer.inputs ?? []) {
      if (!flow.taint.keys.has(input)) continue;
      const read = uses(producer).every((u) => flow.baseline.inputs.get(u.tool)?.has(input));
      if (fresh && !read) return fedBy(producer.id);
      const deeper = newFeed(flow, input, seen);
      if (deeper !== undefined) return deeper;
    }
  }
  return undefined;
}

const fedBy = (id: string) => `fed by step "${id}", which this replan adds`;

/** No untrusted literal in the arguments of any call the step may make. */
function clean(flow: Flow, step: Step): boolean {
  return uses(step).every((u) => leaves(u.args).every((v) => traced(v, flow.baseline.known, flow.taint) === undefined));
}

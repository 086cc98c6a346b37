/**
 * A replan never silently drops work (pure). A step of the scope that has not run and does not
 * itself rest on the broken assumption is in scope only because it depends on a step that does:
 * it stays, its dependencies re-wired to the replacement steps that produce its inputs, unless the
 * draft replaces it by id or by steps producing every fact it produces. A fact the old version
 * would have produced that the new one does not is an issue of the draft (`dropped_fact`) — unless
 * its producer rested on the broken assumption or failed: work premised on a falsehood may be replaced
 * by a different route.
 * See docs/decisions/0016-replans-keep-work.md.
 */
import type { PlanIssue } from "../../plan/issues.js";
import type { StepRun } from "../../plan/schema/run.js";
import type { Step } from "../../plan/schema/step.js";

const ran = (run: StepRun | undefined) => run !== undefined && (run.attempts > 0 || run.status !== "pending");

export interface KeepInput {
  /** The replan's scope, in plan order. */
  affected: readonly Step[];
  /** The draft's steps. */
  replacement: readonly Step[];
  runs: Readonly<Record<string, StepRun>>;
  /** The falsified assumptions. */
  broken: readonly string[];
  /** Steps that must be replaced whatever they rest on (the failed step). */
  replace: readonly string[];
}

/** The steps of the scope the draft leaves out that stay, re-wired, in plan order. */
export function keptSteps(input: KeepInput): Step[] {
  const { affected, replacement, runs, broken, replace } = input;
  const proposedIds = new Set(replacement.map((s) => s.id));
  const produced = new Set(replacement.flatMap((s) => s.produces ?? []));
  const stays = (s: Step) =>
    !proposedIds.has(s.id) &&
    !replace.includes(s.id) &&
    !ran(runs[s.id]) &&
    !(s.assumptions ?? []).some((a) => broken.includes(a)) &&
    !((s.produces ?? []).length > 0 && (s.produces ?? []).every((f) => produced.has(f)));
  const kept = affected.filter(stays);
  const keptIds = new Set(kept.map((s) => s.id));
  const dropped = new Set(affected.filter((s) => !keptIds.has(s.id)).map((s) => s.id));
  return kept.map((step) => {
    const deps = (step.dependsOn ?? []).filter((d) => !dropped.has(d));
    // What a dropped dependency produced for this step now comes from the replacement steps producing it.
    for (const fact of step.inputs ?? []) {
      const from = replacement.find((s) => (s.produces ?? []).includes(fact));
      if (from && !deps.includes(from.id)) deps.push(from.id);
    }
    const out: Step = { ...step };
    if (deps.length > 0) out.dependsOn = deps;
    else delete out.dependsOn;
    return out;
  });
}

/**
 * Facts steps of the scope would have produced (and not yet held trusted) that no step of the new
 * version produces, each named with its old producer; producers that rest on a broken assumption or
 * must be replaced (the failed step) are exempt.
 */
export function droppedFacts(
  input: Omit<KeepInput, "replacement" | "runs">,
  version: readonly Step[],
  trusted: ReadonlySet<string>,
  fromVersion: number,
): PlanIssue[] {
  const produced = new Set(version.flatMap((s) => s.produces ?? []));
  const issues: PlanIssue[] = [];
  const seen = new Set<string>();
  const owed = input.affected.filter(
    (s) => !input.replace.includes(s.id) && !(s.assumptions ?? []).some((a) => input.broken.includes(a)),
  );
  for (const step of owed)
    for (const fact of step.produces ?? []) {
      if (produced.has(fact) || trusted.has(fact) || seen.has(fact)) continue;
      seen.add(fact);
      issues.push({
        code: "dropped_fact",
        path: ["steps"],
        stepId: step.id,
        message:
          `fact "${fact}" (produced by step "${step.id}" in plan version ${fromVersion}) is produced by no step ` +
          "of the new version: produce it, or keep the step",
      });
    }
  return issues;
}

/**
 * Ready-step selection (pure): which steps can start, given the plan, the step records and the
 * trusted facts. A step is ready when its dependencies succeeded (or were skipped in a way that
 * satisfies them) and its `when` holds; inputs and preconditions are checked when it runs.
 */
import { evaluate } from "../expr/cel.js";
import type { Plan, SkipReason, Step, StepRun } from "./schema.js";

const SATISFYING_SKIPS: ReadonlySet<SkipReason | undefined> = new Set(["when", "human", "replaced"]);

function depState(run: StepRun | undefined): "ok" | "skipped" | "wait" {
  if (!run) return "wait";
  if (run.status === "succeeded") return "ok";
  if (run.status === "skipped") return SATISFYING_SKIPS.has(run.skipReason) ? "ok" : "skipped";
  return "wait";
}

export function isFinished(run: StepRun | undefined): boolean {
  return run?.status === "succeeded" || run?.status === "skipped";
}

/** What can happen next: a step to skip (taken before anything else), or every step ready to start. */
export type Readiness =
  | { kind: "skip"; step: Step; reason: SkipReason; note: string }
  | { kind: "ready"; steps: Step[] }
  | { kind: "done" }
  | { kind: "blocked"; waiting: string[] };

/**
 * Every step ready to start, in the order they should start: steps being retried first (so a retry
 * is not overtaken), then plan order. A step to skip comes back alone, before any start, because
 * skipping it can settle its dependents. Empty `steps` means something is still running.
 */
export function selectReady(
  plan: Plan,
  steps: Readonly<Record<string, StepRun>>,
  trusted: Readonly<Record<string, unknown>>,
): Readiness {
  const retried = plan.steps.filter((s) => steps[s.id]?.status === "pending" && (steps[s.id]?.attempts ?? 0) > 0);
  const ordered = retried.length === 0 ? plan.steps : [...retried, ...plan.steps.filter((s) => !retried.includes(s))];
  const ready: Step[] = [];
  for (const step of ordered) {
    const run = steps[step.id];
    if (run && run.status !== "pending") continue;
    const deps = (step.dependsOn ?? []).map((d) => [d, depState(steps[d])] as const);
    const skippedDep = deps.find(([, s]) => s === "skipped");
    if (skippedDep)
      return {
        kind: "skip",
        step,
        reason: "dependency_skipped",
        note: `depends on "${skippedDep[0]}", which was skipped`,
      };
    if (deps.some(([, s]) => s === "wait")) continue;
    const skip = whenSkip(step, trusted);
    if (skip) return skip;
    ready.push(step);
  }
  if (ready.length > 0) return { kind: "ready", steps: ready };
  const waiting = plan.steps.filter((s) => !isFinished(steps[s.id])).map((s) => s.id);
  if (waiting.length === 0) return { kind: "done" };
  if (waiting.some((id) => steps[id]?.status === "running")) return { kind: "ready", steps: [] };
  return { kind: "blocked", waiting };
}

function whenSkip(step: Step, trusted: Readonly<Record<string, unknown>>): Readiness | undefined {
  if (!step.when) return undefined;
  const result = evaluate(step.when, "when", trusted);
  if (!result.ok)
    return {
      kind: "skip",
      step,
      reason: "when",
      note: `when ${JSON.stringify(step.when)} is false (${result.message})`,
    };
  if (result.value !== true)
    return { kind: "skip", step, reason: "when", note: `when ${JSON.stringify(step.when)} is false` };
  return undefined;
}

/**
 * What happens around a plan step's call in the middleware before the ladder's attempts, and after
 * (docs/decisions/0053-middleware-quality-freshness-watch.md): the assumption watchers due for the
 * step are called (`watch.ts`), then its inputs' age is checked (`freshness.ts`); either may answer
 * the call instead of running it. The facts a call observes are stamped with the run's clock, which
 * is what `freshFor` measures their age from.
 */
import type { Fact } from "../plan/schema/run.js";
import type { Step } from "../plan/schema/step.js";
import { freshnessBefore } from "./stale-inputs.js";
import type { CallEnv, ToolReply } from "./settle.js";
import { watchBefore } from "./watch.js";

export async function beforeStep(
  env: CallEnv,
  step: Step,
  call: { tool: string; args: Record<string, unknown> },
  run: () => Promise<ToolReply>,
): Promise<ToolReply> {
  const watched = await watchBefore(env, step, call);
  const answered = watched.drifted ?? freshnessBefore(env, step, call);
  const result = answered ?? observed(env, step, await run());
  if (watched.records.length === 0 && watched.decisions.length === 0) return result;
  // The watchers' decisions come first: they were taken before the call.
  const decisions = watched.drifted
    ? (result.update.decisions ?? [])
    : [...watched.decisions, ...(result.update.decisions ?? [])];
  return { ...result, update: { ...result.update, watches: watched.records, decisions } };
}

/** The facts the step's call produced, stamped with when they were observed (facts it only relabelled keep theirs). */
export function observed(env: CallEnv, step: Step, result: ToolReply): ToolReply {
  const facts = result.update.facts;
  if (!facts) return result;
  return { ...result, update: { ...result.update, facts: stamped(facts, env.at(), step.id) } };
}

/** `facts` with `observedAt` set to `at` on the trusted ones `producedBy` made that have none. */
export function stamped(facts: Record<string, Fact>, at: string, producedBy?: string): Record<string, Fact> {
  const out: Record<string, Fact> = {};
  for (const [key, fact] of Object.entries(facts)) {
    const fresh = fact.label === "trusted" && fact.observedAt === undefined;
    out[key] =
      fresh && (producedBy === undefined || fact.producedBy === producedBy) ? { ...fact, observedAt: at } : fact;
  }
  return out;
}

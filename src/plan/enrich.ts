/**
 * Deterministic enrichment: what a planner (often an LLM) omitted but the tool registry knows.
 * Only facts about the tools are added; policy defaults (retry) are resolved at run time so the
 * stored plan stays small.
 */
import type { PlanDraft } from "./schema/plan.js";
import type { Step } from "./schema/step.js";

export interface ToolMetadata {
  sideEffects?: string[];
  successSignal?: string;
}

export function enrichDraft(draft: PlanDraft, metadataOf: (tool: string) => ToolMetadata | undefined): PlanDraft {
  return {
    ...draft,
    steps: draft.steps.map((step) =>
      enrichStep(
        step,
        step.tool ? metadataOf(step.tool) : undefined,
        step.fallback ? metadataOf(step.fallback.tool) : undefined,
      ),
    ),
  };
}

/** The step with what its tools' metadata adds; the step itself when that adds nothing. */
function enrichStep(step: Step, meta: ToolMetadata | undefined, fallback: ToolMetadata | undefined): Step {
  let out = step;
  const edited = () => (out === step ? (out = { ...step }) : out);
  // The step's fallback runs in its place: its side effects are the step's too.
  const effects = [...(meta?.sideEffects ?? []), ...(fallback?.sideEffects ?? [])];
  // The registry's side effects are facts about the tool: a plan (untrusted) may add to them, never drop them.
  // Nor may it call such a tool `idempotent` and so drop its idempotency key (docs/decisions/0006-idempotency-keys-name-the-operation.md).
  if (effects.length > 0) {
    edited().sideEffects = [...new Set([...(out.sideEffects ?? []), ...effects])];
    out.idempotent = false;
  }
  if (out.sideEffects && out.sideEffects.length > 0 && out.idempotent === undefined) edited().idempotent = false;
  if (meta?.successSignal && out.successSignal === undefined) edited().successSignal = meta.successSignal;
  return out;
}

/** Whether enrichment added nothing to any step of `draft` (`enriched` is what it gave). */
export function enrichedNothing(draft: PlanDraft, enriched: PlanDraft): boolean {
  return enriched.steps.every((step, i) => step === draft.steps[i]);
}

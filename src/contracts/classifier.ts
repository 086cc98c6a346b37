/** What an optional fallback classifier (e.g. `llmClassifier`) implements. */
import type { Step } from "../plan/schema/step.js";
import type { Verdict } from "../policy/ladder/classify.js";
import type { Deviation } from "../policy/ladder/deviation.js";
import type { ModelTrace } from "./trace.js";
import type { UsageEntry } from "./usage.js";

/**
 * A fallback classifier's answer: a verdict, or why it could not give one (the model call failed —
 * auth, quota, retries spent — or its answer did not fit the schema). `usage` lists every model
 * call, failed attempts with an `errorId`; the classifier node adds `purpose` and `at`.
 */
export type FallbackAnswer =
  | { verdict: Partial<Verdict> & Pick<Verdict, "action" | "failureClass" | "reason">; usage?: FallbackUsage[] }
  | { failure: { message: string; errorId?: string }; usage?: FallbackUsage[] };

/** One model call as a classifier reports it. */
export type FallbackUsage = Omit<UsageEntry, "purpose" | "at">;

/**
 * Consulted only for failures the rules call `unknown` (see `llmClassifier`). A call that throws,
 * or runs past `policy.plannerTimeoutMs` (then `signal` aborts), leaves the rule's verdict standing.
 */
export interface FallbackClassifier {
  classify(
    input: {
      deviation: Deviation;
      step?: Step;
      allowed: readonly Verdict["action"][];
      signal?: AbortSignal;
    } /** The run's callbacks, metadata and tags: pass them on to model calls, so a tracer sees them. */,
    trace?: ModelTrace,
  ): Promise<FallbackAnswer | undefined>;
}

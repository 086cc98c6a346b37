/** What an optional fallback classifier (e.g. `llmClassifier`) implements. */
import type { Step } from "../plan/schema.js";
import type { Verdict } from "../policy/classify.js";
import type { Deviation } from "../policy/deviation.js";

/** Consulted only for failures the rules call `unknown` (see `llmClassifier`). */
export interface FallbackClassifier {
  classify(input: { deviation: Deviation; step?: Step; allowed: readonly Verdict["action"][] }): Promise<{ verdict: Partial<Verdict> & Pick<Verdict, "action" | "failureClass" | "reason">; usage?: { model?: string; inputTokens: number; outputTokens: number; latencyMs: number; cost: number } } | undefined>;
}

/** Token and cost accounting for model calls (filled by LLM planners and classifiers, kept in `state.usage`). */
export interface UsageEntry {
  purpose: "plan" | "replan" | "extend" | "classify";
  model?: string;
  inputTokens: number;
  outputTokens: number;
  latencyMs: number;
  cost: number;
  at: string;
  /** Set when the call failed: an id to find the error in logs. */
  errorId?: string;
}

/** What the capability guard works with: what earlier plan versions did, and a finding (the tools a replan may introduce are a policy option, `ReplanTools`). */
export interface CapabilityFinding {
  /** `new_tool`: a tool no earlier version used; `untrusted_input` / `untrusted_argument`: data from after the plan. */
  kind: "new_tool" | "untrusted_input" | "untrusted_argument";
  stepId: string;
  tool: string;
  /** The tool's declared side effects (registry and step), empty for a read-only tool. */
  sideEffects: string[];
  /** One line a reviewer reads: what would change. */
  detail: string;
}

/** What earlier plan versions of the run already did: their tools, and per tool the inputs it read. */
export interface CapabilityBaseline {
  /** Tools and agents (`agent:NAME`) earlier versions used. */
  tools: ReadonlySet<string>;
  inputs: ReadonlyMap<string, ReadonlySet<string>>;
  /** Argument values of earlier versions and trusted text (goal, input facts): not evidence of taint. */
  known: readonly string[];
  /**
   * Whether a value occurs in some text of `known`, answered from an index so the list is never
   * built (docs/decisions/0058-incremental-taint-index.md). Default: `known` scanned.
   */
  knows?: (value: string) => boolean;
}

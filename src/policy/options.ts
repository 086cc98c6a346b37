/**
 * Policy options: the guardrails and defaults of the response ladder. Validated where they
 * enter (`createPlanManager`); every error names the field.
 */
import { z } from "zod";
import { PlanManagerError } from "../errors.js";
import { nearest } from "../plan/nearest.js";
import { DEFAULT_RETRY, retryPolicyProblem } from "../plan/retry.js";
import { LIMITS } from "../plan/schema/primitives.js";
import { AssumptionSchema } from "../plan/schema/plan.js";
import { RetryPolicySchema, StepSchema, type RetryPolicy } from "../plan/schema/step.js";

/** Which tools a replan may introduce without a person: `"read-only"` (default), `"any"`, or exactly these. */
export type ReplanTools = "read-only" | "any" | readonly string[];

export type ReplanMemoryMode = "reuse" | "hint" | "off";

/** A replacement given up front for a broken assumption (`replanTemplates`), kept as a memory entry. */
export const ReplanTemplateSchema = z
  .object({
    assumption: z.string().min(1).max(LIMITS.maxIdLength),
    steps: z.array(StepSchema).min(1).max(LIMITS.maxSteps),
    assumptions: z.array(AssumptionSchema).max(LIMITS.maxAssumptions).optional(),
  })
  .strict();
/** A replan memory entry given up front: the steps that replace a broken assumption's branch. */
export type ReplanTemplate = z.infer<typeof ReplanTemplateSchema>;

export const PolicyOptionsSchema = z
  .object({
    /** Replans allowed per run before escalating to a person. Default 3. */
    maxReplans: z.number().int().min(0).max(100).optional(),
    /** Steps that must succeed between two replans triggered by the same assumption. Default 1. */
    replanCooldownSteps: z.number().int().min(0).max(100).optional(),
    /** How many steps back a replan may reach to re-validate completed work. Default 3. */
    maxBacktrackDepth: z.number().int().min(0).max(100).optional(),
    /** How often one completed step may be re-run by backtracking before escalating. Default 2. */
    maxBacktracksPerStep: z.number().int().min(0).max(100).optional(),
    /**
     * How often an invalid replan draft goes back to the planner with its typed issues
     * (`ReplanRequest.issues`) before `replan.invalid-draft` escalates. Default 1; 0 escalates at once.
     */
    replanDraftRetries: z.number().int().min(0).max(10).optional(),
    /** Hard bound on decisions per run; reaching it escalates. Default 100. */
    maxDecisions: z.number().int().min(1).max(10_000).optional(),
    /**
     * Inside createAgent: how often the model may call one step of a plan version that cannot run
     * (not ready, failed, resting on a false assumption) before a person is asked
     * (`guard.refused-calls`). Default 5.
     */
    maxRefusedCalls: z.number().int().min(1).max(1_000).optional(),
    budget: z
      .object({
        /** Execution budget: a step whose cost would exceed it is not started. Default: none. */
        maxCost: z.number().min(0).finite().optional(),
        /** Planning budget for replans, separate from execution. Default: none. */
        maxReplanCost: z.number().min(0).finite().optional(),
      })
      .strict()
      .optional(),
    /** Timeout of steps that do not set `timeoutMs`, so a hanging tool cannot stall a run. Default 300,000 (5 min). */
    defaultTimeoutMs: z.number().int().positive().max(86_400_000).optional(),
    /**
     * How long one planner call (`plan`, `replan`, `extend`) or LLM-classifier call may take. Past
     * it the call's `signal` is aborted and it counts as a planner failure: the first plan fails
     * the run, a replan or extension escalates (`replan.planner-error`), and the rule's verdict
     * stands for the classifier. Default 120,000 (2 min); at most a day.
     */
    plannerTimeoutMs: z.number().int().positive().max(86_400_000).optional(),
    /** Extensions of a rolling-horizon plan (`Planner.extend`) per run before escalating. Default 20. */
    maxExtensions: z.number().int().min(0).max(1_000).optional(),
    /** A step still running at this many times its `estimateMs` is reported as stalled. Default 2. */
    stallFactor: z.number().min(1).max(1_000).optional(),
    /**
     * Steps that may run at the same time (docs/architecture.md "Parallel steps"). Default 4; 1 runs one step at a
     * time.
     */
    maxConcurrency: z.number().int().min(1).max(64).optional(),
    /** Retry policy of steps that do not set their own. */
    defaultRetry: RetryPolicySchema.partial().optional(),
    /**
     * An agent step's retry after a wrong answer carries its previous answer and why it failed
     * (rule `agent.retry-with-feedback`). Default true; false retries blind (for comparison).
     */
    agentFeedback: z.boolean().optional(),
    /**
     * Tools a replan may introduce without a person's approval (docs/architecture.md "Untrusted facts"):
     * "read-only" (default: any tool without declared side effects), "any", or exactly the tools listed.
     */
    replanTools: z
      .union([z.literal("read-only"), z.literal("any"), z.array(z.string().min(1)).max(1000)], {
        error: 'expected "read-only", "any" or an array of tool names',
      })
      .optional(),
    /**
     * Run endings that undo the run's committed side effects with their steps' `compensate` tools, in
     * reverse commit order (docs/decisions/0039-compensation.md). Default `["aborted"]`.
     */
    compensateOn: z
      .array(z.enum(["aborted", "failed"]))
      .max(2)
      .optional(),
    /**
     * The plan quality gate (docs/decisions/0040-plan-quality-gate.md): checks every plan version before
     * its first step. `false` turns it off (no checks, no reviewer). Default `{ hold: "high", maxSpan: 100 }`.
     */
    quality: z
      .union(
        [
          z.literal(false),
          z
            .object({
              /**
               * Findings at or above this severity hold the version for a person (`plan_review`); `"never"`
               * records them only. Default `"high"`.
               */
              hold: z.enum(["low", "medium", "high", "never"]).optional(),
              /** The widest `estimate.high / estimate.low` an assumption may carry. Default 100. */
              maxSpan: z.number().finite().min(1).max(1e12).optional(),
            })
            .strict(),
        ],
        { error: "expected false or { hold?, maxSpan? }" },
      )
      .optional(),
  })
  .strict();

/**
 * The `policy` option: guardrails, retry defaults, budget, concurrency and timeouts
 * (docs/guides/configuration.md).
 */
export type PolicyOptions = z.infer<typeof PolicyOptionsSchema>;

/** The keys the policy schema takes at `path` (`[]`: its top level; `["budget"]`: the budget's). */
function keysAt(path: readonly PropertyKey[]): string[] {
  let schema: unknown = PolicyOptionsSchema;
  for (const part of path) {
    while (schema instanceof z.ZodOptional) schema = schema.unwrap();
    schema = schema instanceof z.ZodObject ? (schema.shape as Record<string, unknown>)[String(part)] : undefined;
  }
  while (schema instanceof z.ZodOptional) schema = schema.unwrap();
  return schema instanceof z.ZodObject ? Object.keys(schema.shape) : [];
}

/** `policy` with every default filled in. */
export interface ResolvedPolicy {
  maxReplans: number;
  replanCooldownSteps: number;
  maxBacktrackDepth: number;
  maxBacktracksPerStep: number;
  replanDraftRetries: number;
  maxDecisions: number;
  maxRefusedCalls: number;
  maxExtensions: number;
  stallFactor: number;
  maxConcurrency: number;
  defaultTimeoutMs: number;
  plannerTimeoutMs: number;
  budget: { maxCost?: number; maxReplanCost?: number };
  defaultRetry: RetryPolicy;
  replanTools: ReplanTools;
  agentFeedback: boolean;
  /** Set only when given: runs that never set it resolve as before; `compensatesOn` reads the default. */
  compensateOn?: readonly ("aborted" | "failed")[];
  /** Set only when given (`policy.quality`); `qualityPolicy` (policy/quality/findings.ts) reads the defaults. */
  quality?: false | { hold?: "low" | "medium" | "high" | "never"; maxSpan?: number };
}

/** `policy.quality` is `false` or an object: an error inside the object names its field, not the union. */
function namedIssue(issue: z.core.$ZodIssue): z.core.$ZodIssue {
  if (issue.code !== "invalid_union" || issue.path[0] !== "quality") return issue;
  const inner = issue.errors.flat().find((i) => i.path.length > 0);
  return inner ? { ...inner, path: [...issue.path, ...inner.path] } : issue;
}

/** `policy` with its defaults filled in; throws `invalid_options` naming the field at fault. */
export function resolvePolicy(options: unknown = {}): ResolvedPolicy {
  const parsed = PolicyOptionsSchema.safeParse(options ?? {});
  if (!parsed.success) {
    const issue = namedIssue(parsed.error.issues[0]!);
    const where = ["policy", ...issue.path.map(String)].join(".");
    if (issue.code === "unrecognized_keys") {
      // A typo must not be taken for a default: the nearest known key is named, as for createPlanManager.
      const key = issue.keys[0]!;
      const near = nearest(key, keysAt(issue.path));
      const hint = near === undefined ? "" : `; did you mean ${JSON.stringify(near)}?`;
      const path = `${where}.${key}`;
      throw new PlanManagerError("invalid_options", `${where}: ${issue.message}${hint}`, {
        path,
        issues: parsed.error.issues,
      });
    }
    throw new PlanManagerError("invalid_options", `${where}: ${issue.message}`, {
      path: where,
      issues: parsed.error.issues,
    });
  }
  const o = parsed.data;
  const defaultRetry = { ...DEFAULT_RETRY, ...o.defaultRetry };
  const problem = retryPolicyProblem(defaultRetry);
  if (problem) {
    throw new PlanManagerError("invalid_options", `policy.defaultRetry: ${problem}`, { path: "policy.defaultRetry" });
  }
  return {
    maxReplans: o.maxReplans ?? 3,
    replanCooldownSteps: o.replanCooldownSteps ?? 1,
    maxBacktrackDepth: o.maxBacktrackDepth ?? 3,
    maxBacktracksPerStep: o.maxBacktracksPerStep ?? 2,
    replanDraftRetries: o.replanDraftRetries ?? 1,
    maxDecisions: o.maxDecisions ?? 100,
    maxRefusedCalls: o.maxRefusedCalls ?? 5,
    maxExtensions: o.maxExtensions ?? 20,
    stallFactor: o.stallFactor ?? 2,
    maxConcurrency: o.maxConcurrency ?? 4,
    defaultTimeoutMs: o.defaultTimeoutMs ?? 300_000,
    plannerTimeoutMs: o.plannerTimeoutMs ?? 120_000,
    budget: { ...o.budget },
    defaultRetry,
    replanTools: o.replanTools ?? "read-only",
    agentFeedback: o.agentFeedback ?? true,
    ...(o.compensateOn !== undefined ? { compensateOn: o.compensateOn } : {}),
    ...(o.quality !== undefined ? { quality: o.quality } : {}),
  };
}

export const ReplanMemoryOptionsSchema = z
  .object({
    /** `reuse`: apply a remembered replacement without the planner; `hint`: show it to the planner; `off`. */
    mode: z.enum(["reuse", "hint", "off"]),
    /** Store namespace of the entries. Default `["langgraph-replan", "replan-memory"]`. */
    namespace: z.array(z.string().min(1).max(200)).min(1).max(10).optional(),
  })
  .strict();
/** The `replanMemory` option: `reuse`, `hint` or `off`, and the store namespace. */
export type ReplanMemoryOptions = z.infer<typeof ReplanMemoryOptionsSchema>;

export interface ResolvedReplanMemory {
  mode: ReplanMemoryMode;
  namespace: string[];
  templates: ReplanTemplate[];
}

/** The store namespace replan memory uses unless told another. */
export const DEFAULT_MEMORY_NAMESPACE: readonly string[] = Object.freeze(["langgraph-replan", "replan-memory"]);

/** `replanMemory` and `replanTemplates` of `createPlanManager`; templates alone turn memory on in `reuse` mode. */
export function resolveReplanMemory(memory: unknown, templates: unknown): ResolvedReplanMemory {
  const parsed = ReplanMemoryOptionsSchema.optional().safeParse(memory);
  if (!parsed.success) throw optionError("replanMemory", parsed.error.issues);
  const list = z.array(ReplanTemplateSchema).max(LIMITS.maxAssumptions).optional().safeParse(templates);
  if (!list.success) throw optionError("replanTemplates", list.error.issues);
  const seen = new Set<string>();
  for (const [i, t] of (list.data ?? []).entries()) {
    if (seen.has(t.assumption))
      throw new PlanManagerError("invalid_options", `replanTemplates[${i}]: a second template for "${t.assumption}"`, {
        path: `replanTemplates[${i}].assumption`,
      });
    seen.add(t.assumption);
  }
  const mode = parsed.data?.mode ?? (list.data?.length ? "reuse" : "off");
  return { mode, namespace: parsed.data?.namespace ?? [...DEFAULT_MEMORY_NAMESPACE], templates: list.data ?? [] };
}

function optionError(field: string, issues: z.core.$ZodIssue[]) {
  const issue = issues[0]!;
  const path = [field, ...issue.path.map(String)].join(".");
  return new PlanManagerError("invalid_options", `${path}: ${issue.message}`, { path, issues });
}

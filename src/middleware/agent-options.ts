/** `planMiddleware` options: documented with their defaults, validated where they enter. */
import type { ToolCallRequest } from "langchain";
import { z } from "zod";
import { PlanManagerError } from "../errors.js";
import { resolvePolicy, type PolicyOptions, type ResolvedPolicy } from "../policy/options.js";
import type { Clock } from "../runtime/clock.js";

/** Options of `planMiddleware`. */
export interface PlanMiddlewareOptions {
  /** The ladder's guardrails and retry defaults, as for `createPlanManager`. Default: the library's. */
  policy?: PolicyOptions;
  /** `true`: a person reviews the first plan, and any revision that adds a side-effecting tool. Default false. */
  reviewPlan?: boolean;
  /**
   * Tools with side effects: a step calling one (as its tool or its fallback) is marked side-effecting
   * and not idempotent, as a tool's `metadata.sideEffects` marks it in the graph; its calls get an
   * idempotency key (`config.configurable.idempotencyKey`), a committed call is recorded in
   * `sideEffects` and never runs again, and a revision that adds one waits for a person. Default [].
   */
  sideEffectTools?: readonly string[];
  /**
   * Side-effecting calls go through the effect journal of the agent's checkpointer
   * (docs/decisions/0043-effects-in-the-middleware.md). `honoursKeys`: tools that do an operation
   * once per idempotency key, called again under the same key when a call's outcome is unknown (a
   * step may say so itself with `honoursIdempotencyKey`). Other tools are settled by the step's
   * `verify` probe, or a person is asked (`effect.in-doubt`). Default: no tool honours keys.
   */
  effects?: { honoursKeys?: readonly string[] };
  /**
   * The agent's tools, checked against the plan's steps: names, or the tools themselves. A tool given
   * itself can be called under an idempotency key before the model's first call in a process: a
   * `verify` probe or a fallback when a restarted process takes a call in doubt up
   * (`agent.invoke(null)`). Without it, such a probe is not run (it could not get the key) and a
   * person is asked. Default: the tools the model is offered (read from each model call).
   */
  tools?: readonly (string | AgentTool)[];
  /**
   * Waits before a retry (a step's call or an undo's): the clock the middleware hands the attempt
   * driver and the undo runner. `signal` is the run's stop (`config.signal`), which ends the wait early.
   * Default: a timer that ends at the stop; tests pass one that records the delay and returns at once.
   */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /**
   * The clock for records' timestamps, for when a fact was observed (what a step's `freshFor` measures)
   * and for an assumption watch's `everyMs`. Default `Date.now`.
   */
  now?: () => number;
}

/** A tool of the agent, as LangChain hands it to a middleware. */
export type AgentTool = NonNullable<ToolCallRequest["tool"]>;

export interface ResolvedAgentOptions {
  policy: ResolvedPolicy;
  reviewPlan: boolean;
  sideEffectTools: ReadonlySet<string>;
  honoursKeys: ReadonlySet<string>;
  tools: readonly string[];
  /** The tools given themselves in `tools`, by name. */
  instances: ReadonlyMap<string, AgentTool>;
  /** The clock the one attempt driver and the undo runner sleep their backoffs on: the `sleep` option. */
  clock: Pick<Clock, "sleep">;
  now: () => number;
}

const OptionsSchema = z
  .object({
    policy: z.unknown().optional(),
    reviewPlan: z.boolean().optional(),
    sideEffectTools: z.array(z.string().min(1)).max(1000).optional(),
    effects: z
      .object({ honoursKeys: z.array(z.string().min(1)).max(1000).optional() })
      .strict()
      .optional(),
    tools: z
      .array(
        z.union([
          z.string().min(1),
          z.custom<AgentTool>(
            (t) => typeof t === "object" && t !== null && typeof (t as { name?: unknown }).name === "string",
            "a tool: an object with a name",
          ),
        ]),
      )
      .max(1000)
      .optional(),
    sleep: z.function().optional(),
    now: z.function().optional(),
  })
  .strict();

/** A tool's name (checked to be a string where the options enter). */
const nameOf = (t: string | AgentTool): string => (typeof t === "string" ? t : String(t.name));

/** A timer that ends early when `signal` aborts (the run was stopped during a retry's backoff). */
const timer = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timeout);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timeout = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });

export function resolveAgentOptions(options: PlanMiddlewareOptions = {}): ResolvedAgentOptions {
  const parsed = OptionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const path = issue.path.map(String).join(".") || "options";
    throw new PlanManagerError("invalid_options", `planMiddleware ${path}: ${issue.message}`, {
      path,
      issues: parsed.error.issues,
    });
  }
  const given = options.tools ?? [];
  return {
    policy: resolvePolicy(options.policy),
    reviewPlan: options.reviewPlan ?? false,
    sideEffectTools: new Set(options.sideEffectTools ?? []),
    honoursKeys: new Set(options.effects?.honoursKeys ?? []),
    tools: given.map(nameOf),
    instances: new Map(given.flatMap((t): [string, AgentTool][] => (typeof t === "string" ? [] : [[nameOf(t), t]]))),
    clock: { sleep: options.sleep ?? timer },
    now: options.now ?? Date.now,
  };
}

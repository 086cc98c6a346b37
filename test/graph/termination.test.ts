/**
 * Property: whatever the tools and the planner do, a run ends — completed, failed, aborted or
 * awaiting a human — within the documented bounds (README "Termination bounds").
 */
import { Command } from "@langchain/langgraph";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  AssumptionBrokenError,
  PermanentError,
  TransientError,
  type PlanDraft,
  type Planner,
} from "../../src/index.js";
import { harness, httpError, scriptedTool } from "../helpers/graph.js";

const behaviours = [
  "ok",
  "transient",
  "http503",
  "permanent",
  "http404",
  "broken",
  "garbage",
  "hang",
  "unknown",
] as const;
type Behaviour = (typeof behaviours)[number];

function act(b: Behaviour, assumption: string): unknown {
  switch (b) {
    case "ok":
      return { ok: true, v: 1 };
    case "transient":
      return new TransientError("flaky");
    case "http503":
      return httpError(503);
    case "permanent":
      return new PermanentError("nope");
    case "http404":
      return httpError(404);
    case "broken":
      return new AssumptionBrokenError(assumption, "evidence against it");
    case "garbage":
      return { ok: "yes?" };
    case "hang":
      return () => new Promise(() => undefined);
    case "unknown":
      return new Error("???");
  }
}

const planArb = fc.integer({ min: 1, max: 6 }).chain((n) =>
  fc.record({
    deps: fc.array(fc.array(fc.nat(), { maxLength: 2 }), { minLength: n, maxLength: n }),
    rests: fc.array(fc.subarray(["a1", "a2", "a3"], { maxLength: 2 }), { minLength: n, maxLength: n }),
    optional: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
    fallback: fc.array(fc.boolean(), { minLength: n, maxLength: n }),
  }),
);

function buildPlan(
  shape: { deps: number[][]; rests: string[][]; optional: boolean[]; fallback: boolean[] },
  prefix = "s",
): PlanDraft {
  return {
    assumptions: [
      { id: "a1", statement: "one" },
      { id: "a2", statement: "two", check: "!has(facts.flip) || facts.flip == false" },
      { id: "a3", statement: "three" },
    ],
    steps: shape.deps.map((deps, i) => ({
      id: `${prefix}${i}`,
      goal: `Step ${i}`,
      tool: "work",
      args: { step: i },
      dependsOn: [...new Set(deps.filter((d) => d < i).map((d) => `${prefix}${d}`))],
      assumptions: shape.rests[i],
      successSignal: "output.ok == true",
      timeoutMs: 5,
      retry: { maxAttempts: 2, backoff: "exponential", initialDelayMs: 10, maxDelayMs: 100 },
      ...(shape.optional[i] ? { optional: true } : {}),
      ...(shape.fallback[i] ? { fallback: { tool: "work", args: { fallback: true } } } : {}),
    })),
  };
}

const plannerKinds = ["none", "same", "oscillate", "invalid", "throws", "fresh"] as const;

function makePlanner(kind: (typeof plannerKinds)[number], plan: PlanDraft): Planner {
  let n = 0;
  const base: Planner = { plan: async () => structuredClone(plan) };
  switch (kind) {
    case "none":
      return base;
    case "same":
      return { ...base, replan: async (r) => ({ steps: r.affectedSteps.map((s) => ({ ...s, assumptions: [] })) }) };
    case "oscillate":
      return {
        ...base,
        replan: async (r) => {
          n += 1;
          return {
            steps: r.affectedSteps.map((s) => ({
              ...s,
              id: `${s.id}_${n}`,
              assumptions: [],
              dependsOn: [],
              args: { variant: n % 2 },
            })),
          };
        },
      };
    case "invalid":
      return { ...base, replan: async () => ({ steps: [{ id: "x", goal: "x", tool: "rm -rf /" }] }) };
    case "throws":
      return { ...base, replan: async () => Promise.reject(new Error("planner down")) };
    case "fresh":
      return {
        ...base,
        replan: async (r) => {
          n += 1;
          return {
            steps: [
              { id: `fresh_${n}`, goal: "Fresh", tool: "work", args: { fresh: n }, successSignal: "output.ok == true" },
            ].concat(r.scope === "global" ? [] : []),
          };
        },
      };
  }
}

describe("termination under adversarial tools and planners", () => {
  it("every run ends within the documented bounds", async () => {
    await fc.assert(
      fc.asyncProperty(
        planArb,
        fc.array(fc.constantFrom(...behaviours), { minLength: 1, maxLength: 40 }),
        fc.constantFrom(...plannerKinds),
        async (shape, script, kind) => {
          const plan = buildPlan(shape);
          const calls = { n: 0 };
          const work = scriptedTool("work", [
            () => {
              const b = script[calls.n % script.length]!;
              calls.n += 1;
              const r = act(b, "a1");
              if (r instanceof Error) throw r;
              return typeof r === "function" ? (r as () => unknown)() : r;
            },
          ]);
          const h = harness(makePlanner(kind, plan), [work], {
            policy: { maxReplans: 3, maxDecisions: 60, defaultTimeoutMs: 20 },
          });
          const out = await h.run();
          const ended = ["completed", "failed", "aborted", "awaiting_human"].includes(out.status);
          expect(ended).toBe(true);
          expect(out.guards.count).toBeLessThanOrEqual(3);
          expect(out.decisions.length).toBeLessThanOrEqual(60 + 2);
          // Attempts: per step and plan version at most 2 × maxAttempts (fallback), plus re-runs by backtracking.
          const versions = out.plan ? out.plan.version : 1;
          expect(calls.n).toBeLessThanOrEqual(versions * 6 * 2 * 2 + 2 * 6 + 6);
          const pausedKind = out.status === "awaiting_human" ? out.__interrupt__?.[0]?.value.kind : "escalation";
          expect(["escalation", "human_step"]).toContain(pausedKind);
          // People answering "retry" or "skip" again and again still get a run that ends each time.
          let last = out;
          for (const action of ["retry", "skip", "retry"]) {
            if (last.status !== "awaiting_human") break;
            last = await h.run(new Command({ resume: { action } }));
            expect(["completed", "partial", "failed", "aborted", "awaiting_human"]).toContain(last.status);
          }
        },
      ),
      { numRuns: 120, seed: 20261122, timeout: 10_000 },
    );
  }, 120_000);
});

/**
 * Fuzzed plans (fast-check): 10,000 random drafts, valid and invalid. The validator returns a
 * result and never throws, rejects every broken draft with typed issues, accepts every valid
 * plan the generator builds, and no tool ever runs on an invalid plan.
 */
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type PlanDraft, type PlanIssueCode } from "../../src/index.js";
import { DEFAULT_RETRY, validatePlan } from "../../src/policy/index.js";
import { harness, scriptedTool } from "../helpers/graph.js";

const TOOLS = ["search", "fetch", "write", "notify"];
const ctx = { tools: new Set(TOOLS), policy: { defaultRetry: DEFAULT_RETRY } };
const FACT_KEYS = ["customer_id", "score", "region", "total", "flag"];
const GOOD_CEL = [
  "facts.score > 1",
  'facts.region == "EU"',
  "has(facts.flag)",
  "facts.total + 1 >= 2.5",
  "size(facts.customer_id) > 0",
  "facts.score * 2 < 100 && facts.flag",
];
const GOOD_SIGNALS = ["output.ok == true", "output.count >= 0", 'output.status in ["done", "ok"]'];
const BAD_CEL = [
  "facts.score >",
  "nope(",
  "output.x == 1",
  "size(facts) > 1",
  "facts[facts.k]",
  "process.exit(1)",
  "1 +",
  ")",
  "x.y.z",
  "a".repeat(1_500),
];
const RESERVED = ["__proto__", "constructor", "prototype", "toString", "hasOwnProperty"];

const validStep = (i: number) =>
  fc
    .record({
      id: fc.constant(`s${i}`),
      goal: fc.string({ minLength: 1, maxLength: 40 }),
      tool: fc.constantFrom(...TOOLS),
      args: fc.option(fc.dictionary(fc.constantFrom("q", "limit", "mode"), fc.jsonValue({ maxDepth: 3 })), {
        nil: undefined,
      }),
      dependsOn:
        i === 0
          ? fc.constant(undefined)
          : fc.option(
              fc.uniqueArray(
                fc.integer({ min: 0, max: i - 1 }).map((d) => `s${d}`),
                { maxLength: 3 },
              ),
              { nil: undefined },
            ),
      inputs: fc.option(fc.uniqueArray(fc.constantFrom(...FACT_KEYS), { maxLength: 2 }), { nil: undefined }),
      produces: fc.option(fc.uniqueArray(fc.constantFrom(...FACT_KEYS), { maxLength: 2 }), { nil: undefined }),
      preconditions: fc.option(fc.array(fc.constantFrom(...GOOD_CEL), { maxLength: 2 }), { nil: undefined }),
      successSignal: fc.option(fc.constantFrom(...GOOD_SIGNALS), { nil: undefined }),
      when: fc.option(fc.constantFrom(...GOOD_CEL), { nil: undefined }),
      retry: fc.option(
        fc
          .record({
            maxAttempts: fc.integer({ min: 1, max: 5 }),
            backoff: fc.constantFrom("none", "fixed", "exponential"),
            initialDelayMs: fc.integer({ min: 0, max: 1000 }),
          })
          .map((r) => ({ ...r, maxDelayMs: r.initialDelayMs + 1000 })),
        { nil: undefined },
      ),
      fallback: fc.option(fc.record({ tool: fc.constantFrom(...TOOLS) }), { nil: undefined }),
      timeoutMs: fc.option(fc.integer({ min: 1, max: 60_000 }), { nil: undefined }),
      cost: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
      optional: fc.option(fc.boolean(), { nil: undefined }),
      assumptions: fc.option(fc.subarray(["a1", "a2"]), { nil: undefined }),
    })
    .map(
      (s) =>
        Object.fromEntries(Object.entries(s).filter(([, v]) => v !== undefined)) as PlanDraft["steps"][number] & {
          n?: number;
        },
    );

const validPlan = fc.integer({ min: 1, max: 12 }).chain((n) =>
  fc.tuple(...Array.from({ length: n }, (_, i) => validStep(i))).map((steps): PlanDraft => ({
    steps,
    assumptions: [
      { id: "a1", statement: "one", check: "facts.score > 0" },
      { id: "a2", statement: "two" },
    ],
  })),
);

type Mutation = { code: PlanIssueCode | "schema" | "too_large" | "any"; apply: (p: PlanDraft) => unknown };
const MUTATIONS: Mutation[] = [
  {
    code: "cycle",
    apply: (p) =>
      p.steps.length < 2
        ? {
            ...p,
            steps: [
              ...p.steps,
              { ...p.steps[0]!, id: "z", dependsOn: ["z2"] },
              { ...p.steps[0]!, id: "z2", dependsOn: ["z"] },
            ],
          }
        : {
            ...p,
            steps: p.steps.map((s, i) =>
              i === 0
                ? { ...s, dependsOn: [p.steps[p.steps.length - 1]!.id] }
                : i === p.steps.length - 1
                  ? { ...s, dependsOn: [...(s.dependsOn ?? []), p.steps[0]!.id] }
                  : s,
            ),
          },
  },
  {
    code: "dangling_dependency",
    apply: (p) => ({ ...p, steps: p.steps.map((s, i) => (i === 0 ? { ...s, dependsOn: ["ghost"] } : s)) }),
  },
  {
    code: "self_dependency",
    apply: (p) => ({ ...p, steps: p.steps.map((s, i) => (i === 0 ? { ...s, dependsOn: [s.id] } : s)) }),
  },
  { code: "duplicate_id", apply: (p) => ({ ...p, steps: [...p.steps, { ...p.steps[0]!, dependsOn: [] }] }) },
  {
    code: "unknown_tool",
    apply: (p) => ({ ...p, steps: p.steps.map((s, i) => (i === 0 ? { ...s, tool: "rm_rf" } : s)) }),
  },
  {
    code: "unknown_fallback_tool",
    apply: (p) => ({
      ...p,
      steps: p.steps.map((s, i) => (i === 0 ? { ...s, fallback: { tool: "curl_pipe_sh" } } : s)),
    }),
  },
  {
    code: "any",
    apply: (p) => ({
      ...p,
      steps: p.steps.map((s, i) =>
        i === 0 ? { ...s, preconditions: [BAD_CEL[p.steps.length % BAD_CEL.length]!] } : s,
      ),
    }),
  },
  {
    code: "invalid_retry",
    apply: (p) => ({
      ...p,
      steps: p.steps.map((s, i) =>
        i === 0
          ? { ...s, retry: { maxAttempts: 2, backoff: "fixed" as const, initialDelayMs: 500, maxDelayMs: 10 } }
          : s,
      ),
    }),
  },
  {
    code: "human_step_with_tool",
    apply: (p) => ({ ...p, steps: p.steps.map((s, i) => (i === 0 ? { ...s, human: { prompt: "ok?" } } : s)) }),
  },
  {
    code: "too_large",
    apply: (p) => ({ ...p, steps: p.steps.map((s, i) => (i === 0 ? { ...s, goal: "g".repeat(10_000) } : s)) }),
  },
  {
    code: "too_large",
    apply: (p) => ({
      ...p,
      steps: Array.from({ length: 250 }, (_, i) => ({ id: `x${i}`, goal: "g", tool: "search" })),
    }),
  },
  { code: "any", apply: (p) => ({ ...p, steps: p.steps.map((s, i) => (i === 0 ? { ...s, args: deep(600) } : s)) }) },
  {
    code: "any",
    apply: (p) => ({
      ...p,
      steps: p.steps.map((s, i) => (i === 0 ? { ...s, id: RESERVED[p.steps.length % RESERVED.length]! } : s)),
    }),
  },
  {
    code: "any",
    apply: (p) => ({
      ...p,
      steps: p.steps.map((s, i) => (i === 0 ? { ...s, produces: [RESERVED[p.steps.length % RESERVED.length]!] } : s)),
    }),
  },
  { code: "any", apply: (p) => JSON.parse(JSON.stringify(p).replace('"id":"s0"', '"id":"__proto__"')) },
  {
    code: "unknown_assumption",
    apply: (p) => ({
      ...p,
      steps: p.steps.map((s, i) => (i === 0 ? { ...s, assumptions: ["nobody_declared_this"] } : s)),
    }),
  },
  { code: "schema", apply: () => ({ steps: "all of them" }) },
  { code: "schema", apply: () => null },
  { code: "schema", apply: (p) => ({ ...p, steps: p.steps.map((s, i) => (i === 0 ? { ...s, timeoutMs: -1 } : s)) }) },
];

function deep(depth: number): Record<string, unknown> {
  let v: Record<string, unknown> = { leaf: true };
  for (let i = 0; i < depth; i++) v = { nested: v };
  return v;
}

describe("fuzzed plans", () => {
  it("10,000 drafts: valid ones accepted, broken ones rejected with typed issues, nothing thrown", () => {
    const samples = fc.sample(
      fc.tuple(validPlan, fc.option(fc.integer({ min: 0, max: MUTATIONS.length - 1 }), { freq: 2, nil: undefined })),
      { numRuns: 10_000, seed: 42 },
    );
    const problems: string[] = [];
    let valid = 0;
    let invalid = 0;
    for (const [plan, m] of samples) {
      const draft = m === undefined ? plan : MUTATIONS[m]!.apply(plan);
      let result: ReturnType<typeof validatePlan>;
      try {
        result = validatePlan(draft, ctx);
      } catch (error) {
        problems.push(`threw ${String(error)}`);
        continue;
      }
      if (m === undefined) {
        valid += 1;
        if (!result.ok) problems.push(`valid plan rejected: ${result.issues.map((i) => i.message).join("; ")}`);
        continue;
      }
      invalid += 1;
      if (result.ok) {
        problems.push(`mutation ${m} accepted`);
        continue;
      }
      const malformed = result.issues.filter(
        (i) => typeof i.code !== "string" || !Array.isArray(i.path) || i.message.length === 0,
      );
      if (result.issues.length === 0 || malformed.length > 0) problems.push(`mutation ${m}: untyped issues`);
      const code = MUTATIONS[m]!.code;
      if (code !== "any" && !result.issues.some((i) => i.code === code))
        problems.push(`mutation ${m}: expected ${code}, got ${result.issues.map((i) => i.code).join(",")}`);
    }
    expect(problems.slice(0, 5)).toEqual([]);
    expect(valid + invalid).toBe(10_000);
    expect(valid).toBeGreaterThan(2_000);
    expect(invalid).toBeGreaterThan(4_000);
  }, 120_000);

  it("no tool runs on an invalid plan (200 broken drafts through the graph)", async () => {
    const tools = TOOLS.map((t) => scriptedTool(t, [{ ok: true }]));
    const drafts = fc.sample(fc.tuple(validPlan, fc.integer({ min: 0, max: MUTATIONS.length - 1 })), {
      numRuns: 200,
      seed: 7,
    });
    for (const [plan, m] of drafts) {
      const out = await harness(MUTATIONS[m]!.apply(plan) as PlanDraft, tools).run();
      expect(out.status).toBe("failed");
    }
    expect(tools.reduce((s, t) => s + t.calls.length, 0)).toBe(0);
  }, 120_000);
});

/**
 * The replan decision (src/policy/replan/replan-step.ts) is pure: plain inputs in — the frame, what
 * replan memory held, the planner's answers so far — and out what to gather next, or the outcome
 * with the store writes to make. No store, planner or clock takes part.
 */
import { describe, expect, it } from "vitest";
import type { Plan } from "../../src/plan/schema/plan.js";
import type { Step } from "../../src/plan/schema/step.js";
import type { Decision } from "../../src/policy/ladder/decision.js";
import { resolvePolicy } from "../../src/policy/options.js";
import { decideReplan, type ReplanInput } from "../../src/policy/replan/replan-step.js";
import type { DraftRules, ReplanFrame } from "../../src/policy/replan/draft.js";
import { memoryKey, templateEntry } from "../../src/policy/memory/memory.js";

const AT = "2026-01-01T00:00:10.000Z";
const step = (id: string, tool: string, more: Partial<Step> = {}): Step => ({ id, goal: `do ${id}`, tool, ...more });
const plan: Plan = {
  version: 1,
  steps: [
    step("a", "fetch"),
    step("b", "fetch", { assumptions: ["A"], dependsOn: ["a"], produces: ["x"] }),
    step("c", "send", { inputs: ["x"], dependsOn: ["b"] }),
  ],
  assumptions: [{ id: "A", statement: "the source is up" }],
};
const trigger: Decision = {
  seq: 1,
  stepId: "b",
  attempt: 1,
  failureClass: "assumption_broken",
  action: "replan_local",
  rule: "assumption.replan-local",
  reason: "the source is down",
  planVersion: 1,
  at: "2026-01-01T00:00:05.000Z",
  brokenAssumption: "A",
};
const frame: ReplanFrame = {
  plan,
  steps: { a: { status: "succeeded", attempts: 1 }, b: { status: "failed", attempts: 1 } },
  facts: {},
  decisions: [trigger],
  scopeChanges: [],
  trigger,
  scope: "local",
  assumption: "A",
  affectedIds: ["b"],
  guards: {
    count: 1,
    falsified: ["A"],
    lastReplanAt: {},
    backtracks: {},
    fingerprints: [],
    successes: 1,
    tried: [],
    constraints: [],
  },
  falsification: { broken: ["A"], falsified: ["A"], labels: { facts: {}, trusted: [], suspect: [], invalidated: [] } },
  at: AT,
};
const rules: DraftRules = {
  tools: new Set(["fetch", "send", "mirror"]),
  agents: new Set(),
  policy: resolvePolicy(),
  toolArguments: new Map(),
  sideEffectTools: new Set(),
  canExtend: false,
  metadataOf: () => undefined,
};
/** A template whose step reads a fact no step produces: it fails validation here. */
const template = {
  ...templateEntry({ assumption: "A", steps: [step("m", "mirror", { inputs: ["missing_fact"] })] }, AT),
  uses: 2,
  successes: 2,
};
const input: ReplanInput = {
  frame,
  rules,
  memory: "reuse",
  answers: [],
  outcomeId: "T::1",
  review: () => undefined,
};

describe("decideReplan", () => {
  it("asks for replan memory, then the planner; decides with the failure count to write", () => {
    expect(decideReplan(input)).toEqual({ next: "read_memory", key: memoryKey("A", [plan.steps[1]!]) });
    const read = { found: [undefined, template] };
    expect(decideReplan({ ...input, read })).toEqual({ next: "ask_planner" });

    const answers = [{ draft: { steps: [step("b2", "mirror", { dependsOn: ["a"], produces: ["x"] })] } }];
    const decided = decideReplan({ ...input, read, answers });
    const reason =
      'entry A:template failed validation (- step "m" reads input "missing_fact", which neither the context nor ' +
      "any step produces); discarded, counted as a failure; planner asked";
    const b2 = answers[0]!.draft.steps[0]!;
    expect(decided).toEqual({
      next: "apply",
      charged: true,
      notes: [
        {
          seq: 2,
          stepId: "b",
          attempt: 1,
          failureClass: "assumption_broken",
          action: "replan_local",
          rule: "replan.memory",
          reason,
          planVersion: 1,
          at: AT,
          brokenAssumption: "A",
        },
      ],
      writes: [{ key: "A:template", revision: template.revision, outcome: "T::1:invalid", success: false }],
      outcome: {
        kind: "commit",
        proposal: {
          plan: { version: 2, steps: [plan.steps[0], b2, plan.steps[2]], assumptions: plan.assumptions },
          record: {
            trigger: "assumption.replan-local: the source is down",
            brokenAssumption: "A",
            scope: "local",
            fromVersion: 1,
            toVersion: 2,
            invalidatedSteps: ["b"],
            preservedSteps: ["a", "c"],
            newSteps: ["b2"],
            facts: { trusted: [], suspect: [], invalidated: [] },
            at: AT,
            source: "planner",
            memoryKey: memoryKey("A", [plan.steps[1]!]),
            memorySteps: ["b2"],
          },
          affected: ["b"],
          replacement: ["b2"],
          scopeChanges: [],
        },
        guards: {
          ...frame.guards,
          lastReplanAt: { A: 1 },
          fingerprints: ['A|[{"args":{},"deps":["a"],"fallback":null,"inputs":[],"tool":"mirror"}]'],
        },
      },
    });
  });

  it("is pure: the same inputs give the same decision, and nothing given is changed", () => {
    const read = { found: [undefined, template] };
    const answers = [{ draft: { steps: [step("b2", "mirror", { dependsOn: ["a"], produces: ["x"] })] } }];
    const given = structuredClone({ frame, read, answers });
    const once = decideReplan({ ...input, read, answers });
    expect(decideReplan({ ...input, read, answers })).toEqual(once);
    expect({ frame, read, answers }).toEqual(given);
  });

  it("a reused entry that a later guard stops is discarded: its failure is a write, and the planner is asked", () => {
    // The entry hands back step a, which already ran: re-running it is backtracking, which the policy forbids.
    const strict = { ...rules, policy: resolvePolicy({ maxBacktracksPerStep: 0 }) };
    const f = { ...frame, affectedIds: ["a", "b"] };
    const steps = [step("a", "fetch"), step("m", "mirror", { dependsOn: ["a"], produces: ["x"] })];
    const entry = { ...templateEntry({ assumption: "A", steps }, AT), kept: { a: 0 }, uses: 0, successes: 0 };
    const read = { found: [entry] };
    const at = { ...input, rules: strict, frame: f, read };
    expect(decideReplan(at)).toEqual({ next: "ask_planner" });
    const answers = [{ draft: { steps: [step("b2", "mirror", { produces: ["x"] })] } }];
    const reason =
      'entry A:template (0 of 0 uses succeeded) stopped by guard.max-backtracks (step "a" was already re-run 0 ' +
      "times by backtracking (policy.maxBacktracksPerStep = 0)); discarded, counted as a failure; planner asked";
    expect(decideReplan({ ...at, answers })).toMatchObject({
      next: "apply",
      notes: [{ seq: 2, rule: "replan.memory", reason }],
      writes: [{ key: "A:template", revision: entry.revision, outcome: "T::1:rejected", success: false }],
      outcome: { kind: "commit", proposal: { record: { source: "planner", newSteps: ["b2"] } } },
    });
  });

  it("a person's trigger is never answered from memory: the planner is asked at once", () => {
    const byPerson = {
      ...trigger,
      by: "person" as const,
      rule: "human.replan" as const,
      action: "replan_global" as const,
    };
    const f = { ...frame, trigger: byPerson, decisions: [byPerson], scope: "global" as const };
    expect(decideReplan({ ...input, frame: f })).toEqual({ next: "ask_planner" });
  });

  it("an invalid draft goes back to the planner with its issues once, then escalates", () => {
    const bad = { draft: { steps: [step("b2", "teleport")] } };
    const first = decideReplan({ ...input, memory: "off", answers: [bad] });
    expect(first).toMatchObject({ next: "ask_planner", issues: [{ code: "unknown_tool", stepId: "b2" }] });
    const second = decideReplan({ ...input, memory: "off", answers: [bad, bad] });
    expect(second).toMatchObject({
      next: "apply",
      writes: [],
      notes: [],
      outcome: { kind: "escalate", decision: { rule: "replan.invalid-draft", seq: 2, stepId: "b" } },
    });
  });

  it("asks the reviewer about the version it would commit, then holds that version on a high finding", () => {
    const answers = [{ draft: { steps: [step("b2", "mirror", { dependsOn: ["a"], produces: ["x"] })] } }];
    const at = { ...input, memory: "off" as const, answers, reviewer: true };
    const asked = decideReplan(at);
    expect(asked).toMatchObject({ next: "review_version", plan: { version: 2 } });
    expect(Object.keys(asked)).toEqual(["next", "plan"]);
    const finding = { rule: "quality.reviewer", severity: "high" as const, message: "pays twice", planVersion: 2 };
    const decided = decideReplan({ ...at, reviewed: [finding] });
    expect(decided).toMatchObject({ next: "apply", findings: [finding], outcome: { kind: "commit" } });
    expect(decided.next === "apply" && decided.qualityHold).toEqual({
      seq: 2,
      attempt: 0,
      failureClass: "none",
      action: "escalate",
      rule: "quality.hold",
      reason: "the plan quality gate holds the plan: 1 finding at or above high (quality.reviewer)",
      planVersion: 2,
      at: AT,
    });
  });

  it("without a reviewer, the gate's own findings come with the decision; below the bar they hold nothing", () => {
    // No successSignal, nothing produced, no validate: the step cannot fail loudly (medium, under the default bar).
    const answers = [
      { draft: { steps: [step("b2", "mirror", { dependsOn: ["a"], produces: ["x"] }), step("n", "fetch")] } },
    ];
    const decided = decideReplan({ ...input, memory: "off", answers });
    expect(decided).toMatchObject({
      next: "apply",
      outcome: { kind: "commit" },
      findings: [{ rule: "quality.structure", severity: "medium", stepId: "n", planVersion: 2 }],
    });
    expect(decided.next === "apply" && decided.qualityHold).toBeUndefined();
    expect(decideReplan({ ...input, memory: "off", answers, reviewer: true })).toMatchObject({
      next: "review_version",
    });
  });

  it("an escalation asks no reviewer and carries no findings", () => {
    const bad = { draft: { steps: [step("b2", "teleport")] } };
    const decided = decideReplan({ ...input, memory: "off", answers: [bad, bad], reviewer: true });
    expect(decided).toMatchObject({ next: "apply", outcome: { kind: "escalate" } });
    expect(Object.keys(decided).sort()).toEqual(["charged", "next", "notes", "outcome", "writes"]);
  });

  it("decides the same with the run's settings given apart from the replan's data, at every step", () => {
    const { rules: r, memory, ...data } = input;
    const settings = { rules: r, memory, reviewer: true };
    const read = { found: [undefined, template] };
    const answers = [{ draft: { steps: [step("b2", "mirror", { dependsOn: ["a"], produces: ["x"] })] } }];
    const finding = { rule: "quality.reviewer", severity: "high" as const, message: "pays twice", planVersion: 2 };
    const steps = [{}, { read }, { read, answers }, { read, answers, reviewed: [finding] }].map((got) => ({
      apart: decideReplan(settings, { ...data, ...got }),
      together: decideReplan({ ...input, reviewer: true, ...got }),
    }));
    for (const { apart, together } of steps) expect(apart).toEqual(together);
    expect(steps.map((s) => s.apart.next)).toEqual(["read_memory", "ask_planner", "review_version", "apply"]);
    expect(steps[3]!.apart.next === "apply" && steps[3]!.apart.qualityHold?.rule).toBe("quality.hold");
  });
});

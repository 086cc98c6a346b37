/**
 * The replan as a pure transition (src/policy/replan/replan.ts): a snapshot and a checked draft (or the
 * guard that stopped it) to escalate, hold for review, or commit version N+1 — no graph, no clock.
 */
import { describe, expect, it } from "vitest";
import type { Plan } from "../../src/plan/schema/plan.js";
import type { Step } from "../../src/plan/schema/step.js";
import type { Decision } from "../../src/policy/ladder/decision.js";
import { resolvePolicy } from "../../src/policy/options.js";
import {
  commitVersion,
  replanPrecheck,
  replanTransition,
  type CheckedDraft,
  type ReplanSnapshot,
} from "../../src/policy/replan/replan.js";
import type { CapabilityHit } from "../../src/policy/capability/guard.js";

const AT = "2026-01-01T00:00:10.000Z";
const step = (id: string, tool: string, assumptions?: string[]): Step => ({
  id,
  goal: `do ${id}`,
  tool,
  ...(assumptions ? { assumptions } : {}),
});
const plan: Plan = {
  version: 1,
  steps: [step("a", "fetch"), step("b", "fetch", ["A"]), step("c", "send")],
  assumptions: [{ id: "A", statement: "the source is up" }],
};
const trigger: Decision = {
  seq: 3,
  stepId: "b",
  attempt: 2,
  failureClass: "assumption_broken",
  action: "replan_local",
  rule: "assumption.replan-local",
  reason: "the source is down",
  planVersion: 1,
  at: "2026-01-01T00:00:05.000Z",
  brokenAssumption: "A",
};

function snapshot(over: Partial<ReplanSnapshot> = {}): ReplanSnapshot {
  return {
    plan,
    steps: { a: { status: "succeeded", attempts: 1 }, b: { status: "failed", attempts: 2 } },
    decisions: [trigger, trigger, trigger],
    notes: [],
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
      fingerprints: ["old"],
      successes: 4,
      tried: [],
      constraints: [],
    },
    falsification: {
      broken: ["A"],
      falsified: ["A"],
      labels: { facts: {}, trusted: ["x"], suspect: [], invalidated: ["y"] },
    },
    at: AT,
    ...over,
  };
}

const draft: CheckedDraft = {
  proposed: { steps: [step("b2", "mirror")] },
  steps: [step("b2", "mirror")],
  rerun: [],
  print: "new",
};

describe("replan transition (pure)", () => {
  it("escalates with the guard's rule after the replan's notes, guards as they were", () => {
    const s = snapshot();
    const out = replanTransition(s, { hit: { rule: "replan.planner-error", reason: "boom" } }, undefined);
    expect(out).toEqual({
      kind: "escalate",
      guards: s.guards,
      decision: {
        seq: 4,
        stepId: "b",
        attempt: 2,
        failureClass: "assumption_broken",
        action: "escalate",
        rule: "replan.planner-error",
        reason: "boom",
        planVersion: 1,
        at: AT,
        brokenAssumption: "A",
      },
    });
  });

  it("escalates before any draft when a local replan would re-run too many completed steps", () => {
    const s = snapshot({ affectedIds: ["a", "b"], steps: { a: { status: "succeeded", attempts: 1 } } });
    const policy = { ...resolvePolicy(), maxBacktrackDepth: 0 };
    const out = replanPrecheck(s, policy);
    expect(out?.kind).toBe("escalate");
    expect(out?.kind === "escalate" && [out.decision.rule, out.decision.reason]).toEqual([
      "guard.max-backtrack-depth",
      "the replan would re-validate 1 completed steps (a); policy.maxBacktrackDepth = 0",
    ]);
    expect(replanPrecheck({ ...s, scope: "global" }, policy)).toBeUndefined();
  });

  it("commits version N+1: merged steps, the record, and the guards' counters", () => {
    const out = replanTransition(snapshot(), draft, undefined);
    expect(out.kind).toBe("commit");
    if (out.kind !== "commit") return;
    expect(out.proposal.plan.steps.map((s) => s.id)).toEqual(["a", "b2", "c"]);
    expect(out.proposal).toMatchObject({ affected: ["b"], replacement: ["b2"], scopeChanges: [] });
    expect(out.proposal.record).toEqual({
      trigger: "assumption.replan-local: the source is down",
      brokenAssumption: "A",
      scope: "local",
      fromVersion: 1,
      toVersion: 2,
      invalidatedSteps: ["b"],
      preservedSteps: ["a", "c"],
      newSteps: ["b2"],
      facts: { trusted: ["x"], suspect: [], invalidated: ["y"] },
      at: AT,
    });
    expect(out.guards.fingerprints).toEqual(["old", "new"]);
    expect(out.guards.lastReplanAt).toEqual({ A: 4 });
    const writes = commitVersion({ plan, steps: snapshot().steps, scopeChanges: [] }, out.proposal);
    expect(writes.steps).toEqual({ b: { status: "invalidated", attempts: 2 }, b2: { status: "pending", attempts: 0 } });
    expect(writes.planHistory.runs).toEqual({ b: { status: "failed", attempts: 2 } });
    expect(writes.planHistory.notStarted).toEqual(["c"]);
  });

  it("holds the proposal for a person when the capability guard fires, with its decision", () => {
    const hit: CapabilityHit = {
      rule: "guard.new-capability",
      reason: "tool mirror is new to this run",
      findings: [{ stepId: "b2", tool: "mirror", kind: "new_tool", sideEffects: [], detail: "not used before" }],
    };
    const out = replanTransition(snapshot({ notes: [trigger] }), draft, hit);
    expect(out.kind).toBe("hold");
    if (out.kind !== "hold") return;
    expect([out.decision.seq, out.decision.rule, out.decision.action, out.decision.reason]).toEqual([
      5,
      "guard.new-capability",
      "escalate",
      "tool mirror is new to this run",
    ]);
    expect(out.proposal.record.toVersion).toBe(2);
    expect(out.guards.fingerprints).toEqual(["old", "new"]);
  });
});

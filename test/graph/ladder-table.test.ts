import { describe, expect, it } from "vitest";
import { TransientError, type PlanDraft } from "../../src/index.js";
import { RULES, RULE_IDS, STAGES, disagreement, rulesOf } from "../../src/policy/ladder/rules.js";
import { decide } from "../../src/policy/ladder/decide.js";
import { brief, harness, httpError, scriptedTool } from "../helpers/graph.js";
import { decisionsSeen } from "../setup/decision-corpus.js";

const oneStep = (extra: Partial<PlanDraft["steps"][number]> = {}): PlanDraft => ({
  steps: [{ id: "fetch", goal: "Fetch the report", tool: "fetch", produces: ["report"], ...extra }],
});

describe("the ladder as one table", () => {
  it("lists its rules stage by stage, in the order they are checked", () => {
    const stages = RULE_IDS.map((id) => RULES[id].stage);
    const order = stages.map((s) => STAGES.indexOf(s));
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect([...new Set(stages)]).toEqual([...STAGES]);
    expect(rulesOf("replan-guard")).toEqual([
      "replan.unavailable",
      "guard.max-replans",
      "guard.replan-budget",
      "guard.replan-cooldown",
    ]);
    expect(RULE_IDS).toHaveLength(68);
  });

  it("states each disagreement a decision can have with its rule", () => {
    const d = { rule: "transient.retry", failureClass: "transient", action: "retry" } as const;
    expect(disagreement(d)).toBeUndefined();
    expect(disagreement({ ...d, failureClass: "deterministic" })).toBe(
      "transient.retry: class deterministic, the table says transient",
    );
    expect(disagreement({ ...d, action: "skip" })).toBe("transient.retry: action skip, the table says retry");
    expect(disagreement({ ...d, rule: "transient.retry-forever" })).toBe(
      "transient.retry-forever: not a rule of the table",
    );
    expect(disagreement({ rule: "rate.limit", failureClass: "none", action: "retry" })).toBeUndefined();
    expect(disagreement({ rule: "exhausted.escalate", failureClass: "deterministic", action: "escalate" })).toBe(
      undefined,
    );
  });

  it("builds a decision from its rule: the action comes from the table, seq follows the decisions before", () => {
    const at = "2026-01-01T00:00:00.000Z";
    const base = { after: 4, attempt: 2, failureClass: "transient", reason: "503", planVersion: 1, at } as const;
    expect(decide("transient.retry", { ...base, stepId: "a", delayMs: 200 })).toEqual({
      seq: 5,
      stepId: "a",
      attempt: 2,
      failureClass: "transient",
      action: "retry",
      rule: "transient.retry",
      reason: "503",
      planVersion: 1,
      at,
      delayMs: 200,
    });
    expect(decide("replan.memory", { ...base, action: "replan_global" }).action).toBe("replan_global");
    expect(() => decide("replan.memory", base)).toThrow(
      "rule replan.memory takes replan_local or replan_global, not no action: pick one of the rule's actions",
    );
    expect(() => decide("transient.retry", { ...base, action: "skip" })).toThrow(/rule transient.retry takes retry/);
  });

  it("every decision a run emits conforms to its rule (the corpus this file's runs collect)", async () => {
    const before = decisionsSeen().length;
    const flaky = scriptedTool("fetch", [new TransientError("busy"), new TransientError("busy")]);
    const exhausted = await harness(oneStep({ retry: { maxAttempts: 2, backoff: "fixed", initialDelayMs: 1 } }), [
      flaky,
    ]).run();
    expect(brief(exhausted.decisions)).toEqual([
      "fetch: transient → retry [transient.retry]",
      "fetch: deterministic → escalate [exhausted.escalate]",
    ]);
    const gone = await harness(oneStep({ optional: true }), [scriptedTool("fetch", [httpError(404)])]).run();
    expect(brief(gone.decisions)).toEqual(["fetch: deterministic → skip [optional.skip]"]);
    const seen = decisionsSeen().slice(before);
    expect(seen.map((d) => `${d.seq} ${d.rule}`)).toEqual([
      "1 transient.retry",
      "2 exhausted.escalate",
      "1 optional.skip",
    ]);
    expect(seen.flatMap((d) => disagreement(d) ?? [])).toEqual([]);
  });
});

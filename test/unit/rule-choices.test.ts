/**
 * The policy functions nodes, views and the middleware ask for a rule instead of naming one
 * (docs/architecture.md, "The ladder"): each maps its input to the table's rule, and every rule it
 * can return is a rule of the stage it belongs to.
 */
import { describe, expect, it } from "vitest";
import { classifierVerdict, type Verdict } from "../../src/policy/ladder/classify.js";
import { isConcurrencyRecord, limitVerdict } from "../../src/policy/attempt/may-start.js";
import { answerRule, type PersonAnswer } from "../../src/policy/ladder/person.js";
import {
  cheaperPlanVerdict,
  quotesTheModel,
  revisionCountGuard,
  revisionProgressGuard,
  untrustedFirstPlanGuard,
} from "../../src/policy/replan/plan-writes.js";
import { rulesOf } from "../../src/policy/ladder/rules.js";

describe("a person's answer", () => {
  it("maps every answer to its own rule of the person stage, and covers every rule of that stage but the deadline's", () => {
    const answers: PersonAnswer[] = [
      "approve-plan",
      "reject-plan",
      "approve-replan",
      "reject-replan",
      "reject-call",
      "retry",
      "skip",
      "provide",
      "replan",
      "change-scope",
      "abort",
      "complete",
      "effect-happened",
      "effect-retry",
    ];
    const rules: string[] = answers.map((a) => answerRule(a));
    expect(rules).toEqual([
      "human.approve-plan",
      "human.reject-plan",
      "human.approve-replan",
      "human.reject-replan",
      "human.reject-call",
      "human.retry",
      "human.skip",
      "human.provide",
      "human.replan",
      "human.change-scope",
      "human.abort",
      "human.complete",
      "human.effect-happened",
      "human.effect-retry",
    ]);
    // The deadline, not the person who answered late, decides a late answer.
    expect(rulesOf("person").filter((r) => !rules.includes(r))).toEqual(["human.deadline-passed"]);
  });

  it("is not fooled by a name from Object.prototype", () => {
    for (const name of ["__proto__", "toString", "constructor"])
      expect(() => answerRule(name as PersonAnswer)).toThrow(
        expect.objectContaining({ code: "invalid_resume", message: `"${name}" is not an answer a person can give` }),
      );
  });
});

describe("write_plan guards", () => {
  it("bounds revisions by policy.maxReplans", () => {
    expect(revisionCountGuard(1, { maxReplans: 2 })).toBeUndefined();
    expect(revisionCountGuard(2, { maxReplans: 2 })).toEqual({
      rule: "guard.max-replans",
      reason: "2 revisions already (policy.maxReplans = 2)",
    });
    expect(revisionCountGuard(Number.NaN, { maxReplans: 2 })).toBeUndefined();
  });

  it("calls a triggered revision that changes nothing, or repeats a replacement, no progress", () => {
    const base = { triggered: true, added: 0, proposed: "p", replaced: "r", seen: [], assumption: "a" };
    expect(revisionProgressGuard(base)).toEqual({
      rule: "guard.no-progress",
      reason: "the revision changes no step of the failed plan",
    });
    expect(revisionProgressGuard({ ...base, added: 1 })).toBeUndefined();
    expect(revisionProgressGuard({ ...base, triggered: false })).toBeUndefined();
    expect(revisionProgressGuard({ ...base, added: 1, seen: ["p"] })).toEqual({
      rule: "guard.no-progress",
      reason: 'the planner proposed the same steps again for assumption "a"; that is not progress',
    });
  });

  it("holds a first plan fed from untrusted text, naming every finding", () => {
    expect(untrustedFirstPlanGuard([])).toBeUndefined();
    expect(untrustedFirstPlanGuard([{ detail: "pay.iban from tool output" }, { detail: "x" }])).toEqual({
      rule: "guard.untrusted-arguments",
      reason: "pay.iban from tool output; x",
    });
  });

  it("asks for a cheaper plan under the graph's budget rule", () => {
    expect(cheaperPlanVerdict({ message: "plan version 2 costs 3" })).toEqual({
      rule: "budget.replan-cheaper",
      reason: "plan version 2 costs 3; asking for a cheaper plan",
      failureClass: "budget_exhausted",
      evidence: "budget.max-cost",
    });
  });

  it("reads the guards that quote the model's own call as not untrusted", () => {
    expect(
      ["guard.unplanned-side-effect", "guard.untrusted-arguments", "guard.no-progress", "__proto__"].map((rule) =>
        quotesTheModel({ rule }),
      ),
    ).toEqual([true, true, false, false]);
  });
});

describe("dispatch records", () => {
  it("tells the concurrency bookkeeping from ladder decisions", () => {
    expect(["rate.limit", "transient.retry", "effect.reused"].map((rule) => isConcurrencyRecord({ rule }))).toEqual([
      true,
      false,
      false,
    ]);
  });

  it("records a concurrency change, transient when a rate limit lowered it", () => {
    expect(limitVerdict({ tool: "search", from: 4, to: 2, why: "rate limited with 4 calls running" }, true)).toEqual({
      rule: "rate.limit",
      failureClass: "transient",
      reason: "search may run 2 calls at a time (was 4): rate limited with 4 calls running",
    });
    expect(limitVerdict({ tool: "search", from: 1, to: 2, why: "a call succeeded" }, false)).toEqual({
      rule: "rate.limit",
      failureClass: "none",
      reason: "search may run 2 calls at a time (was 1): a call succeeded",
    });
    expect(limitVerdict({ tool: "t", from: 2, to: 1, why: "w" }, true).reason).toBe(
      "t may run 1 call at a time (was 2): w",
    );
  });
});

describe("the LLM classifier's answer", () => {
  const ruled: Verdict = {
    failureClass: "unknown",
    action: "escalate",
    rule: "unknown.escalate",
    evidence: "unknown",
    reason: "no rule matched",
  };

  it("decides a ladder action under llm.classifier, keeping the rules' evidence", () => {
    const answer = {
      verdict: { failureClass: "transient", action: "retry", reason: "flaky", evidence: "mine" },
    } as const;
    expect(classifierVerdict(ruled, answer)).toEqual({
      failureClass: "transient",
      action: "retry",
      rule: "llm.classifier",
      evidence: "unknown",
      reason: "flaky",
      by: "llm",
    });
  });

  it("leaves the rule's verdict standing for a failure (saying why), a person's action or no answer", () => {
    expect(classifierVerdict(ruled, { failure: { message: "timeout" } })).toEqual({
      ...ruled,
      reason: "no rule matched; the LLM classifier failed: timeout",
    });
    expect(classifierVerdict(ruled, { verdict: { failureClass: "unknown", action: "provide", reason: "r" } })).toEqual(
      ruled,
    );
    expect(classifierVerdict(ruled, undefined)).toEqual(ruled);
  });
});

/** What a decision is about, as a trace names its event (docs/decisions/0052-opentelemetry.md). */
import { describe, expect, it } from "vitest";
import type { Decision } from "../../src/policy/ladder/decision.js";
import { decisionTopic, effectOutcome } from "../../src/policy/ladder/decision-topic.js";
import type { RuleId } from "../../src/policy/ladder/rules.js";

const about = (rule: RuleId): Decision => ({
  seq: 1,
  attempt: 1,
  planVersion: 1,
  at: "2026-01-01T00:00:00.000Z",
  failureClass: "deterministic",
  action: rule.endsWith("escalate") ? "escalate" : "retry",
  rule,
  reason: "r",
});

describe("decisionTopic", () => {
  it("names calls in doubt, settlements, undos, quality findings, people asked and the ladder's rungs", () => {
    const rules: RuleId[] = [
      "effect.in-doubt",
      "effect.verified",
      "compensate.run",
      "compensate.failed",
      "quality.hold",
      "deterministic.escalate",
      "transient.retry",
    ];
    expect(rules.map((r) => decisionTopic(about(r)))).toEqual([
      "in_doubt",
      "settlement",
      "compensation",
      "compensation",
      "quality",
      "human_wait",
      "ladder",
    ]);
    expect(rules.map((r) => effectOutcome(about(r)) ?? "-")).toEqual([
      "in_doubt",
      "-",
      "compensated",
      "-",
      "-",
      "-",
      "-",
    ]);
  });
});

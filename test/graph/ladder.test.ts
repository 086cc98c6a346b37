import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { PermanentError, TransientError, type PlanDraft } from "../../src/index.js";
import { brief, harness, httpError, scriptedTool } from "../helpers/graph.js";

const oneStep = (extra: Partial<PlanDraft["steps"][number]> = {}): PlanDraft => ({
  steps: [{ id: "fetch", goal: "Fetch the report", tool: "fetch", produces: ["report"], ...extra }],
});

describe("the response ladder on a running graph", () => {
  it("retries a 503 with backoff and succeeds on the second attempt", async () => {
    const fetch = scriptedTool("fetch", [httpError(503), { report: "ok" }]);
    const h = harness(
      oneStep({ retry: { maxAttempts: 3, backoff: "exponential", initialDelayMs: 500, maxDelayMs: 8000 } }),
      [fetch],
    );
    const out = await h.run();
    expect(out.status).toBe("completed");
    expect(out.steps.fetch).toMatchObject({ status: "succeeded", attempts: 2 });
    expect(brief(out.decisions)).toEqual(["fetch: transient → retry [transient.retry]"]);
    expect(out.decisions[0]).toMatchObject({ attempt: 1, delayMs: 500 });
    expect(h.clock.sleeps).toEqual([500]);
    expect(out.facts.report).toEqual({
      value: "ok",
      label: "trusted",
      producedBy: "fetch",
      planVersion: 1,
      assumptions: [],
      derivedFrom: [],
      // When the retry ended, on the run's clock (docs/decisions/0041-evidence-freshness-and-drift.md).
      observedAt: "2026-01-01T00:00:00.500Z",
    });
  });

  it("backs off exponentially, honours Retry-After, then stops at maxAttempts", async () => {
    const fetch = scriptedTool("fetch", [
      new TransientError("busy"),
      new TransientError("busy", { retryAfterMs: 5000 }),
      new TransientError("busy"),
    ]);
    const h = harness(
      oneStep({ retry: { maxAttempts: 3, backoff: "exponential", initialDelayMs: 100, maxDelayMs: 1000 } }),
      [fetch],
    );
    const out = await h.run();
    expect(h.clock.sleeps).toEqual([100, 5000]);
    expect(fetch.calls).toHaveLength(3);
    expect(brief(out.decisions)).toEqual([
      "fetch: transient → retry [transient.retry]",
      "fetch: transient → retry [transient.retry]",
      "fetch: deterministic → escalate [exhausted.escalate]",
    ]);
    expect(out.status).toBe("awaiting_human");
  });

  it("does not retry a 404: one attempt, then escalation with the packaged context", async () => {
    const fetch = scriptedTool("fetch", [httpError(404, "no such report")]);
    const h = harness(oneStep(), [fetch]);
    const out = await h.run();
    expect(fetch.calls).toHaveLength(1);
    expect(brief(out.decisions)).toEqual(["fetch: deterministic → escalate [deterministic.escalate]"]);
    const payload = out.__interrupt__[0].value;
    expect(payload).toMatchObject({
      kind: "escalation",
      stepId: "fetch",
      planVersion: 1,
      options: ["retry", "skip", "provide", "abort"],
    });
    expect(payload.context.tried).toEqual(["attempt 1: deterministic → escalate (deterministic.escalate)"]);
    expect(payload.context.error).toEqual({ name: "HttpError", message: "no such report", status: 404 });
  });

  it("switches to the fallback tool on a permanent failure", async () => {
    const fetch = scriptedTool("fetch", [new PermanentError("portal gone")]);
    const cached = scriptedTool("cached_fetch", [{ report: "cached" }]);
    const h = harness(oneStep({ fallback: { tool: "cached_fetch", args: { maxAgeDays: 7 } } }), [fetch, cached]);
    const out = await h.run();
    expect(out.status).toBe("completed");
    expect(brief(out.decisions)).toEqual(["fetch: deterministic → fallback [deterministic.fallback]"]);
    expect(out.steps.fetch).toMatchObject({ status: "succeeded", attempts: 2, usedFallback: true });
    expect(cached.calls).toEqual([{ maxAgeDays: 7 }]);
    expect(out.facts.report.value).toBe("cached");
    expect(out.outcome.uncertainty).toEqual(['"Fetch the report" used its fallback (cached_fetch)']);
  });

  it("never retries a false precondition and never calls the tool", async () => {
    const fetch = scriptedTool("fetch", [{ report: "x" }]);
    const h = harness(oneStep({ preconditions: ["facts.qty + 1 > 2"] }), [fetch], { context: { qty: 1 } });
    const out = await h.run();
    expect(fetch.calls).toHaveLength(0);
    expect(out.steps.fetch).toMatchObject({ status: "failed", attempts: 0 });
    expect(brief(out.decisions)).toEqual(["fetch: precondition_failed → escalate [precondition.escalate]"]);
    expect(out.decisions[0].reason).toContain('precondition "facts.qty + 1 > 2" is false');
  });

  it("reports a missing fact in a precondition by name instead of crashing", async () => {
    const fetch = scriptedTool("fetch", [{ report: "x" }]);
    const h = harness(oneStep({ preconditions: ['facts.customer_id != ""'] }), [fetch]);
    const out = await h.run();
    expect(out.decisions[0].reason).toContain("is false (missing fact: customer_id)");
    expect(fetch.calls).toHaveLength(0);
  });

  it("escalates an unknown error, then a person's retry succeeds", async () => {
    const fetch = scriptedTool("fetch", [new Error("weird"), { report: "ok" }]);
    const h = harness(oneStep(), [fetch]);
    const first = await h.run();
    expect(first.status).toBe("awaiting_human");
    expect(brief(first.decisions)).toEqual(["fetch: unknown → escalate [unknown.escalate]"]);
    const out = await h.run(new Command({ resume: { action: "retry" } }));
    expect(out.status).toBe("completed");
    expect(fetch.calls).toHaveLength(2);
    expect(brief(out.decisions)).toEqual([
      "fetch: unknown → escalate [unknown.escalate]",
      "fetch: person → retry [human.retry]",
    ]);
    expect(out.steps.fetch).toMatchObject({ status: "succeeded", attempts: 2, retryBase: 1 });
  });

  it("skips an optional step that fails for good, with its dependents, and completes the rest", async () => {
    const plan: PlanDraft = {
      steps: [
        { id: "core", goal: "Core analysis", tool: "core", produces: ["summary"] },
        { id: "extra", goal: "Market enrichment", tool: "extra", produces: ["market"], optional: true },
        {
          id: "chart",
          goal: "Market chart",
          tool: "chart",
          dependsOn: ["extra"],
          inputs: ["market"],
          produces: ["chart"],
        },
        {
          id: "report",
          goal: "Write report",
          tool: "report",
          dependsOn: ["core"],
          inputs: ["summary"],
          produces: ["doc"],
        },
      ],
    };
    const tools = [
      scriptedTool("core", [{ summary: "s" }]),
      scriptedTool("extra", [httpError(403, "forbidden")]),
      scriptedTool("chart", [{ chart: "c" }]),
      scriptedTool("report", [{ doc: "d" }]),
    ];
    const out = await harness(plan, tools).run();
    expect(out.status).toBe("completed");
    expect(brief(out.decisions)).toEqual(["extra: deterministic → skip [optional.skip]"]);
    expect(out.steps.extra).toMatchObject({ status: "skipped", skipReason: "optional_failed" });
    expect(out.steps.chart).toMatchObject({ status: "skipped", skipReason: "dependency_skipped", attempts: 0 });
    expect(tools[2]!.calls).toHaveLength(0);
    expect(out.outcome.missing).toEqual([
      { stepId: "extra", goal: "Market enrichment", facts: ["market"], reason: "optional step failed: forbidden" },
      {
        stepId: "chart",
        goal: "Market chart",
        facts: ["chart"],
        reason: "skipped because a step it depends on was skipped",
      },
    ]);
    expect(out.outcome.summary).toBe('Completed "test goal": 2 of 4 steps succeeded, 2 skipped (plan v1).');
  });

  it("times out a hanging tool as transient and retries it", async () => {
    const hang = () => new Promise(() => undefined);
    const fetch = scriptedTool("fetch", [hang, { report: "ok" }]);
    const h = harness(oneStep({ timeoutMs: 20, retry: { backoff: "none" } }), [fetch]);
    const out = await h.run();
    expect(out.status).toBe("completed");
    expect(out.decisions[0]).toMatchObject({ failureClass: "transient", action: "retry", rule: "transient.retry" });
    expect(out.decisions[0].reason).toContain("step timed out after 20 ms");
  });

  it("does not start a step whose cost would exceed budget.maxCost (a retry spent the rest)", async () => {
    const plan: PlanDraft = {
      steps: [
        { id: "a", goal: "A", tool: "a", cost: 0.1, produces: ["x"], retry: { maxAttempts: 2, backoff: "none" } },
        { id: "b", goal: "B", tool: "b", cost: 0.1, dependsOn: ["a"], produces: ["y"] },
      ],
    };
    const a = scriptedTool("a", [httpError(503), { x: 1 }]);
    const b = scriptedTool("b", [{ y: 1 }]);
    const out = await harness(plan, [a, b], { policy: { budget: { maxCost: 0.25 } } }).run();
    expect(a.calls).toHaveLength(2);
    expect(b.calls).toHaveLength(0);
    expect(out.budget).toEqual({ spent: 0.2, replanSpent: 0, maxCost: 0.25 });
    // The plan fitted (0.2 of 0.25); the retry spent what b needed, and b is held before it starts.
    expect(brief(out.decisions)).toEqual([
      "a: transient → retry [transient.retry]",
      "b: budget_exhausted → escalate [replan.unavailable]",
    ]);
    expect(out.decisions[1].reason).toContain("the planner cannot replan");
  });

  it("treats an unmet success signal without assumptions as an escalation (compliance 'system_error')", async () => {
    const check = scriptedTool("compliance_check", [{ compliance_flag: "system_error" }]);
    const plan: PlanDraft = {
      steps: [
        {
          id: "compliance_check",
          goal: "Compliance",
          tool: "compliance_check",
          produces: ["compliance_flag"],
          successSignal: 'output.compliance_flag in ["pass", "review"]',
          retry: { maxAttempts: 1 },
        },
      ],
    };
    const out = await harness(plan, [check]).run();
    expect(check.calls).toHaveLength(1);
    expect(brief(out.decisions)).toEqual(["compliance_check: success_signal_unmet → escalate [unmet.escalate]"]);
    const payload = out.__interrupt__[0].value;
    expect(payload.reason).toBe(
      'compliance_check: success signal "output.compliance_flag in [\\"pass\\", \\"review\\"]" is false for output {"compliance_flag":"system_error"}; the step rests on no assumption that could be replanned',
    );
    expect(payload.context.output).toEqual({ compliance_flag: "system_error" });
    expect(out.facts.compliance_flag).toBeUndefined();
  });

  it("retries once on an unmet signal when the step says retryOnUnmet", async () => {
    const check = scriptedTool("check", [{ ok: false }, { ok: true }]);
    const plan: PlanDraft = {
      steps: [{ id: "check", goal: "Check", tool: "check", successSignal: "output.ok", retryOnUnmet: true }],
    };
    const out = await harness(plan, [check]).run();
    expect(out.status).toBe("completed");
    expect(brief(out.decisions)).toEqual(["check: success_signal_unmet → retry [unmet.retry-once]"]);
  });

  it("maps Node network error codes to transient", async () => {
    const err = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    const fetch = scriptedTool("fetch", [err, { report: 1 }]);
    const out = await harness(oneStep({ retry: { backoff: "none" } }), [fetch]).run();
    expect(out.decisions[0]).toMatchObject({ failureClass: "transient", rule: "transient.retry" });
  });

  it("skips a step whose `when` is false and lets its dependents run", async () => {
    const plan: PlanDraft = {
      steps: [
        { id: "review", goal: "Review", tool: "review", when: 'facts.flag == "review"' },
        { id: "issue", goal: "Issue", tool: "issue", dependsOn: ["review"], produces: ["done"] },
      ],
    };
    const review = scriptedTool("review", [{}]);
    const issue = scriptedTool("issue", [{ done: true }]);
    const out = await harness(plan, [review, issue], { context: { flag: "pass" } }).run();
    expect(out.status).toBe("completed");
    expect(review.calls).toHaveLength(0);
    expect(out.steps.review).toMatchObject({ status: "skipped", skipReason: "when" });
    expect(out.outcome.summary).toBe('Completed "test goal": 1 of 2 steps succeeded (plan v1).');
  });
});

import { Command } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { AssumptionBrokenError, staticPlanner, type PlanDraft, type ReplanRequest } from "../../src/index.js";
import { planAtVersion, planDiff, runsAtVersion } from "../../src/views/index.js";
import { codingPlan, codingReplan, createCodingTools } from "../fixtures/coding-agent.js";
import { createFraudTools, fraudPlan, fraudReplan } from "../fixtures/loan-fraud.js";
import { createLoanTools, loanPlan } from "../../examples/loan/workflow.js";
import { brief, harness, httpError, scriptedTool } from "../helpers/graph.js";

const labels = (facts: Record<string, { label: string }>) =>
  Object.fromEntries(Object.entries(facts).map(([k, f]) => [k, f.label]));

describe("scoped replanning", () => {
  it("coding agent: the failed test breaks the root-cause assumption; the fix lands on the second attempt and search is not re-run", async () => {
    const { tools, calls } = createCodingTools("session.ts");
    const requests: ReplanRequest[] = [];
    const planner = staticPlanner({ plan: codingPlan, replan: (r) => (requests.push(r), codingReplan(r)) });
    const out = await harness(planner, tools, { threadId: "bug-1" }).run();

    expect(out.status).toBe("completed");
    expect(calls.map((c) => c.tool)).toEqual([
      "search_code",
      "diagnose",
      "apply_fix",
      "run_tests",
      "diagnose",
      "apply_fix",
      "run_tests",
    ]);
    expect(calls.filter((c) => c.tool === "apply_fix").map((c) => c.args)).toEqual([
      { suspect_file: "auth.ts" },
      { suspect_file: "session.ts" },
    ]);
    expect(calls[4]!.args).toEqual({ candidates: ["auth.ts", "session.ts", "token.ts"], exclude: ["auth.ts"] });
    expect(brief(out.decisions)).toEqual(["test: success_signal_unmet → replan_local [unmet.replan-local]"]);
    expect(out.decisions[0].brokenAssumption).toBe("root_cause");

    expect(requests).toHaveLength(1);
    const req = requests[0]!;
    expect(Object.keys(req).sort()).toEqual([
      "affectedSteps",
      "brokenAssumption",
      "budget",
      "constraints",
      "excluded",
      "facts",
      "goal",
      "plan",
      "reportUsage",
      "scope",
      "scopeChanges",
      "signal",
      "tools",
      "trigger",
      "validate",
    ]);
    expect(req.scope).toBe("local");
    expect(req.affectedSteps.map((s) => s.id)).toEqual(["diagnose", "fix", "test"]);
    expect(req.facts).toEqual({
      trusted: { candidates: ["auth.ts", "session.ts", "token.ts"] },
      suspect: { suspect_file: "auth.ts", patched_file: "auth.ts" },
    });
    expect(req.excluded).toEqual(["diagnose {}", "apply_fix {}", "run_tests {}"]);

    expect(out.replans).toEqual([
      {
        trigger: expect.stringMatching(/^unmet\.replan-local: test: success signal "output.passed == true" is false/),
        brokenAssumption: "root_cause",
        scope: "local",
        fromVersion: 1,
        toVersion: 2,
        invalidatedSteps: ["diagnose", "fix", "test"],
        preservedSteps: ["search"],
        newSteps: ["diagnose_v2", "fix_v2", "test_v2"],
        facts: { trusted: ["candidates"], suspect: ["suspect_file", "patched_file"], invalidated: [] },
        at: "2026-01-01T00:00:00.000Z",
      },
    ]);
    expect(out.steps.search).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(out.steps.diagnose.status).toBe("invalidated");
    expect(labels(out.facts)).toEqual({
      candidates: "trusted",
      suspect_file: "trusted",
      patched_file: "trusted",
      passed: "trusted",
    });
    expect(out.facts.suspect_file).toMatchObject({ value: "session.ts", producedBy: "diagnose_v2", planVersion: 2 });
    expect(out.plan.version).toBe(2);
    expect(out.guards.falsified).toEqual(["root_cause"]);
  });

  it("research agent: a 404 from the trust portal is one attempt, then a local replan to third-party sources and a qualified answer", async () => {
    const plan: PlanDraft = {
      assumptions: [{ id: "portal_public", statement: "the vendor's trust portal publishes its SOC 2 report" }],
      steps: [
        { id: "scope", goal: "Scoping the question", tool: "scope_question", produces: ["vendor"] },
        {
          id: "portal",
          goal: "Reading the trust portal",
          tool: "fetch_portal",
          dependsOn: ["scope"],
          inputs: ["vendor"],
          produces: ["soc2"],
          assumptions: ["portal_public"],
        },
        {
          id: "answer",
          goal: "Writing the answer",
          tool: "synthesize",
          dependsOn: ["portal"],
          inputs: ["soc2"],
          produces: ["answer"],
        },
      ],
    };
    const tools = [
      scriptedTool("scope_question", [{ vendor: "Acme" }]),
      scriptedTool("fetch_portal", [httpError(404, "trust portal: not found")]),
      scriptedTool("third_party_search", [{ soc2: "reported by two auditors' press releases", confidence: "medium" }]),
      scriptedTool("synthesize", [(a: Record<string, unknown>) => ({ answer: `Acme SOC 2: ${String(a.soc2)}` })]),
    ];
    const replan = (r: ReplanRequest): PlanDraft => ({
      assumptions: [{ id: "third_party_reliable", statement: "third-party sources describe the report accurately" }],
      steps: [
        {
          id: "third_party",
          goal: "Reading third-party sources",
          tool: "third_party_search",
          inputs: ["vendor"],
          produces: ["soc2"],
          assumptions: ["third_party_reliable"],
        },
        {
          id: "answer",
          goal: "Writing a qualified answer",
          tool: "synthesize",
          dependsOn: ["third_party"],
          inputs: ["soc2"],
          produces: ["answer"],
          args: { qualified: r.scope === "local" },
        },
      ],
    });
    const out = await harness(staticPlanner({ plan, replan }), tools).run();
    expect(out.status).toBe("completed");
    expect(tools[1]!.calls).toHaveLength(1);
    expect(brief(out.decisions)).toEqual(["portal: deterministic → replan_local [deterministic.replan-local]"]);
    expect(out.replans[0]).toMatchObject({
      brokenAssumption: "portal_public",
      scope: "local",
      invalidatedSteps: ["portal"],
      preservedSteps: ["scope"],
      newSteps: ["third_party"],
    });
    expect(out.facts.answer.value).toBe("Acme SOC 2: reported by two auditors' press releases");
    expect(out.outcome.uncertainty).toEqual(['plan v2 replaced portal because assumption "portal_public" was false']);
    expect(tools[0]!.calls).toHaveLength(1);
  });

  it("loan workflow: new evidence falsifies the employment assumption; v2 inserts deep verification and a human review", async () => {
    const { tools, calls } = createFraudTools();
    const requests: ReplanRequest[] = [];
    const h = harness(staticPlanner({ plan: fraudPlan, replan: (r) => (requests.push(r), fraudReplan(r)) }), tools, {
      threadId: "loan-A-7291",
      context: { applicant_id: "A-7291" },
    });
    const paused = await h.run();
    expect(calls).toEqual([
      "verify_identity",
      "pull_credit",
      "compliance_check",
      "underwrite",
      "deep_verify_employment",
    ]);
    expect(brief(paused.decisions)).toEqual(["underwrite: assumption_broken → replan_local [assumption.replan-local]"]);
    expect(paused.replans[0]).toEqual({
      trigger:
        'assumption.replan-local: assumption "employment_valid" is false: assumption "employment_valid" (the stated employment history is genuine) is false after step "underwrite": check "facts.employment_start >= facts.employer_founded"',
      brokenAssumption: "employment_valid",
      scope: "local",
      fromVersion: 1,
      toVersion: 2,
      invalidatedSteps: ["compliance_check", "underwrite"],
      preservedSteps: ["verify_identity", "pull_credit"],
      newSteps: ["deep_verification", "fraud_review"],
      // Kept by id but rewired to the new review: the record says so (it used to be silent).
      changedSteps: ["issue_decision"],
      facts: {
        trusted: ["applicant_id", "identity_verified", "credit_score"],
        suspect: ["compliance_flag"],
        invalidated: ["recommendation", "employment_start", "employer_founded"],
      },
      at: "2026-01-01T00:00:00.000Z",
    });
    expect(labels(paused.facts)).toEqual({
      applicant_id: "trusted",
      identity_verified: "trusted",
      credit_score: "trusted",
      compliance_flag: "suspect",
      recommendation: "invalidated",
      employment_start: "invalidated",
      employer_founded: "invalidated",
      employment_verified: "trusted",
      fraud_signal: "trusted",
    });
    expect(requests[0]!.facts.suspect).toEqual({ compliance_flag: "pass" });
    expect(Object.keys(requests[0]!.facts.trusted)).toEqual(["applicant_id", "identity_verified", "credit_score"]);
    expect(paused.__interrupt__[0].value).toMatchObject({ kind: "human_step", stepId: "fraud_review", planVersion: 2 });
    expect(planDiff(planAtVersion(paused as never, 1)!, paused.plan)).toEqual({
      added: ["deep_verification", "fraud_review"],
      removed: ["compliance_check", "underwrite"],
      changed: [{ id: "issue_decision", fields: ["assumptions", "dependsOn", "inputs"] }],
      unchanged: ["verify_identity", "pull_credit"],
    });

    const out = await h.run(new Command({ resume: { action: "complete", output: { human_decision: "denied" } } }));
    expect(out.status).toBe("completed");
    expect(out.facts.decision.value).toBe("denied");
    expect(out.sideEffects).toEqual([
      {
        stepId: "issue_decision",
        idempotencyKey: "loan-A-7291:034ba0a0211bbbcd",
        at: "2026-01-01T00:00:00.000Z",
        output: { decision: "denied" },
      },
    ]);
    expect(calls.filter((c) => c === "verify_identity" || c === "pull_credit")).toHaveLength(2);
  });

  it("a scope change while paused becomes a global replan that keeps completed work", async () => {
    const loan = createLoanTools({ bureauFailures: 0 });
    const requests: ReplanRequest[] = [];
    const replan = (r: ReplanRequest): PlanDraft => {
      requests.push(r);
      return {
        steps: [
          {
            id: "business_credit",
            goal: "Checking business credit",
            tool: "business_credit",
            inputs: ["applicant_id"],
            produces: ["business_credit_score"],
          },
          { ...loanPlan.steps[4]!, dependsOn: ["business_credit"] },
        ],
      };
    };
    const h = harness(staticPlanner({ plan: loanPlan, replan }), loan.tools, { context: { applicant_id: "A-7291" } });
    await h.run();
    await h.graph.updateState(h.config, { scopeChanges: ["also check business credit"] });
    const snapshot = await h.graph.getState(h.config);
    expect(snapshot.next).toEqual(["human"]);
    const out = await h.run(new Command({ resume: { action: "complete", output: { human_override: "approved" } } }));

    expect(out.status).toBe("completed");
    expect(loan.calls).toEqual([
      "verify_identity",
      "pull_credit",
      "compliance_check",
      "business_credit",
      "issue_decision",
    ]);
    expect(brief(out.decisions)).toEqual([
      "human_review: person → complete [human.complete]",
      "-: scope_changed → replan_global [scope.replan-global]",
    ]);
    expect(requests[0]!.scope).toBe("global");
    expect(requests[0]!.scopeChanges).toEqual(["also check business credit"]);
    expect(requests[0]!.affectedSteps.map((s) => s.id)).toEqual(["issue_decision"]);
    expect(out.replans[0]).toMatchObject({
      scope: "global",
      preservedSteps: ["verify_identity", "pull_credit", "compliance_check", "human_review"],
      newSteps: ["business_credit"],
      invalidatedSteps: [],
    });
    expect(out.scopeChanges).toEqual([]);
    expect(out.facts.business_credit_score.value).toBe(81);
  });

  it("a scope change given as a resume answer is planned for at the next step boundary", async () => {
    const loan = createLoanTools({ bureauFailures: 0 });
    const replan = (): PlanDraft => ({
      steps: [{ id: "wrap_up", goal: "Wrap up", tool: "verify_identity", inputs: ["applicant_id"] }],
    });
    const h = harness(staticPlanner({ plan: loanPlan, replan }), loan.tools, { context: { applicant_id: "A-7291" } });
    await h.run();
    const out = await h.run(new Command({ resume: { action: "change_scope", request: "stop after review" } }));
    expect(brief(out.decisions)).toEqual([
      "human_review: person → replan_global [human.change-scope]",
      "-: scope_changed → replan_global [scope.replan-global]",
    ]);
    expect(out.plan.steps.map((s: { id: string }) => s.id)).toEqual([
      "verify_identity",
      "pull_credit",
      "compliance_check",
      "wrap_up",
    ]);
    expect(out.status).toBe("completed");
  });

  it("a planner that keeps failing the same way is stopped by maxReplans, with the history readable", async () => {
    const flaky = scriptedTool("work", [{ ok: false }]);
    let n = 0;
    const replan = (): PlanDraft => {
      n += 1;
      return {
        assumptions: [{ id: `a${n + 1}`, statement: `try ${n + 1}` }],
        steps: [
          {
            id: `work_v${n + 1}`,
            goal: "Work",
            tool: "work",
            args: { variant: n },
            successSignal: "output.ok",
            assumptions: [`a${n + 1}`],
          },
        ],
      };
    };
    const plan: PlanDraft = {
      assumptions: [{ id: "a1", statement: "try 1" }],
      steps: [{ id: "work", goal: "Work", tool: "work", successSignal: "output.ok", assumptions: ["a1"] }],
    };
    const out = await harness(staticPlanner({ plan, replan }), [flaky], { policy: { replanCooldownSteps: 0 } }).run();
    expect(out.status).toBe("awaiting_human");
    expect(brief(out.decisions)).toEqual([
      "work: success_signal_unmet → replan_local [unmet.replan-local]",
      "work_v2: success_signal_unmet → replan_local [unmet.replan-local]",
      "work_v3: success_signal_unmet → replan_local [unmet.replan-local]",
      "work_v4: success_signal_unmet → escalate [guard.max-replans]",
    ]);
    expect(flaky.calls).toHaveLength(4);
    expect(
      out.replans.map((r: { fromVersion: number; toVersion: number }) => `${r.fromVersion}→${r.toVersion}`),
    ).toEqual(["1→2", "2→3", "3→4"]);
    expect([1, 2, 3, 4].map((v) => planAtVersion(out as never, v)!.steps.map((s) => s.id))).toEqual([
      ["work"],
      ["work_v2"],
      ["work_v3"],
      ["work_v4"],
    ]);
    expect(out.__interrupt__[0].value.reason).toContain("3 replans already (policy.maxReplans = 3)");
  });

  it("a replan that reproduces the same steps for the same assumption is no progress and escalates", async () => {
    const plan: PlanDraft = {
      assumptions: [{ id: "a", statement: "s" }],
      steps: [
        { id: "prep", goal: "Prep", tool: "prep", produces: ["x"] },
        { id: "work", goal: "Work", tool: "work", dependsOn: ["prep"], successSignal: "output.ok", assumptions: ["a"] },
      ],
    };
    const replan = (r: ReplanRequest): PlanDraft => ({
      steps: r.affectedSteps.map((s) => ({ ...s, id: `${s.id}2`, assumptions: [] })),
    });
    const out = await harness(staticPlanner({ plan, replan }), [
      scriptedTool("prep", [{ x: 1 }]),
      scriptedTool("work", [{ ok: false }]),
    ]).run();
    expect(brief(out.decisions)).toEqual([
      "work: success_signal_unmet → replan_local [unmet.replan-local]",
      "work: success_signal_unmet → escalate [guard.no-progress]",
    ]);
    expect(out.replans).toEqual([]);
    expect(out.guards.count).toBe(1);
  });

  it("failed replans (planner error, invalid draft) count against the guardrails", async () => {
    const plan: PlanDraft = {
      assumptions: [{ id: "a", statement: "s" }],
      steps: [{ id: "work", goal: "Work", tool: "work", successSignal: "output.ok", assumptions: ["a"] }],
    };
    const bad = await harness(
      staticPlanner({ plan, replan: () => ({ steps: [{ id: "x", goal: "x", tool: "rm_rf" }] }) }),
      [scriptedTool("work", [{ ok: false }])],
    ).run();
    expect(brief(bad.decisions)).toEqual([
      "work: success_signal_unmet → replan_local [unmet.replan-local]",
      "work: success_signal_unmet → escalate [replan.invalid-draft]",
    ]);
    expect(bad.decisions[1].reason).toContain('names tool "rm_rf", which is not in the registry');
    expect(bad.guards.count).toBe(1);
    const thrown = await harness(
      staticPlanner({
        plan,
        replan: () => {
          throw new Error("model overloaded");
        },
      }),
      [scriptedTool("work", [{ ok: false }])],
    ).run();
    expect(thrown.decisions[1]).toMatchObject({
      action: "escalate",
      rule: "replan.planner-error",
      reason: "the planner failed to replan: model overloaded",
    });
    expect(thrown.guards.count).toBe(1);
  });

  it("a replan may not rest on an assumption already proven false", async () => {
    const plan: PlanDraft = {
      assumptions: [{ id: "a", statement: "s" }],
      steps: [{ id: "work", goal: "Work", tool: "work", successSignal: "output.ok", assumptions: ["a"] }],
    };
    const out = await harness(
      staticPlanner({
        plan,
        replan: () => ({ steps: [{ id: "again", goal: "Again", tool: "work", assumptions: ["a"] }] }),
      }),
      [scriptedTool("work", [{ ok: false }])],
    ).run();
    expect(out.decisions[1]).toMatchObject({ rule: "replan.invalid-draft" });
    expect(out.decisions[1].reason).toContain('step "again" rests on assumption "a", which was already proven false');
  });

  it("backtracking reuses an unchanged completed step's committed effect, listed once, bounded by maxBacktracksPerStep", async () => {
    const ledger: string[] = [];
    const notify = scriptedTool(
      "notify",
      [
        (_a: unknown, config: { configurable?: { idempotencyKey?: string } }) => {
          const key = config.configurable?.idempotencyKey ?? "";
          if (!ledger.includes(key)) ledger.push(key);
          return { sent: true };
        },
      ],
      { sideEffects: ["email the customer"] },
    );
    const check = scriptedTool("check", [{ ok: false }, { ok: false }, { ok: false }]);
    const plan: PlanDraft = {
      assumptions: [{ id: "a0", statement: "s" }],
      steps: [
        { id: "notify", goal: "Notify", tool: "notify", produces: ["sent"], assumptions: ["a0"] },
        {
          id: "check",
          goal: "Check",
          tool: "check",
          dependsOn: ["notify"],
          successSignal: "output.ok",
          assumptions: ["a0"],
        },
      ],
    };
    let n = 0;
    const replan = (r: ReplanRequest): PlanDraft => {
      n += 1;
      return {
        assumptions: [{ id: `a${n}`, statement: `s${n}` }],
        steps: [
          { id: "notify", goal: "Notify", tool: "notify", produces: ["sent"], assumptions: [`a${n}`] },
          {
            id: "check",
            goal: "Check",
            tool: "check",
            dependsOn: ["notify"],
            successSignal: "output.ok",
            args: { round: n },
            assumptions: [`a${n}`],
          },
        ].filter((s) => r.affectedSteps.some((a) => a.id === s.id)),
      };
    };
    const out = await harness(staticPlanner({ plan, replan }), [notify, check], {
      threadId: "bt",
      policy: { replanCooldownSteps: 0, maxBacktracksPerStep: 2 },
    }).run();
    expect(brief(out.decisions)).toEqual([
      "check: success_signal_unmet → replan_local [unmet.replan-local]",
      "notify: none → reuse [effect.reused]",
      "check: success_signal_unmet → replan_local [unmet.replan-local]",
      "notify: none → reuse [effect.reused]",
      "check: success_signal_unmet → replan_local [unmet.replan-local]",
      "check: success_signal_unmet → escalate [guard.max-backtracks]",
    ]);
    // The operation did not change, so neither did its key: it committed once and is not called again.
    expect(notify.calls).toHaveLength(1);
    expect(ledger).toEqual(["bt:779124b153b3dfce"]);
    expect(out.sideEffects.map((s: { idempotencyKey: string }) => s.idempotencyKey)).toEqual(["bt:779124b153b3dfce"]);
    expect(out.guards.backtracks).toEqual({ notify: 2 });
  });

  it("plan review: a replan with a constraint, then approval; no second approval after a local replan", async () => {
    const t = scriptedTool("t", [{ x: 1 }]);
    const replan = (r: ReplanRequest): PlanDraft => ({
      steps: [{ id: "safe", goal: `Safe (${r.constraints.join(", ")})`, tool: "t", produces: ["x"] }],
    });
    const h = harness(staticPlanner({ plan: { steps: [{ id: "risky", goal: "Risky", tool: "t" }] }, replan }), [t], {
      reviewPlan: true,
    });
    const first = await h.run();
    expect(first.__interrupt__[0].value.kind).toBe("plan_review");
    const second = await h.run(new Command({ resume: { action: "replan", constraint: "no production writes" } }));
    expect(second.status).toBe("completed");
    expect(second.plan.steps[0].goal).toBe("Safe (no production writes)");
    expect(brief(second.decisions)).toEqual(["-: person → replan_global [human.replan]"]);
  });

  it("reviewReplans asks for approval of every new plan version", async () => {
    const plan: PlanDraft = {
      assumptions: [{ id: "a", statement: "s" }],
      steps: [{ id: "work", goal: "Work", tool: "work", successSignal: "output.ok", assumptions: ["a"] }],
    };
    const replan = (): PlanDraft => ({ steps: [{ id: "other", goal: "Other", tool: "other" }] });
    const h = harness(
      staticPlanner({ plan, replan }),
      [scriptedTool("work", [{ ok: false }]), scriptedTool("other", [{}])],
      { reviewPlan: true, reviewReplans: true },
    );
    await h.run();
    const review = await h.run(new Command({ resume: { action: "approve" } }));
    expect(review.__interrupt__[0].value).toMatchObject({ kind: "plan_review", planVersion: 2 });
    const out = await h.run(new Command({ resume: { action: "approve" } }));
    expect(out.status).toBe("completed");
  });
});

describe("trust labels across checkpoints", () => {
  it("labels, plan history and the pending human step survive a new graph instance on SQLite", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const { SqliteSaver } = await import("@langchain/langgraph-checkpoint-sqlite");
    const { createPlanManager } = await import("../../src/index.js");
    const dir = mkdtempSync(join(tmpdir(), "labels-"));
    const file = join(dir, "c.sqlite");
    const config = { configurable: { thread_id: "fraud" } };
    const build = () => {
      const saver = SqliteSaver.fromConnString(file);
      const tools = createFraudTools();
      return {
        saver,
        tools,
        graph: createPlanManager({
          tools: tools.tools,
          planner: staticPlanner({ plan: fraudPlan, replan: fraudReplan }),
        }).compile({ checkpointer: saver }),
      };
    };
    try {
      const a = build();
      await a.graph.invoke({ goal: "loan", context: { applicant_id: "A-7291" } }, config);
      a.saver.db.close();
      const b = build();
      const restored = (await b.graph.getState(config)).values;
      expect(labels(restored.facts)).toMatchObject({
        identity_verified: "trusted",
        compliance_flag: "suspect",
        recommendation: "invalidated",
      });
      expect(planAtVersion(restored as never, 1)!.steps.map((s) => s.id)).toEqual([
        "verify_identity",
        "pull_credit",
        "compliance_check",
        "underwrite",
        "issue_decision",
      ]);
      const out = await b.graph.invoke(
        new Command({ resume: { action: "complete", output: { human_decision: "denied" } } }),
        config,
      );
      expect(out.status).toBe("completed");
      expect(labels(out.facts)).toMatchObject({
        compliance_flag: "suspect",
        recommendation: "invalidated",
        decision: "trusted",
      });
      expect(b.tools.calls).toEqual(["issue_decision"]);
      b.saver.db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("records after a replan that keeps step ids", () => {
  const trip: PlanDraft = {
    assumptions: [{ id: "fare_ok", statement: "the first airline's fare stays under budget" }],
    steps: [
      {
        id: "search",
        goal: "Search flights",
        tool: "search",
        args: { airline: "AA" },
        produces: ["flight"],
        assumptions: ["fare_ok"],
      },
      {
        id: "hold_seat",
        goal: "Hold a seat",
        tool: "hold_seat",
        args: { cabin: "economy" },
        dependsOn: ["search"],
        inputs: ["flight"],
        produces: ["hold_id"],
      },
      {
        id: "price_check",
        goal: "Check the price",
        tool: "price_check",
        dependsOn: ["hold_seat"],
        inputs: ["flight"],
        produces: ["price"],
      },
    ],
  };
  // The same three ids come back: another airline, another cabin, and the price check exactly as it was.
  const replan = (r: ReplanRequest): PlanDraft => ({
    steps: r.affectedSteps.map((s) => {
      if (s.id === "search") return { ...s, args: { airline: "BA" }, assumptions: [] };
      return s.id === "hold_seat" ? { ...s, args: { cabin: "business" } } : s;
    }),
  });
  const tripTools = () => [
    scriptedTool("search", [(a: Record<string, unknown>) => ({ flight: a.airline === "BA" ? "BA117" : "AA100" })]),
    scriptedTool("hold_seat", [
      (a: Record<string, unknown>) => ({ hold_id: `H-${String(a.flight)}-${String(a.cabin)}` }),
    ]),
    scriptedTool("price_check", [new AssumptionBrokenError("fare_ok", "fare rose to 900"), { price: 450 }]),
  ];
  const statuses = (runs: Record<string, { status: string; attempts: number }>) =>
    Object.fromEntries(Object.entries(runs).map(([id, r]) => [id, `${r.status}/${r.attempts}`]));

  it("names the steps kept by id but changed, counts an identical replacement as preserved, and keeps v1's records", async () => {
    const out = await harness(staticPlanner({ plan: trip, replan }), tripTools(), { threadId: "trip" }).run();
    expect(out.status).toBe("completed");
    const { invalidatedSteps, preservedSteps, newSteps, changedSteps, revalidatedSteps } = out.replans[0];
    expect({ invalidatedSteps, preservedSteps, newSteps, changedSteps, revalidatedSteps }).toEqual({
      invalidatedSteps: [],
      preservedSteps: ["price_check"],
      newSteps: [],
      changedSteps: ["search", "hold_seat"],
      revalidatedSteps: ["search", "hold_seat"],
    });
    // v1's attempts survive the reset: the records as v1 ended, and v2's as they are now.
    expect(statuses(runsAtVersion(out as never, 1))).toEqual({
      search: "succeeded/1",
      hold_seat: "succeeded/1",
      price_check: "failed/1",
    });
    expect(runsAtVersion(out as never, 1).hold_seat!.output).toEqual({ hold_id: "H-AA100-economy" });
    expect(runsAtVersion(out as never, 1).price_check!.error).toMatchObject({
      name: "AssumptionBrokenError",
      message: "fare rose to 900",
    });
    expect(statuses(runsAtVersion(out as never, 2))).toEqual({
      search: "succeeded/1",
      hold_seat: "succeeded/1",
      price_check: "succeeded/1",
    });
    expect(runsAtVersion(out as never, 2).hold_seat!.output).toEqual({ hold_id: "H-BA117-business" });
    // Only the three records the replan reset are stored, once, in the entry the replan appended.
    expect(out.planHistory.map((e: { runs?: object }) => Object.keys(e.runs ?? {}))).toEqual([
      ["search", "hold_seat", "price_check"],
    ]);
    // Idempotency keys name the operation now: no record carries the version a step entered the plan in.
    const records = [...Object.values(out.steps), ...Object.values(out.planHistory[0].runs)] as object[];
    expect(records.filter((r) => "sinceVersion" in r)).toEqual([]);
  });

  it("shows a step first run after the replan as not yet run in the version before", async () => {
    const { tools } = createFraudTools();
    const h = harness(staticPlanner({ plan: fraudPlan, replan: fraudReplan }), tools, {
      threadId: "loan-A-7291",
      context: { applicant_id: "A-7291" },
    });
    await h.run();
    const out = await h.run(new Command({ resume: { action: "complete", output: { human_decision: "denied" } } }));
    expect(out.status).toBe("completed");
    // issue_decision ran in v2 only; compliance_check and underwrite ran in v1 and were removed by the replan.
    expect(statuses(runsAtVersion(out as never, 1))).toEqual({
      verify_identity: "succeeded/1",
      pull_credit: "succeeded/1",
      compliance_check: "succeeded/1",
      underwrite: "succeeded/1",
    });
    expect(statuses(runsAtVersion(out as never, 2))).toEqual({
      verify_identity: "succeeded/1",
      pull_credit: "succeeded/1",
      deep_verification: "succeeded/1",
      fraud_review: "succeeded/1",
      issue_decision: "succeeded/1",
    });
    expect(out.planHistory[0].notStarted).toEqual(["issue_decision"]);
  });
});

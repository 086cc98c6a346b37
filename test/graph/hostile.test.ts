/**
 * Plans come from LLMs: each way a hostile plan could reach past its boundary has a test.
 */
import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { staticPlanner, type PlanDraft } from "../../src/index.js";
import { DEFAULT_RETRY, compileExpression, evaluateExpression, validatePlan } from "../../src/policy/index.js";
import { managerWrite } from "../../src/graph/boundary.js";
import { brief, harness, scriptedTool } from "../helpers/graph.js";

describe("hostile plans", () => {
  it("cannot reach a tool outside the registry, directly or through a fallback, and nothing runs", async () => {
    const safe = scriptedTool("safe", [{ ok: true }]);
    for (const plan of [
      {
        steps: [
          { id: "a", goal: "a", tool: "safe" },
          { id: "b", goal: "b", tool: "shell", args: { cmd: "rm -rf /" } },
        ],
      },
      { steps: [{ id: "a", goal: "a", tool: "safe", fallback: { tool: "shell" } }] },
      {
        steps: [
          { id: "a", goal: "a", tool: "safe" },
          { id: "b", goal: "b", human: { prompt: "x" }, tool: "shell" },
        ],
      },
    ] as PlanDraft[]) {
      const out = await harness(plan, [safe]).run();
      expect(out.status).toBe("failed");
      expect(out.outcome.failureReason).toBe("invalid_plan");
    }
    expect(safe.calls).toHaveLength(0);
  });

  it("cannot smuggle an unregistered tool in through a replan", async () => {
    const plan: PlanDraft = {
      assumptions: [{ id: "a", statement: "s" }],
      steps: [{ id: "w", goal: "w", tool: "safe", successSignal: "output.ok", assumptions: ["a"] }],
    };
    const safe = scriptedTool("safe", [{ ok: false }]);
    const out = await harness(
      staticPlanner({
        plan,
        replan: () => ({ steps: [{ id: "x", goal: "x", tool: "safe", fallback: { tool: "exfiltrate" } }] }),
      }),
      [safe],
    ).run();
    expect(brief(out.decisions)).toEqual([
      "w: success_signal_unmet → replan_local [unmet.replan-local]",
      "w: success_signal_unmet → escalate [replan.invalid-draft]",
    ]);
    expect(safe.calls).toHaveLength(1);
  });

  it.each([
    ["process.exit(1)"],
    ['require("fs")'],
    ['eval("1")'],
    ['Function("return 1")'],
    ["this.constructor"],
    ["globalThis"],
    ['facts.x.constructor("return process")()'],
    ["facts"],
    ["size(facts) > 0"],
    ['facts[["a"][0]] == 1'],
    ['"".constructor'],
    ["import('fs')"],
    ["x = 1"],
    [`${"(".repeat(60)}1${")".repeat(60)}`],
    ["a".repeat(1001)],
  ])("CEL cannot run code or read beyond named facts: %s", (source) => {
    // Rejected at validation, before any evaluation.
    expect(compileExpression(source, "precondition").ok).toBe(false);
    expect(evaluateExpression(source, "precondition", { x: { constructor: "not a function" } }).ok).toBe(false);
  });

  it("cannot block the process with a catastrophically backtracking regex", () => {
    // A backtracking engine needs minutes for this; the child is killed if it takes 20 s.
    const source = `"${"a".repeat(40)}!".matches("^(a+)+$")`;
    const run = spawnSync(
      process.execPath,
      ["--import", "tsx", "test/helpers/cel-in-child.ts", JSON.stringify([source, "check", {}, null])],
      { cwd: resolve(import.meta.dirname, "..", ".."), encoding: "utf8", timeout: 20_000 },
    );
    expect(run.signal).toBe(null);
    expect(JSON.parse(run.stdout)).toEqual({ ok: true, value: false });
  });

  it("cannot pass validation with comprehensions nested six deep", () => {
    let check = "v5 > 0";
    for (let i = 5; i >= 0; i--) check = `facts.xs.all(v${i}, ${check})`;
    const draft = { steps: [{ id: "a", goal: "a", tool: "t", when: check }] };
    const result = validatePlan(draft, { tools: new Set(["t"]), policy: { defaultRetry: DEFAULT_RETRY } });
    expect(result.ok ? [] : result.issues.map((i) => `${i.code} ${i.path.join(".")}`)).toEqual([
      "expression_too_costly steps.0.when",
    ]);
  });

  it("reads a tool output with a `constructor` key from CEL like any other output", async () => {
    const results = scriptedTool("results", [{ race: { constructor: "Ferrari", points: 25 } }]);
    const publish = scriptedTool("publish", [{ ok: true }]);
    const plan: PlanDraft = {
      steps: [
        {
          id: "fetch",
          goal: "fetch the race result",
          tool: "results",
          produces: ["race"],
          successSignal: 'output.race.constructor == "Ferrari"',
        },
        {
          id: "post",
          goal: "publish it",
          tool: "publish",
          dependsOn: ["fetch"],
          inputs: ["race"],
          preconditions: ['facts.race.constructor == "Ferrari" && facts.race.points > 20'],
        },
      ],
    };
    const out = await harness(plan, [results, publish]).run();
    expect(brief(out.decisions)).toEqual([]);
    expect(out.status).toBe("completed");
    expect(publish.calls).toEqual([{ race: { constructor: "Ferrari", points: 25 } }]);
  });

  it("hands CEL only the facts an expression names, and tools only their args and named inputs", async () => {
    const seen: Record<string, unknown>[] = [];
    const t = scriptedTool("t", [(a: Record<string, unknown>) => (seen.push(a), { ok: true })]);
    const plan: PlanDraft = {
      steps: [
        {
          id: "a",
          goal: "a",
          tool: "t",
          args: { q: 1 },
          inputs: ["public_id"],
          preconditions: ['facts.public_id != ""'],
        },
      ],
    };
    const out = await harness(plan, [t], { context: { public_id: "p-1", secret_token: "s3cr3t" } }).run();
    expect(out.status).toBe("completed");
    expect(seen).toEqual([{ q: 1, public_id: "p-1" }]);
    const compiled = compileExpression('facts.public_id == "p-1"', "precondition");
    expect(compiled.ok && compiled.expression.facts).toEqual(["public_id"]);
  });

  it("never passes suspect or invalidated facts to a step", async () => {
    const t = scriptedTool("t", [{ ok: true }]);
    const plan: PlanDraft = { steps: [{ id: "a", goal: "a", tool: "t", inputs: ["value"] }] };
    const h = harness(plan, [t]);
    await h.graph.updateState(
      h.config,
      managerWrite({
        facts: {
          value: { value: 1, label: "suspect", producedBy: "x", planVersion: 1, assumptions: [], derivedFrom: [] },
        },
      }),
      "finalize",
    );
    const out = await h.run({ goal: "g" });
    expect(t.calls).toHaveLength(0);
    expect(out.decisions[0].reason).toBe(
      "input fact not trusted: value (suspect); re-running earlier steps cannot fix it (no assumption to revise)",
    );
  });

  it("rejects reserved names as ids, fact keys and context keys", async () => {
    const t = scriptedTool("t", [{ ok: true }]);
    for (const plan of [
      JSON.parse('{"steps":[{"id":"__proto__","goal":"g","tool":"t"}]}'),
      { steps: [{ id: "a", goal: "g", tool: "t", produces: ["constructor"] }] },
      { steps: [{ id: "prototype", goal: "g", tool: "t" }] },
      { steps: [{ id: "a", goal: "g", tool: "t", inputs: ["__proto__"] }] },
    ]) {
      const out = await harness(plan, [t]).run();
      expect(out.outcome.failureReason).toBe("invalid_plan");
    }
    const ctx = await harness({ steps: [{ id: "a", goal: "g", tool: "t" }] }, [t], {
      context: JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}'),
    })
      .run()
      .catch((e: unknown) => e);
    expect(ctx).toMatchObject({ code: "invalid_input", path: "context.__proto__" });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(t.calls).toHaveLength(0);
  });

  it("cannot flood state: an output over the fact size limit is not recorded", async () => {
    const t = scriptedTool("t", [{ blob: "x".repeat(70_000) }]);
    const out = await harness(
      { steps: [{ id: "a", goal: "g", tool: "t", produces: ["blob"], retry: { maxAttempts: 1 } }] },
      [t],
    ).run();
    expect(out.facts.blob).toBeUndefined();
    expect(out.steps.a.error).toEqual({
      name: "OutputRejected",
      message: "output is 70011 bytes of JSON, over the 64000-byte fact limit",
    });
  });

  it("does not blame the plan's assumptions for an output it cannot store", async () => {
    const t = scriptedTool("t", [{ blob: "x".repeat(70_000) }]);
    const plan = {
      assumptions: [{ id: "small", statement: "the source is small" }],
      steps: [{ id: "a", goal: "g", tool: "t", produces: ["blob"], assumptions: ["small"], retry: { maxAttempts: 1 } }],
    };
    const replan = () => ({ steps: [{ id: "b", goal: "g2", tool: "t", produces: ["blob"] }] });
    const out = await harness(staticPlanner({ plan, replan }), [t]).run();
    // Before: reported as an unmet success signal, which falsified "small" and replanned.
    expect(brief(out.decisions)).toEqual(["a: deterministic → escalate [deterministic.escalate]"]);
    expect(out.guards.falsified).toEqual([]);
    expect(out.replans).toEqual([]);
  });

  it("cannot exceed the budget or the guardrails, whatever it asks for", async () => {
    const plan: PlanDraft = {
      steps: Array.from({ length: 5 }, (_, i) => ({ id: `s${i}`, goal: "g", tool: "t", cost: 0.3 })),
    };
    const t = scriptedTool("t", [{}]);
    const out = await harness(plan, [t], { policy: { budget: { maxCost: 1 } } }).run();
    // 5 × 0.3 cannot fit 1: nothing starts.
    expect(t.calls).toHaveLength(0);
    expect(out.budget.spent).toBe(0);
    expect(out.decisions.at(-1).failureClass).toBe("budget_exhausted");
  });
});

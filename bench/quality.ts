/**
 * The plan quality gate's cost (docs/decisions/0040-plan-quality-gate.md): the deterministic gate on
 * a 200-step version (estimates and structure, every expression scanned), and a whole 200-step run
 * per step with the gate on (the default) and off (`policy.quality: false`), pair by pair in the
 * same run. Target: the gate costs at most 1 ms per step.
 */
import { MemorySaver } from "@langchain/langgraph";
import { createPlanManager, staticPlanner, type PlanDraft } from "../src/index.js";
import type { Plan } from "../src/plan/schema/plan.js";
import { DEFAULT_QUALITY } from "../src/policy/quality/findings.js";
import { qualityGate } from "../src/policy/quality/gate.js";
import { chainPlan, noop } from "./fixtures.js";
import { fmt, median, repeat, type Table } from "./lib.js";

/** A version as an LLM writes one: inputs, produced facts, preconditions, signals, and one estimate per 10 steps. */
function richPlan(n: number): Plan {
  const steps = Array.from({ length: n }, (_, i) => ({
    id: `s${i}`,
    goal: `Step ${i}`,
    tool: "noop",
    ...(i > 0 ? { dependsOn: [`s${i - 1}`], inputs: [`k${i - 1}`], preconditions: [`facts.k${i - 1} != null`] } : {}),
    produces: [`k${i}`, `extra${i}`],
    ...(i % 3 === 0 ? { successSignal: `output.k${i} != null && has(facts.k0)` } : {}),
    ...(i % 5 === 0 ? { sideEffects: ["writes"] } : {}),
    assumptions: [`a${i % (n / 10)}`],
  }));
  const assumptions = Array.from({ length: n / 10 }, (_, i) => ({
    id: `a${i}`,
    statement: `assumption ${i}`,
    check: `facts.k${i} > 0`,
    estimate: { low: 1 + i, high: (1 + i) * (i % 2 === 0 ? 50 : 500), unit: "USD", confidence: "low" as const },
  }));
  return { version: 1, steps, assumptions };
}

function gateMs(n: number, rounds: number): number {
  const plan = richPlan(n);
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    qualityGate({ plan, goal: "run the chain and report k199" }, DEFAULT_QUALITY);
    samples.push(performance.now() - t0);
  }
  return median(samples);
}

let thread = 0;

async function runMs(draft: PlanDraft, gateOn: boolean): Promise<number> {
  const graph = createPlanManager({
    tools: [noop],
    planner: staticPlanner({ plan: draft }),
    ...(gateOn ? {} : { policy: { quality: false } }),
  }).compile({ checkpointer: new MemorySaver() });
  const t0 = performance.now();
  const out = (await graph.invoke({ goal: "bench" } as never, { configurable: { thread_id: `q${thread++}` } })) as {
    status: string;
  };
  const ms = performance.now() - t0;
  if (out.status !== "completed") throw new Error(`the bench run ended ${out.status}, not completed`);
  return ms;
}

export async function quality(quick: boolean): Promise<Table> {
  const n = 200;
  const rounds = quick ? 5 : 21;
  const pure = gateMs(n, rounds);
  const runRow = async (label: string, draft: PlanDraft) => {
    await runMs(draft, true); // warm-up
    const pairs = await repeat(
      quick ? 3 : 9,
      async () => [await runMs(draft, true), await runMs(draft, false)] as const,
    );
    const on = median(pairs.map((p) => p[0])) / n;
    const off = median(pairs.map((p) => p[1])) / n;
    const added = median(pairs.map((p) => (p[0] - p[1]) / n));
    return [label, fmt(on, 3), fmt(off, 3), fmt(added, 3), added <= 1 ? "yes" : "NO"];
  };
  // Every step with a signal and a produced fact the next step reads: the gate finds nothing.
  const clean: PlanDraft = {
    steps: chainPlan(n).steps.map((s, i) => ({
      ...s,
      produces: ["ok"],
      successSignal: "output.ok == true",
      ...(i > 0 ? { inputs: ["ok"] } : {}),
    })),
  };
  const rows = [
    await runRow("whole run, every step a finding (50 kept), ms per step", chainPlan(n)),
    await runRow("whole run, no finding, ms per step", clean),
  ];
  return {
    title: "Plan quality gate at 200 steps",
    head: ["measure", "gate on", "gate off (policy.quality: false)", "difference per step (ms)", "≤ 1 ms per step"],
    rows: [
      [
        "deterministic gate, one 200-step version (ms)",
        fmt(pure, 3),
        "0",
        fmt(pure / n, 4),
        pure / n <= 1 ? "yes" : "NO",
      ],
      ...rows,
    ],
    note:
      "The gate runs once per plan version, not per step; its cost is shown per step of the version. The runs are " +
      "200-step chains of a no-op tool on MemorySaver, one whose every step draws a finding (50 kept in state), one " +
      "the gate finds nothing in; pairs alternate gate on and off in the same process, and the difference is the " +
      "median of per-pair differences (it can come out below zero: noise).",
  };
}

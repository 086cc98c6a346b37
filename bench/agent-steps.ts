/**
 * Model routing for agent steps (docs/decisions/0021-agent-steps.md): a 20-step coding-agent plan
 * whose steps are done by scripted fake models, one per tier, each with a price and an error rate
 * that grows with the step's difficulty; a validation tool (the tests) rejects wrong answers.
 * Four set-ups run the same plan through the real manager: every step on the strong model, every
 * step on the fast one, routed by difficulty (one tier up after a failure), and routed with blind
 * retries (no feedback). Answers are drawn from a seeded generator keyed by (run, step, call), so
 * every figure is reproducible.
 */
import { HumanMessage, type BaseMessage } from "@langchain/core/messages";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { z } from "zod";
import { createPlanManager, PermanentError, staticPlanner, type ModelTier, type Step } from "../src/index.js";
import { ScriptedChatModel } from "../test/helpers/scripted-chat-model.js";
import { fmt, type Table } from "./lib.js";

/** Difficulty of the 20 steps, 1 (rename a variable) to 5 (fix a race). */
const DIFFICULTY = [1, 1, 2, 2, 1, 2, 3, 1, 2, 3, 4, 2, 3, 5, 3, 1, 4, 3, 5, 4];
/** Chance that a model's first answer to a step of difficulty d passes the tests. */
const PASS: Record<ModelTier, number[]> = {
  fast: [0.95, 0.85, 0.6, 0.3, 0.1],
  default: [0.98, 0.95, 0.85, 0.7, 0.45],
  strong: [0.99, 0.98, 0.95, 0.9, 0.8],
};
/** Told why its last answer failed, a model fixes this share of what it would otherwise get wrong. */
const FEEDBACK_FIX = 0.6;
/** Asked again blind, a model that got a step wrong repeats its wrong answer this often (seed 000's twelve tries). */
const BLIND_REPEAT = 0.6;
/** USD per million tokens. */
const PRICES = {
  "bench-fast": { input: 0.25, output: 2 },
  "bench-default": { input: 1.25, output: 10 },
  "bench-strong": { input: 5, output: 40 },
};
const USAGE = { input: 2_000, output: 400 };

/** A uniform draw in [0, 1) from a string key (FNV-1a, then a xorshift round). */
function draw(key: string): number {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  h ^= h << 13;
  h ^= h >>> 17;
  h ^= h << 5;
  return (h >>> 0) / 2 ** 32;
}

/** A fake model of one tier: it passes with its tier's chance for the step, better when told why it failed. */
function tierModel(tier: ModelTier, run: number, calls: Map<string, ModelTier[]>) {
  const answer = (messages: BaseMessage[]) => {
    const text = String(messages.find((m) => m instanceof HumanMessage)?.content ?? "");
    const stepId = /Your step: (\S+)/.exec(text)?.[1] ?? "?";
    const before = calls.get(stepId) ?? [];
    calls.set(stepId, [...before, tier]);
    const base = PASS[tier][DIFFICULTY[Number(stepId.slice(1))]! - 1]!;
    const pass = text.includes("was rejected")
      ? 1 - (1 - base) * (1 - FEEDBACK_FIX)
      : before.includes(tier)
        ? base * (1 - BLIND_REPEAT)
        : base;
    const call = before.length + 1;
    return { patch: draw(`${run}:${stepId}:${call}`) < pass ? "good" : `wrong-${call}` };
  };
  return new ScriptedChatModel([answer], { model: `bench-${tier}`, usage: USAGE });
}

const runTests = tool(
  async ({ patch }) => {
    if (patch !== "good") throw new PermanentError(`2 tests failed on ${patch}: expected 3, got 2`);
    return { passed: true };
  },
  { name: "run_tests", description: "Run the tests", schema: z.object({ patch: z.string() }) },
);

type Setup = "all-strong" | "all-fast" | "routed" | "routed, no feedback";

function routedTier(d: number): ModelTier {
  return d <= 2 ? "fast" : d === 3 ? "default" : "strong";
}

function steps(setup: Setup): Step[] {
  return DIFFICULTY.map((d, i) => ({
    id: `s${i}`,
    goal: `Coding task ${i} (difficulty ${d})`,
    agent: "coder",
    tier: setup.startsWith("routed") ? routedTier(d) : "default",
    produces: ["patch"],
    validate: { tool: "run_tests" },
    retry: { maxAttempts: 3, backoff: "none" },
    // A step that fails for good is skipped, so one run measures all 20.
    optional: true,
  }));
}

interface Result {
  succeeded: number;
  /** Attempts of the steps that landed, and of every step. */
  attempts: number[];
  all: number[];
  cost: number;
}

async function runOnce(setup: Setup, run: number): Promise<Result> {
  const calls = new Map<string, ModelTier[]>();
  const only = (tier: ModelTier) => ({ default: tierModel(tier, run, calls) });
  const models =
    setup === "all-strong"
      ? only("strong")
      : setup === "all-fast"
        ? only("fast")
        : {
            fast: tierModel("fast", run, calls),
            default: tierModel("default", run, calls),
            strong: tierModel("strong", run, calls),
          };
  const graph = createPlanManager({
    tools: [runTests],
    agents: { coder: models.default },
    models,
    prices: PRICES,
    planner: staticPlanner({ plan: { steps: steps(setup) } }),
    policy: { maxConcurrency: 4, maxDecisions: 1_000, agentFeedback: setup !== "routed, no feedback" },
  }).compile({ checkpointer: new MemorySaver() });
  const out = await graph.invoke({ goal: "Land 20 fixes" }, { configurable: { thread_id: `agents-${run}` } });
  const runs = Object.values(out.steps);
  const done = runs.filter((r) => r.status === "succeeded");
  return {
    succeeded: done.length,
    attempts: done.map((r) => r.attempts),
    all: runs.map((r) => r.attempts),
    cost: out.usage.reduce((sum, u) => sum + u.cost, 0),
  };
}

export async function agentSteps(quick: boolean): Promise<Table> {
  const runs = quick ? 3 : 20;
  const setups: Setup[] = ["all-strong", "all-fast", "routed", "routed, no feedback"];
  const rows: (string | number)[][] = [];
  let strongCost = 0;
  for (const setup of setups) {
    const results: Result[] = [];
    for (let run = 0; run < runs; run++) results.push(await runOnce(setup, run));
    const total = runs * DIFFICULTY.length;
    const succeeded = results.reduce((s, r) => s + r.succeeded, 0);
    const attempts = results.flatMap((r) => r.attempts);
    const all = results.flatMap((r) => r.all);
    const cost = results.reduce((s, r) => s + r.cost, 0) / runs;
    if (setup === "all-strong") strongCost = cost;
    rows.push([
      setup,
      `${fmt((100 * succeeded) / total, 1)}%`,
      fmt(attempts.reduce((s, a) => s + a, 0) / attempts.length, 2),
      Math.max(...attempts),
      fmt(all.reduce((s, a) => s + a, 0) / all.length, 2),
      `$${fmt(cost, 4)}`,
      setup === "all-strong" ? "—" : `${fmt((100 * (strongCost - cost)) / strongCost, 0)}%`,
    ]);
  }
  return {
    title: "Agent steps: model routing and the validation loop (20-step coding plan)",
    head: [
      "set-up",
      "steps landed",
      "attempts per landed step",
      "most attempts to land one",
      "attempts per step",
      "cost per run",
      "saved vs all-strong",
    ],
    rows,
    note:
      `${runs} runs of ${DIFFICULTY.length} steps per set-up, retry.maxAttempts 3. Pass rates by difficulty 1–5: ` +
      `fast ${PASS.fast.join("/")}, default ${PASS.default.join("/")}, strong ${PASS.strong.join("/")}; feedback fixes ` +
      `${FEEDBACK_FIX * 100}% of the rest; a blind retry on the same model repeats its mistake ${BLIND_REPEAT * 100}% of the time. Prices per M tokens (in/out): fast $0.25/$2, default $1.25/$10, strong $5/$40; ` +
      `${USAGE.input}/${USAGE.output} tokens per call. Routed: difficulty 1–2 fast, 3 default, 4–5 strong, one tier up after a failure.`,
  };
}

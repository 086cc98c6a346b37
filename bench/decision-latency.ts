/** Decision latency: the pure classifier on the rule fast path, alone and inside 100 concurrent runs. */
import { classify, resolvePolicy, type ClassifyInput } from "../src/policy/index.js";
import { fmt, median, type Table } from "./lib.js";

export async function decisionLatency(quick: boolean): Promise<Table> {
  const policy = resolvePolicy({});
  const standing = { available: true, count: 0, spent: 0, coolingDown: [], falsified: [] };
  const inputs: ClassifyInput[] = [
    {
      deviation: { kind: "error", attempt: 1, message: "503", error: { name: "HttpError", message: "x", status: 503 } },
      step: { id: "s", goal: "g", tool: "t" },
      run: { status: "failed", attempts: 1 },
      policy,
      replan: standing,
      decisionCount: 0,
    },
    {
      deviation: { kind: "error", attempt: 1, message: "404", error: { name: "HttpError", message: "x", status: 404 } },
      step: { id: "s", goal: "g", tool: "t", fallback: { tool: "u" } },
      run: { status: "failed", attempts: 1 },
      policy,
      replan: standing,
      decisionCount: 0,
    },
    {
      deviation: { kind: "assumption_broken", attempt: 1, message: "x", assumptionId: "a" },
      step: { id: "s", goal: "g", tool: "t", assumptions: ["a"] },
      run: { status: "succeeded", attempts: 1 },
      policy,
      replan: standing,
      decisionCount: 0,
    },
  ];
  const iterations = quick ? 20_000 : 100_000;
  const samples: number[] = [];
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    for (let i = 0; i < iterations; i++) classify(inputs[i % inputs.length]!);
    samples.push(((performance.now() - started) * 1000) / iterations);
  }

  // 100 concurrent runs, each taking decisions between awaits (as nodes do): time per decision.
  const runs = 100;
  const perRun = quick ? 200 : 1000;
  const concurrent: number[] = [];
  for (let round = 0; round < 5; round++) {
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: runs }, async (_, r) => {
        for (let i = 0; i < perRun; i++) {
          classify(inputs[(i + r) % inputs.length]!);
          await Promise.resolve();
        }
      }),
    );
    concurrent.push(((performance.now() - t0) * 1000) / (runs * perRun));
  }
  return {
    title: "Decision latency",
    head: ["measure", "value", "target < 1 ms"],
    rows: [
      [
        "classify() on the rule fast path, µs per decision (median of 5 × " + iterations.toLocaleString("en") + ")",
        fmt(median(samples), 2),
        median(samples) < 1000 ? "yes" : "NO",
      ],
      [
        `100 concurrent runs × ${perRun} decisions, µs per decision (median of 5)`,
        fmt(median(concurrent), 2),
        median(concurrent) < 1000 ? "yes" : "NO",
      ],
    ],
    note: "Three rule paths alternate: transient retry (503), fallback (404), local replan (assumption broken).",
  };
}

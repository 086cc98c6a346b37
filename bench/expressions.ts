/**
 * Expression cost: what one CEL evaluation costs on the step path (compiled and cached, as the
 * nodes use it), and how long the worst expressions a plan may hold block the process before
 * the evaluation budget stops them (docs/decisions/0029-cel-expression-cost.md).
 */
import { evaluateExpression } from "../src/policy/index.js";
import { fmt, median, type Table } from "./lib.js";

const items = Array.from({ length: 50 }, (_, i) => ({ sku: `SKU-${i}`, qty: i + 1, price: 9.5 }));
const TYPICAL: [string, string, "precondition" | "successSignal", Record<string, unknown>, unknown][] = [
  ["arithmetic over one fact", "facts.qty + 1 > 2", "precondition", { qty: 2 }, undefined],
  ["field of an object output", 'output.status in ["done", "ok"]', "successSignal", {}, { status: "done", id: 7 }],
  ["all() over 50 objects", "facts.items.all(i, i.qty > 0 && i.price < 10.0)", "precondition", { items }, undefined],
  ["matches() on a short string", 'facts.sku.matches("^SKU-[0-9]+$")', "precondition", { sku: "SKU-42" }, undefined],
];

const xs = Array.from({ length: 120 }, (_, i) => i);
const WORST: [string, string, Record<string, unknown>][] = [
  ["3 nested all() over 120 elements", "facts.xs.all(a, facts.xs.all(b, facts.xs.all(c, a + b + c >= 0)))", { xs }],
  ['"a…a!".matches("^(a+)+$"), 40 a', `"${"a".repeat(40)}!".matches("^(a+)+$")`, {}],
  [
    "matches() of a 3,000-instruction RE2 program, 64 KB text",
    'facts.s.matches("(?:a?){1000}a{1000}")',
    { s: "a".repeat(64_000) },
  ],
];

function timePerCall(fn: () => unknown, iterations: number): number {
  const samples: number[] = [];
  for (let round = 0; round < 5; round++) {
    const started = performance.now();
    for (let i = 0; i < iterations; i++) fn();
    samples.push(((performance.now() - started) * 1000) / iterations);
  }
  return median(samples);
}

export async function expressions(quick: boolean): Promise<Table> {
  const iterations = quick ? 5_000 : 50_000;
  const rows: string[][] = [];
  for (const [label, source, kind, facts, output] of TYPICAL) {
    const result = evaluateExpression(source, kind, facts, output);
    const us = timePerCall(() => evaluateExpression(source, kind, facts, output), iterations);
    rows.push([
      `${label}: \`${source}\``,
      `${fmt(us, 2)} µs`,
      JSON.stringify(result.ok ? result.value : result.message),
    ]);
  }
  for (const [label, source, facts] of WORST) {
    const started = performance.now();
    const result = evaluateExpression(source, "check", facts);
    const ms = performance.now() - started;
    rows.push([
      `worst case: ${label}`,
      `${fmt(ms, 0)} ms`,
      result.ok ? JSON.stringify(result.value) : "stopped by the budget",
    ]);
  }
  await Promise.resolve();
  return {
    title: "Expression cost",
    head: ["evaluation", "time", "result"],
    rows,
    note: `Typical rows: µs per evaluation, median of 5 × ${iterations.toLocaleString("en")}, compiled expression cached. Worst cases: one evaluation, wall time until its result or the budget's refusal.`,
  };
}

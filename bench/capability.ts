/**
 * The capability guard's cost per replan (docs/architecture.md "Untrusted facts"): it runs once per replan, on the
 * proposal, against every earlier version and the text of every post-plan fact. Worst cases by plan size,
 * versions and fact text; the planner call it follows takes seconds.
 */
import type { Fact } from "../src/plan/schema/run.js";
import type { Step } from "../src/plan/schema/step.js";
import { capabilityBaseline, capabilityGuard } from "../src/policy/index.js";
import { fmt, median, type Table } from "./lib.js";

function plan(steps: number, version: number): Step[] {
  return Array.from({ length: steps }, (_, i) => ({
    id: `s${i}`,
    goal: `Step ${i}`,
    tool: i % 5 === 0 ? "pay" : `read_${i % 7}`,
    args: { account: `ACCT-${version}-${i}`, note: `note ${i}` },
    inputs: i > 0 ? [`k${i - 1}`] : [],
    produces: [`k${i}`],
  }));
}

function facts(count: number, bytes: number): Record<string, Fact> {
  const text = "lorem ipsum dolor sit amet ".repeat(Math.ceil(bytes / 27)).slice(0, bytes);
  return Object.fromEntries(
    Array.from({ length: count }, (_, i) => [
      `k${i}`,
      { value: text, label: "trusted", producedBy: `s${i}`, planVersion: 1, assumptions: [], derivedFrom: [] },
    ]),
  );
}

function measure(steps: number, versions: number, factCount: number, bytes: number, rounds: number): number {
  const earlier = Array.from({ length: versions }, (_, v) => plan(steps, v + 1));
  const known = facts(factCount, bytes);
  // One failure report per step, as a long run's decisions quote tools' errors (traced like facts).
  const untrusted = Array.from({ length: steps }, (_, i) => ({
    text: `s${i}: TransientError: upstream ${i} answered 503; retry after ${i} ms`.padEnd(200, "."),
    source: "a tool's error message" as const,
  }));
  // The replan replaces the second half with new side-effecting steps (new ids, new literals): all checks run.
  const replacement = plan(steps, versions + 1)
    .slice(steps / 2)
    .map((s) => ({ ...s, id: `n${s.id}`, tool: "pay" }));
  const samples: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    capabilityGuard({
      replacement,
      previous: earlier.at(-1)!,
      proposed: [...earlier.at(-1)!.slice(0, steps / 2), ...replacement],
      baseline: capabilityBaseline(earlier, ["the goal"]),
      facts: known,
      replanTools: "read-only",
      sideEffectsOf: (tool) => (tool === "pay" ? ["moves money"] : []),
      untrusted,
    });
    samples.push(performance.now() - t0);
  }
  return median(samples);
}

export async function capability(quick: boolean): Promise<Table> {
  const rounds = quick ? 5 : 21;
  const cases: [number, number, number, number][] = [
    [10, 1, 10, 1_000],
    [50, 3, 50, 4_000],
    [200, 3, 200, 4_000],
    [200, 10, 200, 64_000],
  ];
  return {
    title: "Capability guard per replan",
    head: ["plan steps", "earlier versions", "post-plan facts × bytes", "ms per replan (median)"],
    rows: cases.map(([steps, versions, count, bytes]) => [
      steps,
      versions,
      `${count} × ${bytes.toLocaleString("en")}`,
      fmt(measure(steps, versions, count, bytes, rounds), 2),
    ]),
    note:
      "Half the plan replaced by new side-effecting steps, every literal traced against all fact text and one " +
      "200-byte error text per step, every input chain walked back to the start (worst case).",
  };
}

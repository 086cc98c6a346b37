import { describe, expect, it } from "vitest";
import type { Fact } from "../../src/plan/schema/run.js";
import type { Step } from "../../src/plan/schema/step.js";
import { capabilityBaseline, capabilityGuard, planBaseline } from "../../src/policy/capability/guard.js";
import type { CapabilityBaseline } from "../../src/policy/capability/types.js";

// docs/decisions/0030-long-runs-per-step-cost.md: an extension of a long plan pays for what it adds.
const fact = (value: unknown, producedBy: string): Fact => ({
  value,
  label: "trusted",
  producedBy,
  planVersion: 1,
  assumptions: [],
  derivedFrom: [],
});
const step = (n: number, extra: Partial<Step> = {}): Step => ({
  id: `s${n}`,
  goal: `Step ${n}`,
  tool: n % 2 === 0 ? "fetch" : "parse",
  args: { [`r${n}`]: `value-${n}` },
  produces: [`r${n}`],
  ...extra,
});
const plain = (b: CapabilityBaseline) => ({
  tools: [...b.tools].sort(),
  inputs: [...b.inputs].map(([t, keys]) => [t, [...keys].sort()]).sort(),
  known: [...b.known].sort(),
});

describe("the capability guard on a long plan", () => {
  it("reads the facts only for the keys the new steps read", () => {
    const read: string[] = [];
    const record: Record<string, Fact> = {};
    for (let n = 1; n <= 50; n++) record[`r${n}`] = fact(`value-${n}`, `s${n}`);
    let listed = 0;
    const facts = new Proxy(record, {
      ownKeys: (target) => {
        listed += 1;
        return Reflect.ownKeys(target);
      },
      get: (target, key, receiver) => {
        if (typeof key === "string") read.push(key);
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    const previous = Array.from({ length: 50 }, (_, i) => step(i + 1));
    const added = [step(51, { inputs: ["r7"] }), step(52)];
    const hit = capabilityGuard({
      replacement: added,
      previous,
      proposed: [...previous, ...added],
      baseline: capabilityBaseline([previous], ["a long goal"]),
      facts,
      replanTools: "read-only",
      sideEffectsOf: () => [],
      finished: new Set(previous.map((s) => s.id)),
    });
    expect(hit).toBeUndefined();
    expect(listed).toBe(0);
    expect(read).toEqual([]);
  });

  it("still finds a tainted key a new side-effecting step reads, by its fact", () => {
    const previous = [step(1), step(2, { tool: "send", inputs: ["r1"] })];
    const added = [step(3, { tool: "send", inputs: ["r1"] }), step(4, { tool: "send", inputs: ["r9"] })];
    const hit = capabilityGuard({
      replacement: added,
      previous,
      proposed: [...previous, ...added],
      baseline: capabilityBaseline([[previous[0]!]], []),
      facts: { r1: fact("one", "s1"), r9: fact("nine", "input") },
      replanTools: "any",
      sideEffectsOf: (tool) => (tool === "send" ? ["sends"] : []),
      finished: new Set(["s1", "s2"]),
    });
    expect(hit?.findings.map((f) => f.detail)).toEqual([
      'step "s3" would pass fact "r1" (produced by step "s1") to send',
    ]);
  });
});

describe("planBaseline", () => {
  const trusted = ["a long goal"];
  it("equals the baseline gathered whole, as the plan appends, shrinks and changes", () => {
    const steps = Array.from({ length: 30 }, (_, i) => step(i + 1, i === 4 ? { inputs: ["r1", "r2"] } : {}));
    const versions = [steps.slice(0, 10), steps.slice(0, 20), steps, steps.slice(0, 5)];
    const changed = [...steps.slice(0, 3), step(4, { tool: "send", inputs: ["r3"] }), ...steps.slice(4, 12)];
    for (const v of [...versions, changed, steps])
      expect(plain(planBaseline(v, trusted))).toEqual(plain(capabilityBaseline([v], trusted)));
    // Arguments vouch only from the steps given as vouched (plan version 1), as in the whole baseline.
    const first = steps.slice(0, 2);
    for (const v of [...versions, changed, steps])
      expect(plain(planBaseline(v, trusted, first))).toEqual(plain(capabilityBaseline([v], trusted, first)));
    expect(plain(planBaseline(steps, trusted, first)).known).toEqual(["a long goal", "value-1", "value-2"]);
  });

  it("reads the trusted text only when its known values are read", () => {
    let reads = 0;
    const steps = Array.from({ length: 4 }, (_, i) => step(i + 1));
    const baseline = planBaseline(steps, () => (reads++, ["a long goal"]), steps.slice(0, 1));
    expect([[...baseline.tools].sort(), reads]).toEqual([["fetch", "parse"], 0]);
    expect([baseline.known, baseline.known.length, reads]).toEqual([["a long goal", "value-1"], 2, 1]);
  });

  it("keeps the answer it gave for a plan when the plan grows later", () => {
    const steps = Array.from({ length: 6 }, (_, i) => step(i + 1));
    const first = planBaseline(steps.slice(0, 3), trusted);
    planBaseline([...steps, step(7, { tool: "send" })], trusted);
    expect([...first.known].sort()).toEqual(["a long goal", "value-1", "value-2", "value-3"]);
  });
});

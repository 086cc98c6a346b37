/**
 * An extension's draft is checked against the plan, the step records and the facts through
 * lookups over the plan's own indexes (docs/decisions/0030-long-runs-per-step-cost.md): the same
 * issues, suggestions included, as when they were lists.
 */
import { describe, expect, it } from "vitest";
import { staticPlanner } from "../../src/planners/static-planner.js";
import type { PlanDraft } from "../../src/plan/schema/plan.js";
import type { Step } from "../../src/plan/schema/step.js";
import type { PlanIssue } from "../../src/plan/issues.js";
import { harness, scriptedTool } from "../helpers/graph.js";

const step = (n: number, extra: Partial<Step> = {}): Step => ({
  id: `s${n}`,
  goal: `Step ${n}`,
  tool: "work",
  args: { [`r${n}`]: n },
  produces: [`r${n}`],
  ...(n > 1 ? { dependsOn: [`s${n - 1}`] } : {}),
  ...extra,
});

describe("an extension's checks on a long plan", () => {
  it("finds used ids, dependencies and unproduced inputs as before", async () => {
    const seen: PlanIssue[][] = [];
    const drafts: PlanDraft[] = [
      { steps: [step(2)], complete: true },
      { steps: [{ ...step(4), id: "s1" }], complete: true },
      { steps: [step(4, { dependsOn: ["s9"] })], complete: true },
      { steps: [step(4, { inputs: ["r22"] })], complete: true },
      { steps: [step(4, { inputs: ["r3", "r1"] })], complete: true },
    ];
    const planner = staticPlanner({
      plan: { steps: [step(1), step(2), step(3)], complete: false },
      extend: (req) => {
        for (const d of drafts) seen.push(req.validate!(d));
        return { steps: [step(4)], complete: true };
      },
    });
    const work = scriptedTool("work", [(args: Record<string, unknown>) => ({ ...args })]);
    const out = await harness(planner, [work]).run();
    expect(out.status).toBe("completed");
    expect(seen.map((issues) => issues.map((i) => `${i.code}: ${i.message}`))).toEqual([
      ['duplicate_id: step id "s2" is used twice'],
      ['duplicate_id: step id "s1" is used twice'],
      ['dangling_dependency: step "s4" depends on "s9", which is not a step of the plan'],
      [
        'unproduced_input: step "s4" reads input "r22", which neither the context nor any step produces (did you mean "r2"?)',
      ],
      [],
    ]);
  });
});

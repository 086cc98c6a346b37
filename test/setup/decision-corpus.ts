/**
 * Every decision any test makes is checked against its rule in the table (src/policy/ladder/rules.ts):
 * `decide` is wrapped so each decision it builds is collected, and a test file fails after its
 * tests if one of them carries a class or an action its rule does not declare.
 */
import { afterAll, vi } from "vitest";
import { disagreement } from "../../src/policy/ladder/rules.js";
import type { Decision } from "../../src/policy/ladder/decision.js";

const seen: Decision[] = [];

vi.mock("../../src/policy/ladder/decide.js", async (importOriginal) => {
  const original = await importOriginal<typeof import("../../src/policy/ladder/decide.js")>();
  return {
    ...original,
    decide: (...args: Parameters<typeof original.decide>) => {
      const decision = original.decide(...args);
      seen.push(decision);
      return decision;
    },
  };
});

afterAll(() => {
  const wrong = seen.flatMap((d) => disagreement(d) ?? []);
  if (wrong.length > 0) throw new Error(`decisions that disagree with the rule table:\n${wrong.join("\n")}`);
});

/** The decisions collected so far in this test file (the corpus test reads it). */
export function decisionsSeen(): readonly Decision[] {
  return seen;
}

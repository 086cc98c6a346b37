import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RULES, isRuleId } from "../../src/policy/ladder/rules.js";
import { EVIDENCE_RULES } from "../../src/policy/ladder/evidence-rules.js";
import { DecisionSchema, type Decision } from "../../src/policy/ladder/decision.js";

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

describe("the rule table", () => {
  it("lists every rule id a decision can carry, and no evidence id doubles as one", () => {
    const quoted = new Set<string>();
    const families =
      "transient|deterministic|exhausted|unmet|assumption|precondition|scope|budget|unknown|guard|replan|human|optional|llm|rate|agent|route|effect";
    for (const file of sources("src")) {
      if (file.endsWith("evidence-rules.ts")) continue;
      for (const m of readFileSync(file, "utf8").matchAll(new RegExp(`"((?:${families})\\.[a-z0-9-]+)"`, "g")))
        quoted.add(m[1]!);
    }
    const unknown = [...quoted].filter((id) => !isRuleId(id) && !EVIDENCE_RULES.some((r) => r.id === id));
    expect(unknown).toEqual([]);
    expect(Object.keys(RULES)).toHaveLength(68);
  });

  it("decides replan.unavailable and guard.new-capability in policy only, and asks once whether the planner replans", () => {
    const outside = (pattern: RegExp) =>
      sources("src")
        .filter((file) => !file.startsWith(join("src", "policy")) && pattern.test(readFileSync(file, "utf8")))
        .sort();
    expect(outside(/"(replan\.unavailable|guard\.new-capability)"/)).toEqual([]);
    expect(sources("src").filter((file) => /planner\.replan ===/.test(readFileSync(file, "utf8")))).toEqual([
      join("src", "runtime", "options.ts"),
    ]);
  });

  it("types and validates Decision.rule by the table: a made-up rule id is refused", () => {
    const decision = {
      seq: 1,
      attempt: 1,
      failureClass: "transient",
      action: "retry",
      rule: "transient.retry",
      reason: "503",
      planVersion: 1,
      at: "2026-01-01T00:00:00.000Z",
    } as const;
    expect(DecisionSchema.safeParse(decision).success).toBe(true);
    const made = DecisionSchema.safeParse({ ...decision, rule: "transient.retry-forever" });
    expect(made.success ? [] : made.error.issues.map((i) => [i.path.join("."), i.code])).toEqual([
      ["rule", "invalid_value"],
    ]);
    // @ts-expect-error: not a rule id of the table
    const typed: Decision = { ...decision, rule: "transient.retry-forever" };
    expect(typed.rule).toBe("transient.retry-forever");
  });
});

/** The plan reference (docs/guides/configuration.md) cannot drift from the schemas: every field has a row, and every row a field. */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import { AssumptionSchema, PlanDraftSchema } from "../../src/plan/schema/plan.js";
import { FallbackSchema, HumanTaskSchema, StepSchema } from "../../src/plan/schema/step.js";

const readme = readFileSync(join(resolve(import.meta.dirname, "..", ".."), "docs/guides/configuration.md"), "utf8");
const reference = readme.slice(readme.indexOf("### Plan reference"), readme.indexOf("### Limits"));

/** The field names in the first column of the table under `label` ("Step fields:"). */
function rows(label: string): string[] {
  const start = reference.indexOf(`\n${label}\n`);
  if (start < 0) throw new Error(`README's plan reference has no table labelled "${label}"`);
  const lines = reference.slice(start + label.length + 2).split("\n");
  const table = lines.slice(lines.findIndex((l) => l.startsWith("|")));
  const body = table
    .slice(
      0,
      table.findIndex((l) => !l.startsWith("|")),
    )
    .slice(2);
  return body.map((l) => /^\| `([^`]+)`/.exec(l)?.[1] ?? `unreadable row: ${l}`);
}

describe("README plan reference", () => {
  it.each([
    ["Plan fields:", "PlanDraftSchema", PlanDraftSchema],
    ["Step fields:", "StepSchema", StepSchema],
    ["Assumption fields:", "AssumptionSchema", AssumptionSchema],
    ["Fallback fields:", "FallbackSchema", FallbackSchema],
    ["Human task fields (`step.human`):", "HumanTaskSchema", HumanTaskSchema],
  ] as const)("%s has one row per field of %s", (label, name, schema: z.ZodObject) => {
    const fields = Object.keys(schema.shape);
    const listed = rows(label);
    const missing = fields.filter((f) => !listed.includes(f)).map((f) => `missing a row for "${f}" (${name} has it)`);
    const extra = listed.filter((f) => !fields.includes(f)).map((f) => `row "${f}" names a field ${name} lacks`);
    expect([...missing, ...extra], `README "${label}" table`).toEqual([]);
  });
});

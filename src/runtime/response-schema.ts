/**
 * The JSON Schema of the answers a question accepts, surfaced to clients (Studio, the SDK) on the
 * interrupt's `response_schema` so they can render a form: only the options offered, and for a
 * human step's `complete` the keys its output must hold. It is JSON Schema, not zod, so a
 * malformed answer does not fail the run: the human node asks again with `error` set instead.
 */
import { z } from "zod";
import { ResumeValueSchema, type ResumeAction } from "../plan/schema/interrupts.js";
import { type Step } from "../plan/schema/step.js";

interface ActionSchema {
  properties: { action: { const: string } } & Record<string, unknown>;
  [key: string]: unknown;
}

const ALL = z.toJSONSchema(ResumeValueSchema) as unknown as { $schema?: string; oneOf: ActionSchema[] };

export function responseSchema(options: readonly ResumeAction[], step: Step | undefined): Record<string, unknown> {
  const produces = step?.produces ?? [];
  // In the order the question offers them, as a form would list them.
  const oneOf = options
    .map((o) => ALL.oneOf.find((s) => s.properties.action.const === o))
    .filter((s): s is ActionSchema => s !== undefined)
    .map((s) => (s.properties.action.const === "complete" && produces.length > 0 ? completeSchema(s, produces) : s));
  return { ...(ALL.$schema ? { $schema: ALL.$schema } : {}), oneOf };
}

function completeSchema(schema: ActionSchema, produces: readonly string[]): ActionSchema {
  const output = {
    type: "object",
    properties: Object.fromEntries(produces.map((k) => [k, {}])),
    required: [...produces],
  };
  return { ...schema, properties: { ...schema.properties, output } };
}

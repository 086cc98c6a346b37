/** The input and output schemas the plan service's tools share (src/mcp/server.ts). */
import { z } from "zod";

export const planId = z.string().min(1).max(200).describe("The plan's id, from plan_create or plan_list.");

export const StatusShape = z.looseObject({
  plan_id: z.string(),
  graph: z.string(),
  goal: z.string(),
  status: z.string(),
  plan_version: z.number().nullable(),
  steps: z.array(
    z.object({
      id: z.string(),
      goal: z.string(),
      status: z.string(),
      attempts: z.number(),
      facts: z.record(z.string(), z.string()),
      started_at: z.string().optional(),
      in_doubt: z.literal(true).optional(),
    }),
  ),
  progress: z.object({ done: z.number(), total: z.number() }),
  timing: z.object({ started_at: z.string().nullable(), last_progress_at: z.string().nullable() }),
  usage: z.object({ cost: z.number(), replan_cost: z.number(), input_tokens: z.number(), output_tokens: z.number() }),
  server: z.object({ live: z.boolean() }).optional(),
  message: z.string().optional(),
});

export const Started = z.object({ plan_id: z.string(), status: z.string() });

/** `plan_create`'s input, naming the graphs served. */
export const createInput = (graphs: readonly string[]) => ({
  goal: z.string().describe("What the plan must achieve."),
  context: z.record(z.string(), z.unknown()).optional().describe("Input facts, by key."),
  plan: z
    .record(z.string(), z.unknown())
    .optional()
    .describe("A plan draft ({ steps, assumptions? }) to run instead of asking the graph's planner."),
  graph: z
    .string()
    .optional()
    .describe(`One of: ${graphs.join(", ")} (default: the first).`),
  parent_plan_id: z.string().optional().describe("The plan this one iterates on."),
  idempotency_key: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe("Names this request: the same key with another goal, context, plan or graph is refused."),
  new_run: z
    .boolean()
    .optional()
    .describe(
      "Start a new plan even when the same goal, context and graph made one within 10 minutes " +
        "(after a plan that failed, was aborted or stopped). Not with an idempotency_key that names a plan already.",
    ),
});

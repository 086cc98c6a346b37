/** The shape of `createPlanManager`'s options object, checked where it enters; each error names the field. */
import { z } from "zod";
import { PlanManagerError } from "../errors.js";
import { nearest } from "../plan/nearest.js";

const OptionsShape = z.object({
  tools: z.array(z.unknown()),
  planner: z.object({}).passthrough(),
  reviewPlan: z.boolean().optional(),
  reviewReplans: z.boolean().optional(),
  recursionLimit: z.number().int().min(10).max(1_000_000).optional(),
  effects: z
    .object({ honoursKeys: z.array(z.string().min(1)).max(1_000).optional() })
    .strict()
    .optional(),
});

/** A key no option has is refused: a typo (`reviewPlans`) taken silently would leave its option at the default. */
function refuseUnknownOption(options: object, names: readonly string[]): void {
  const key = Object.keys(options).find((k) => !names.includes(k));
  if (key === undefined) return;
  const near = nearest(key, names);
  const hint = near === undefined ? `the options are: ${names.join(", ")}` : `did you mean ${JSON.stringify(near)}?`;
  throw new PlanManagerError("invalid_options", `createPlanManager: ${JSON.stringify(key)} is not an option; ${hint}`, {
    path: key,
  });
}

/**
 * The options object, its top-level fields and the planner, checked where they enter; each error names the
 * field. `names`: every option's name (a key not among them is refused).
 */
export function checkShape(options: { planner: { plan?: unknown } }, names: readonly string[]): void {
  if (options === null || typeof options !== "object") {
    throw new PlanManagerError(
      "invalid_options",
      "createPlanManager(options): options must be an object with `tools` and `planner`",
    );
  }
  refuseUnknownOption(options, names);
  const shape = OptionsShape.safeParse(options);
  if (!shape.success) {
    const issue = shape.error.issues[0]!;
    const path = issue.path.map(String).join(".") || "options";
    throw new PlanManagerError("invalid_options", `${path}: ${issue.message}`, { path });
  }
  if (typeof options.planner.plan !== "function") {
    throw new PlanManagerError(
      "invalid_options",
      "planner.plan must be a function: use staticPlanner({ plan }) or llmPlanner({ model })",
      { path: "planner.plan" },
    );
  }
}

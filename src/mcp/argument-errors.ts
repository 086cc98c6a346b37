/**
 * Errors named by the tool argument they concern: an MCP client sees the tools' arguments, not the
 * library's calls behind them, so `path` names the argument (`plan.steps.0.args`, `parent_plan_id`,
 * `timeout_s`), whichever check refused it — the service's or the tool's input schema.
 */
import type { z } from "zod";
import { PlanManagerError, isPlanManagerError } from "../errors.js";

/**
 * For `promise.catch`: an `invalid_input` about a plan id, rethrown as one about `argument` (a plan id
 * given in another argument than `plan_id`, such as `parent_plan_id`). Other errors pass unchanged.
 */
export function asArgument(argument: string): (error: unknown) => never {
  return (error) => {
    if (isPlanManagerError(error) && error.code === "invalid_input" && error.path === "plan_id")
      throw new PlanManagerError("invalid_input", `${argument}: ${error.message}`, { path: argument });
    throw error;
  };
}

/** A tool's arguments its input schema refused, as the error every other refusal is. */
export function schemaError(tool: string, error: z.ZodError): PlanManagerError {
  const issue = error.issues[0];
  const path = issue?.path.map(String).join(".") ?? "";
  const where = path === "" ? "arguments" : path;
  return new PlanManagerError(
    "invalid_input",
    `${tool}: ${where}: ${issue?.message ?? "invalid"} (see the tool's inputSchema)`,
    path === "" ? {} : { path },
  );
}

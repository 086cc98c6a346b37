/** `listThreads` options, checked where they enter: each backend puts them into a query. */
import { PlanManagerError } from "../errors.js";
import type { ListThreadsOptions } from "./saver-adapter.js";

export function checkListOptions(options: ListThreadsOptions): ListThreadsOptions {
  const { limit, before } = options;
  if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 0))
    throw new PlanManagerError("invalid_options", `limit must be a whole number ≥ 0, got ${String(limit)}`, {
      path: "limit",
    });
  if (before !== undefined && typeof before !== "string")
    throw new PlanManagerError("invalid_options", `before must be a checkpoint id (a string), got ${typeof before}`, {
      path: "before",
    });
  return { limit, before };
}

/** The tool registry of `createPlanManager({ tools })`: tools by name, and what their metadata declares. */
import type { StructuredToolInterface } from "@langchain/core/tools";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { PlanManagerError } from "../errors.js";
import type { ToolInfo } from "../contracts/planner.js";
import type { ToolMetadata } from "../plan/enrich.js";
import { RESERVED_KEYS } from "../plan/schema/primitives.js";

/** The registry: LangChain tools by name; a non-tool or a second tool of the same name is refused. */
export function toolRegistry(list: readonly StructuredToolInterface[]): Map<string, StructuredToolInterface> {
  const tools = new Map<string, StructuredToolInterface>();
  list.forEach((t, i) => {
    if (!t || typeof t.name !== "string" || typeof t.invoke !== "function") {
      throw new PlanManagerError(
        "invalid_options",
        `tools[${i}] is not a LangChain tool (needs name and invoke); create it with tool() from @langchain/core/tools`,
        { path: `tools[${i}]` },
      );
    }
    if (RESERVED_KEYS.has(t.name))
      throw new PlanManagerError(
        "invalid_options",
        `tools[${i}]: the tool name "${t.name}" is reserved (it names a member of Object.prototype); rename the tool`,
        { path: `tools[${i}].name` },
      );
    if (tools.has(t.name))
      throw new PlanManagerError("invalid_options", `tools[${i}]: two tools are named "${t.name}"`, {
        path: `tools[${i}].name`,
      });
    tools.set(t.name, t);
  });
  return tools;
}

/** What a tool's `metadata` declares that the plan can use: its side effects and its success signal. */
export function toolMetadata(tool: StructuredToolInterface | undefined): ToolMetadata | undefined {
  const meta = (tool as { metadata?: Record<string, unknown> } | undefined)?.metadata;
  if (!meta) return undefined;
  const out: ToolMetadata = {};
  if (Array.isArray(meta.sideEffects))
    out.sideEffects = meta.sideEffects.filter((s): s is string => typeof s === "string");
  if (typeof meta.successSignal === "string") out.successSignal = meta.successSignal;
  return out;
}

export function toolInfoOf(t: StructuredToolInterface, meta: ToolMetadata | undefined): ToolInfo {
  const info: ToolInfo = { name: t.name, description: t.description };
  try {
    info.parameters = toJsonSchema(t.schema as Parameters<typeof toJsonSchema>[0]);
  } catch {
    // A schema that cannot be converted is simply not shown to the planner.
  }
  if (meta?.sideEffects) info.sideEffects = meta.sideEffects;
  return info;
}

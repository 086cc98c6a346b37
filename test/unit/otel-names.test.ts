/**
 * The span, attribute, event and counter names are a contract with operators' dashboards: README
 * "Tracing" lists them in a table, and this test keeps the table and the code equal.
 */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { ATTRS, EVENTS, METRICS, SPANS } from "../../src/otel/names.js";

const root = resolve(import.meta.dirname, "..", "..");

/** The table's rows under "### OpenTelemetry": [name, kind]. */
function tableRows(): [string, string][] {
  const readme = readFileSync(join(root, "docs/guides/operations.md"), "utf8");
  const section = readme.slice(readme.indexOf("### OpenTelemetry"));
  return [...section.matchAll(/^\| `([^`]+)` \| (\w+) \|/gm)].map((m) => [m[1]!, m[2]!]);
}

describe("OpenTelemetry names", () => {
  it("README lists every span, attribute, event and counter the code emits, and no other", () => {
    const code = [
      ...Object.values(SPANS).map((n) => [n, "span"]),
      ...Object.values(ATTRS).map((n) => [n, "attribute"]),
      ...Object.values(EVENTS).map((n) => [n, "event"]),
      ...Object.values(METRICS).map((n) => [n, "counter"]),
    ];
    expect(tableRows().sort()).toEqual(code.sort());
  });

  it("pins the names an operator's dashboards depend on", () => {
    expect(SPANS).toEqual({
      workflow: "invoke_workflow",
      agent: "invoke_agent",
      planVersion: "plan_version",
      tool: "execute_tool",
      step: "execute_step",
      model: "chat",
    });
    expect(Object.values(METRICS)).toEqual([
      "langgraph_replan.decisions",
      "langgraph_replan.attempts",
      "langgraph_replan.effects",
      "langgraph_replan.plan_versions",
    ]);
    expect(Object.values(ATTRS).filter((a) => !a.startsWith("langgraph_replan."))).toEqual([
      "gen_ai.operation.name",
      "gen_ai.conversation.id",
      "gen_ai.agent.name",
      "gen_ai.tool.name",
      "gen_ai.request.model",
      "gen_ai.usage.input_tokens",
      "gen_ai.usage.output_tokens",
      "error.type",
    ]);
  });
});

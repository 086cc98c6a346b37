import { describe, expect, it } from "vitest";
import { htmlReport, planDiffMermaid, planDiff, type Plan } from "../src/index.js";
import { harness, scriptedTool } from "./helpers/graph.js";

describe("htmlReport", () => {
  it("escapes whatever plans and tools put in state", async () => {
    const evil = '</script><script>alert("x")</script>';
    const t = scriptedTool("t", [{ note: evil }]);
    const out = await harness({ steps: [{ id: "a", goal: `Goal ${evil}`, tool: "t", produces: ["note"] }] }, [t]).run();
    const html = htmlReport(out as never, { mermaidScript: "window.mermaid = { initialize() {}, run: () => Promise.resolve() };" });
    expect(html).not.toContain('<script>alert("x")</script>');
    expect(html).toContain("<code>&quot;&lt;/script&gt;&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt;&quot;</code>");
    expect(html.match(/<script>/g)).toHaveLength(2);
  });

  it("lists diagram sources as text when no Mermaid bundle is given", async () => {
    const out = await harness({ steps: [{ id: "a", goal: "A", tool: "t" }] }, [scriptedTool("t", [{}])]).run();
    const html = htmlReport(out as never);
    expect(html).toContain('<pre class="mermaid">flowchart TD');
    expect(html).not.toContain("<script>");
  });
});

describe("planDiffMermaid", () => {
  it("draws added, removed and changed steps", () => {
    const before: Plan = { version: 1, assumptions: [], steps: [{ id: "a", goal: "A", tool: "t" }, { id: "b", goal: "B", tool: "t" }] };
    const after: Plan = { version: 2, assumptions: [], steps: [{ id: "a", goal: "A", tool: "u" }, { id: "c", goal: "C", tool: "t", dependsOn: ["a"] }] };
    expect(planDiffMermaid(before, after, planDiff(before, after)).split("\n").slice(0, 5)).toEqual([
      "flowchart TD",
      '  d_a["A (tool)"]:::changed',
      '  d_c["C"]:::added',
      '  d_b["B (removed)"]:::removed',
      "  d_a --> d_c",
    ]);
  });
});

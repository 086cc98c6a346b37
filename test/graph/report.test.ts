import { describe, expect, it } from "vitest";
import { Command } from "@langchain/langgraph";
import { PermanentError, staticPlanner, type Plan, type PlanDraft, type ReplanRequest } from "../../src/index.js";
import { debugView, htmlReport, planDiffMermaid, planDiff } from "../../src/views/index.js";
import { createFraudTools, fraudPlan, fraudReplan } from "../fixtures/loan-fraud.js";
import { brief, harness, scriptedTool } from "../helpers/graph.js";

describe("htmlReport", () => {
  it("escapes whatever plans and tools put in state", async () => {
    const evil = '</script><script>alert("x")</script>';
    const t = scriptedTool("t", [{ note: evil }]);
    const out = await harness({ steps: [{ id: "a", goal: `Goal ${evil}`, tool: "t", produces: ["note"] }] }, [t]).run();
    const html = htmlReport(out as never, {
      mermaidScript: "window.mermaid = { initialize() {}, run: () => Promise.resolve() };",
    });
    expect(html).not.toContain('<script>alert("x")</script>');
    expect(html).toContain(
      "<code>&quot;&lt;/script&gt;&lt;script&gt;alert(\\&quot;x\\&quot;)&lt;/script&gt;&quot;</code>",
    );
    expect(html.match(/<script>/g)).toHaveLength(2);
  });

  it("mermaidSrc loads Mermaid from a file (escaped as an attribute) and runs the diagrams after it", async () => {
    const t = scriptedTool("t", [{ v: 1 }]);
    const out = await harness({ steps: [{ id: "a", goal: "A", tool: "t", produces: ["v"] }] }, [t]).run();
    const html = htmlReport(out as never, { mermaidSrc: 'mermaid.min.js"><script>alert(1)</script>' });
    const scripts = html.slice(html.indexOf("<script"), html.indexOf("</body>"));
    expect(scripts.split("\n")[0]).toBe(
      '<script src="mermaid.min.js&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;"></script>',
    );
    expect(html.match(/<script/g)).toHaveLength(2);
    expect(html).toContain("mermaid.initialize(");
    // The inline bundle, when given too, is not added: the page loads Mermaid once.
    const both = htmlReport(out as never, { mermaidSrc: "m.js", mermaidScript: "window.mermaid = {};" });
    expect(both).not.toContain("window.mermaid = {};");
  });

  it("a long wait for a person is drawn shortened on the timeline, so the steps around it stay readable", async () => {
    const tools = [scriptedTool("a", [{ x: 1 }]), scriptedTool("b", [{ y: 1 }])];
    const steps = [
      { id: "a", goal: "A", tool: "a", produces: ["x"] },
      { id: "ask", goal: "Ask", human: { prompt: "ok?" }, dependsOn: ["a"] },
      { id: "b", goal: "B", tool: "b", dependsOn: ["ask"], produces: ["y"] },
    ];
    const h = harness({ steps }, tools);
    await h.run();
    const out = (await h.run(new Command({ resume: { action: "complete", output: { ok: true } } }))) as any;
    expect(out.status).toBe("completed");
    const at = (ms: number) => new Date(Date.UTC(2026, 0, 1) + ms).toISOString();
    const hour = 3_600_000;
    out.steps.a = { ...out.steps.a, startedAt: at(0), endedAt: at(200) };
    out.steps.ask = { ...out.steps.ask, startedAt: at(200), endedAt: at(200 + hour) };
    out.steps.b = { ...out.steps.b, startedAt: at(200 + hour), endedAt: at(400 + hour) };
    const html = htmlReport(out);
    const bars = [...html.matchAll(/data-step="(\w+)"[^>]*style="left:([\d.]+)%;width:max\(2px,([\d.]+)%\)"/g)].map(
      (m) => [m[1], m[2], m[3]],
    );
    // 400 ms of steps and an hour's wait: the wait is drawn as a quarter of the steps' time.
    expect(bars).toEqual([
      ["a", "0.000", "40.000"],
      ["ask", "40.000", "20.000"],
      ["b", "60.000", "40.000"],
    ]);
    expect(html).toContain(
      '<div class="gap" style="left:40.000%;width:20.000%" title="1 h 0 min 0 s drawn shortened: no step but a ' +
        'wait for a person ran">⋯ 1 h 0 min ⋯</div>',
    );
  });

  it("keeps control characters, markup and very long strings from tools escaped, whole", async () => {
    const long = "<b>".repeat(20_000);
    const ansi = "\u001b[2J\u0007\u202egnp.exe\u0000";
    const tools = [
      scriptedTool("fetch", [{ text: `${ansi}<img src=x onerror=alert(1)>`, long }]),
      scriptedTool("work", [new PermanentError(`bad ${ansi}<script>alert(2)</script>`)]),
    ];
    const steps = [
      { id: "fetch", goal: `Fetch ${ansi}`, tool: "fetch", produces: ["text", "long"] },
      { id: "work", goal: "Work", tool: "work", dependsOn: ["fetch"], inputs: ["text"] },
    ];
    const out = await harness({ steps }, tools).run();
    const html = htmlReport(out as never);
    expect(html).not.toMatch(/<(img|b|script)\b/);
    // oxlint-disable-next-line no-control-regex -- matching control characters is the test
    expect(html).not.toMatch(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/);
    expect(html.split("&lt;b&gt;")).toHaveLength(20_001);
    expect(html).toContain(
      '<td>text</td><td class="l-trusted">trusted</td><td><code>&quot;\\u001b[2J\\u0007\\u202egnp.exe\\u0000' +
        "&lt;img src=x onerror=alert(1)&gt;&quot;</code></td>",
    );
    expect(html).toContain(
      '<td class="free">PermanentError: bad \\u001b[2J\\u0007\\u202egnp.exe\\u0000' +
        "&lt;script&gt;alert(2)&lt;/script&gt;</td>",
    );
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
    const before: Plan = {
      version: 1,
      assumptions: [],
      steps: [
        { id: "a", goal: "A", tool: "t" },
        { id: "b", goal: "B", tool: "t" },
      ],
    };
    const after: Plan = {
      version: 2,
      assumptions: [],
      steps: [
        { id: "a", goal: "A", tool: "u" },
        { id: "c", goal: "C", tool: "t", dependsOn: ["a"] },
      ],
    };
    expect(planDiffMermaid(before, after, planDiff(before, after)).split("\n").slice(0, 5)).toEqual([
      "flowchart TD",
      '  d_a["A (tool)"]:::changed',
      '  d_c["C"]:::added',
      '  d_b["B (removed)"]:::removed',
      "  d_a --> d_c",
    ]);
  });
});

/** Three plan versions that keep the id `work` and change its arguments; `fetch` runs once, in v1. */
async function threeVersions() {
  const plan: PlanDraft = {
    assumptions: [{ id: "a1", statement: "variant 1 works" }],
    steps: [
      { id: "fetch", goal: "Fetch the data", tool: "fetch", produces: ["data"] },
      {
        id: "work",
        goal: "Work on it",
        tool: "work",
        dependsOn: ["fetch"],
        inputs: ["data"],
        args: { variant: 1 },
        successSignal: "output.ok == true",
        assumptions: ["a1"],
      },
    ],
  };
  let n = 1;
  const replan = (r: ReplanRequest): PlanDraft => {
    n += 1;
    const assumption = `a${n}`;
    return {
      assumptions: [{ id: assumption, statement: `variant ${n} works` }],
      steps: r.affectedSteps.map((s) => ({ ...s, args: { variant: n }, assumptions: [assumption] })),
    };
  };
  const work = scriptedTool("work", [{ ok: false }, { ok: false }, { ok: true }]);
  const tools = [scriptedTool("fetch", [{ data: 7 }]), work];
  const out = await harness(staticPlanner({ plan, replan }), tools, { policy: { replanCooldownSteps: 0 } }).run();
  return { out, work };
}

/** The report's timeline rows as `v<plan> <step> <status> <attempts>`. */
const timelineRows = (html: string) =>
  [
    ...html.matchAll(
      /<tr><td>[^<]*<\/td><td>[^<]*<\/td><td>(v\d+)<\/td><td>([a-z_]+)<\/td><td class="s-\w+">([^<]+)<\/td><td>(\d+)<\/td>/g,
    ),
  ].map((m) => `${m[1]} ${m[2]} ${m[3]} ${m[4]}`);

/** Each plan-version column's step statuses, as its diagram shows them. */
const columnStatuses = (html: string) =>
  html
    .split('<section class="version">')
    .slice(1)
    .map((section) =>
      [...section.split("<h4>")[0]!.matchAll(/&lt;small&gt;([a-z_]+) · ([a-z]+)&lt;\/small&gt;/g)].map(
        (m) => `${m[1]} ${m[2]}`,
      ),
    );

describe("every plan version's attempts", () => {
  it("three versions of one step id: the debug view and the report's timeline list each version's attempt", async () => {
    const { out, work } = await threeVersions();
    expect(out.status).toBe("completed");
    expect(work.calls).toEqual([
      { data: 7, variant: 1 },
      { data: 7, variant: 2 },
      { data: 7, variant: 3 },
    ]);
    expect(brief(out.decisions)).toEqual([
      "work: success_signal_unmet → replan_local [unmet.replan-local]",
      "work: success_signal_unmet → replan_local [unmet.replan-local]",
    ]);
    expect(
      out.replans.map((r: { changedSteps?: string[]; preservedSteps: string[]; newSteps: string[] }) => [
        r.changedSteps,
        r.preservedSteps,
        r.newSteps,
      ]),
    ).toEqual([
      [["work"], ["fetch"], []],
      [["work"], ["fetch"], []],
    ]);

    const view = debugView(out as never);
    const steps = view.slice(view.indexOf("steps:") + 1, view.indexOf("decisions:") - 1);
    const t = "2026-01-01T00:00:00.000Z";
    expect(steps).toEqual([
      `  fetch: succeeded, 1 attempt, cost 0 ${t} → ${t}`,
      `  work (v1): failed, 1 attempt, cost 0 ${t} → ${t}`,
      '    error: SuccessSignalUnmet: success signal "output.ok == true" is false for output {"ok":false}',
      `  work (v2): failed, 1 attempt, cost 0 ${t} → ${t}`,
      '    error: SuccessSignalUnmet: success signal "output.ok == true" is false for output {"ok":false}',
      `  work: succeeded, 1 attempt, cost 0 ${t} → ${t}`,
    ]);
    expect(view.filter((l) => l.startsWith("    changed:"))).toEqual(["    changed: work", "    changed: work"]);

    const html = htmlReport(out as never);
    // fetch ran once, in v1; work once in each version.
    expect(timelineRows(html)).toEqual([
      "v1 fetch succeeded 1",
      "v1 work failed 1",
      "v2 work failed 1",
      "v3 work succeeded 1",
    ]);
    expect(columnStatuses(html)).toEqual([
      ["fetch succeeded", "work failed"],
      ["fetch succeeded", "work failed"],
      ["fetch succeeded", "work succeeded"],
    ]);
  });

  it("the v1 column shows v1's statuses; removed steps' attempts stay on the timeline under v1, once", async () => {
    const h = harness(staticPlanner({ plan: fraudPlan, replan: fraudReplan }), createFraudTools().tools, {
      threadId: "loan-A-7291",
      context: { applicant_id: "A-7291" },
    });
    await h.run();
    const out = await h.run(new Command({ resume: { action: "complete", output: { human_decision: "denied" } } }));
    const html = htmlReport(out as never);
    expect(columnStatuses(html)).toEqual([
      [
        "verify_identity succeeded",
        "pull_credit succeeded",
        "compliance_check succeeded",
        "underwrite succeeded",
        "issue_decision pending",
      ],
      [
        "verify_identity succeeded",
        "pull_credit succeeded",
        "deep_verification succeeded",
        "fraud_review succeeded",
        "issue_decision succeeded",
      ],
    ]);
    expect(timelineRows(html)).toEqual([
      "v1 verify_identity succeeded 1",
      "v1 pull_credit succeeded 1",
      "v1 compliance_check succeeded 1",
      "v1 underwrite succeeded 1",
      "v2 deep_verification succeeded 1",
      "v2 fraud_review succeeded 1",
      "v2 issue_decision succeeded 1",
    ]);
    // The debug view still says what became of the removed steps.
    expect(
      debugView(out as never)
        .filter((l) => l.startsWith("  compliance_check"))
        .map((l) => l.split(", cost")[0]),
    ).toEqual(["  compliance_check (v1): succeeded → invalidated, 1 attempt"]);
  });
});

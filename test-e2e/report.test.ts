/**
 * The HTML report in a real browser: Debian's Chromium driven by playwright-core. The report
 * of a run with a replan must render every Mermaid diagram (two plan versions and their diff),
 * and a run with three plan versions must fit a 1,400-px-wide page.
 */
import { readFileSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { chromium } from "playwright-core";
import { describe, expect, it } from "vitest";
import { staticPlanner, type PlanDraft, type ReplanRequest } from "../src/index.js";
import { htmlReport } from "../src/views/index.js";
import { createFraudTools, fraudPlan, fraudReplan } from "../test/fixtures/loan-fraud.js";
import { harness, scriptedTool } from "../test/helpers/graph.js";
import { Command, MemorySaver } from "@langchain/langgraph";
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import { createPlanManager } from "../src/index.js";

const artifacts = resolve(import.meta.dirname, "artifacts");

const launch = () =>
  chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });

const mermaidScript = () => readFileSync(createRequire(import.meta.url).resolve("mermaid/dist/mermaid.min.js"), "utf8");

/**
 * Three plan versions, each as wide as a report gets: four sources side by side feed `work`,
 * whose arguments two replans change (the id stays), so every version and diff is drawn.
 */
async function threeVersionRun() {
  const sources = ["archive", "registry", "press", "filings"];
  const plan: PlanDraft = {
    assumptions: [{ id: "a1", statement: "the first scoring variant is calibrated for this market" }],
    steps: [
      ...sources.map((s) => ({
        id: `read_${s}`,
        goal: `Reading the ${s} records for the applicant`,
        tool: "read",
        args: { source: s },
        produces: [`${s}_notes`],
      })),
      {
        id: "work",
        goal: "Scoring the applicant from all four sources",
        tool: "score",
        dependsOn: sources.map((s) => `read_${s}`),
        inputs: sources.map((s) => `${s}_notes`),
        args: { variant: 1 },
        successSignal: "output.ok == true",
        assumptions: ["a1"],
      },
    ],
  };
  let n = 1;
  const replan = (r: ReplanRequest): PlanDraft => {
    n += 1;
    return {
      assumptions: [{ id: `a${n}`, statement: `scoring variant ${n} is calibrated for this market` }],
      steps: r.affectedSteps.map((s) => ({ ...s, args: { variant: n }, assumptions: [`a${n}`] })),
    };
  };
  // One fact is a 315-character token with no break opportunity: the facts table must not widen the page.
  const notes = (source: string) =>
    source === "archive" ? `archive-record-${"0123456789".repeat(30)}` : `notes from ${source}`;
  const read = scriptedTool("read", [
    (a: Record<string, unknown>) => ({ [`${String(a.source)}_notes`]: notes(String(a.source)) }),
  ]);
  const score = scriptedTool("score", [{ ok: false }, { ok: false }, { ok: true }]);
  return harness(staticPlanner({ plan, replan }), [read, score], { policy: { replanCooldownSteps: 0 } }).run();
}

describe("the run report", () => {
  it("renders plan versions, the diff, decisions and fact labels in headless Chromium", async () => {
    const h = harness(staticPlanner({ plan: fraudPlan, replan: fraudReplan }), createFraudTools().tools, {
      threadId: "loan-A-7291",
      context: { applicant_id: "A-7291" },
    });
    await h.run();
    const state = await h.run(new Command({ resume: { action: "complete", output: { human_decision: "denied" } } }));
    const require = createRequire(import.meta.url);
    const html = htmlReport(state as never, {
      mermaidScript: readFileSync(require.resolve("mermaid/dist/mermaid.min.js"), "utf8"),
    });
    mkdirSync(artifacts, { recursive: true });
    const file = resolve(artifacts, "report.html");
    writeFileSync(file, html);

    const browser = await launch();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const requests: string[] = [];
      page.on("request", (r) => requests.push(r.url()));
      await page.goto(`file://${file}`);
      await page.waitForFunction(() => document.body.dataset.diagrams !== undefined, undefined, { timeout: 30_000 });
      expect(await page.evaluate(() => document.body.dataset.diagrams)).toBe("3");
      expect(await page.locator("section.version h3").allTextContents()).toEqual(["Plan v1", "Plan v2"]);
      expect(await page.locator("pre.mermaid svg g.node").count()).toBe(5 + 5 + 7);
      const svgText = await page.locator("section.version").nth(1).textContent();
      expect(svgText).toContain("Verifying employment in depth");
      expect(svgText).toContain("removed: compliance_check, underwrite");
      const labels = await page.locator("td.l-invalidated").allTextContents();
      expect(labels).toHaveLength(3);
      expect(await page.locator("td code", { hasText: "assumption.replan-local" }).count()).toBe(1);
      expect(requests.filter((u) => !u.startsWith("file://") && !u.startsWith("data:"))).toEqual([]);
      await page.screenshot({ path: resolve(artifacts, "report.png"), fullPage: true });
    } finally {
      await browser.close();
    }
  });

  it("draws the diagrams from a Mermaid bundle beside the report (mermaidSrc), the page a few KB", async () => {
    const h = harness(staticPlanner({ plan: fraudPlan, replan: fraudReplan }), createFraudTools().tools, {
      threadId: "loan-A-7291-src",
      context: { applicant_id: "A-7291" },
    });
    await h.run();
    const state = await h.run(new Command({ resume: { action: "complete", output: { human_decision: "denied" } } }));
    const dir = resolve(artifacts, "beside");
    mkdirSync(dir, { recursive: true });
    writeFileSync(resolve(dir, "mermaid.min.js"), mermaidScript());
    const html = htmlReport(state as never, { mermaidSrc: "mermaid.min.js" });
    expect(Buffer.byteLength(html)).toBeLessThan(20_000);
    const file = resolve(dir, "report.html");
    writeFileSync(file, html);
    const browser = await launch();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      const requests: string[] = [];
      page.on("request", (r) => requests.push(r.url()));
      await page.goto(`file://${file}`);
      await page.waitForFunction(() => document.body.dataset.diagrams !== undefined, undefined, { timeout: 30_000 });
      expect(await page.evaluate(() => document.body.dataset.diagrams)).toBe("3");
      expect(await page.locator("pre.mermaid svg g.node").count()).toBe(5 + 5 + 7);
      expect(requests.filter((u) => !u.startsWith("file://") && !u.startsWith("data:"))).toEqual([]);
    } finally {
      await browser.close();
    }
  });

  it("fits three plan versions on a 1,400-px-wide page, each column coloured with its own version's statuses", async () => {
    const state = await threeVersionRun();
    expect(state.status).toBe("completed");
    expect(state.plan.version).toBe(3);
    mkdirSync(artifacts, { recursive: true });
    // Rendered diagrams scale to their column; diagram sources (no Mermaid bundle) are long lines of text.
    const rendered = resolve(artifacts, "report-three-versions.html");
    writeFileSync(rendered, htmlReport(state as never, { mermaidScript: mermaidScript() }));
    const sources = resolve(artifacts, "report-three-versions-sources.html");
    writeFileSync(sources, htmlReport(state as never));

    const browser = await launch();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      /** How far the page and its version columns reach to the right. */
      const extent = async () => ({
        page: await page.evaluate(() => document.documentElement.scrollWidth),
        columns: Math.max(
          ...(await page
            .locator("section.version")
            .evaluateAll((els) => els.map((e) => e.getBoundingClientRect().right))),
        ),
      });

      await page.goto(`file://${sources}`);
      expect(await page.locator("section.version h3").allTextContents()).toEqual(["Plan v1", "Plan v2", "Plan v3"]);
      expect((await extent()).page).toBeLessThanOrEqual(1400);
      expect((await extent()).columns).toBeLessThanOrEqual(1400);

      await page.goto(`file://${rendered}`);
      await page.waitForFunction(() => document.body.dataset.diagrams !== undefined, undefined, { timeout: 30_000 });
      // Three plan diagrams and two diffs.
      expect(await page.evaluate(() => document.body.dataset.diagrams)).toBe("5");
      expect((await extent()).page).toBeLessThanOrEqual(1400);
      expect((await extent()).columns).toBeLessThanOrEqual(1400);
      // Each version's diagram shows the status `work` ended that version with.
      const work = (i: number) =>
        page
          .locator("section.version")
          .nth(i)
          .locator("pre.mermaid")
          .first()
          .locator("g.node", { hasText: "work ·" })
          .textContent();
      expect(await Promise.all([0, 1, 2].map(work))).toEqual([
        "Scoring the applicant from all four sourceswork · failed",
        "Scoring the applicant from all four sourceswork · failed",
        "Scoring the applicant from all four sourceswork · succeeded",
      ]);
      await page.screenshot({ path: resolve(artifacts, "report-three-versions.png"), fullPage: true });
    } finally {
      await browser.close();
    }
  });

  it("draws one timeline lane per step running at the same time", async () => {
    // Real time: lanes come from the steps' start and end timestamps.
    const wait = tool(async ({ ms }: { ms: number }) => (await new Promise((r) => setTimeout(r, ms)), { ok: true }), {
      name: "wait",
      description: "waits",
      schema: z.object({ ms: z.number() }),
    });
    const plan: PlanDraft = {
      steps: [
        { id: "identity", goal: "Verifying identity", tool: "wait", args: { ms: 60 } },
        { id: "credit", goal: "Pulling credit", tool: "wait", args: { ms: 80 } },
        { id: "fraud", goal: "Screening for fraud", tool: "wait", args: { ms: 70 } },
        { id: "decide", goal: "Deciding", tool: "wait", args: { ms: 20 }, dependsOn: ["identity", "credit", "fraud"] },
      ],
    };
    const graph = createPlanManager({ tools: [wait], planner: staticPlanner({ plan }) }).compile({
      checkpointer: new MemorySaver(),
    });
    const state = await graph.invoke({ goal: "lanes" } as never, { configurable: { thread_id: "lanes" } });
    expect(state.status).toBe("completed");
    mkdirSync(artifacts, { recursive: true });
    const file = resolve(artifacts, "report-lanes.html");
    writeFileSync(file, htmlReport(state as never));

    const browser = await launch();
    try {
      const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
      await page.goto(`file://${file}`);
      expect(await page.locator(".lanes").getAttribute("data-lanes")).toBe("3");
      const bars = await page.locator(".lanes .bar").evaluateAll((els) =>
        els.map((e) => {
          const r = e.getBoundingClientRect();
          return {
            step: (e as HTMLElement).dataset.step!,
            lane: (e.parentElement as HTMLElement).dataset.lane!,
            ...r.toJSON(),
          };
        }),
      );
      const by = Object.fromEntries(bars.map((b) => [b.step, b]));
      expect(bars.map((b) => b.step).sort()).toEqual(["credit", "decide", "fraud", "identity"]);
      // The three that ran together sit in three lanes, one above the other, overlapping in time.
      expect(new Set(["identity", "credit", "fraud"].map((s) => by[s].lane)).size).toBe(3);
      expect(new Set(["identity", "credit", "fraud"].map((s) => Math.round(by[s].top))).size).toBe(3);
      const overlapStart = Math.max(...["identity", "credit", "fraud"].map((s) => by[s].left));
      const overlapEnd = Math.min(...["identity", "credit", "fraud"].map((s) => by[s].right));
      expect(overlapEnd).toBeGreaterThan(overlapStart);
      // The step that waited for all three starts after the last of them ended.
      expect(by.decide.left).toBeGreaterThanOrEqual(
        Math.max(...["identity", "credit", "fraud"].map((s) => by[s].right)) - 1,
      );
      expect((await page.evaluate(() => document.documentElement.scrollWidth)) <= 1400).toBe(true);
      await page.screenshot({ path: resolve(artifacts, "report-lanes.png"), fullPage: true });
    } finally {
      await browser.close();
    }
  });
});

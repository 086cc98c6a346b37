/**
 * The HTML report in a real browser: Debian's Chromium driven by playwright-core. The report
 * of a run with a replan must render every Mermaid diagram (two plan versions and their diff).
 */
import { readFileSync, mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { resolve } from "node:path";
import { chromium } from "playwright-core";
import { describe, expect, it } from "vitest";
import { htmlReport, staticPlanner } from "../src/index.js";
import { createFraudTools, fraudPlan, fraudReplan } from "../examples/scenarios/loan-fraud.js";
import { harness } from "../test/helpers/graph.js";
import { Command } from "@langchain/langgraph";

const artifacts = resolve(import.meta.dirname, "artifacts");

describe("the run report", () => {
  it("renders plan versions, the diff, decisions and fact labels in headless Chromium", async () => {
    const h = harness(staticPlanner({ plan: fraudPlan, replan: fraudReplan }), createFraudTools().tools, { threadId: "loan-A-7291", context: { applicant_id: "A-7291" } });
    await h.run();
    const state = await h.run(new Command({ resume: { action: "complete", output: { human_decision: "denied" } } }));
    const require = createRequire(import.meta.url);
    const html = htmlReport(state as never, { mermaidScript: readFileSync(require.resolve("mermaid/dist/mermaid.min.js"), "utf8") });
    mkdirSync(artifacts, { recursive: true });
    const file = resolve(artifacts, "report.html");
    writeFileSync(file, html);

    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? "/usr/bin/chromium",
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
    });
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
});

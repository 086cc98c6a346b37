/**
 * Views, report, `planMetrics` and the CLI's `show` name the side-effecting calls whose outcome was
 * unknown (docs/decisions/0038-effect-journal.md): those the step's verify probe settled, those a
 * person was asked about, and those a person said happened; and the one in doubt now, with its key.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { tool } from "@langchain/core/tools";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { createPlanManager, resumeRun, staticPlanner } from "../../src/index.js";
import { runCli } from "../../src/cli/commands.js";
import { debugView, htmlReport, operatorView, planMetrics, userView } from "../../src/views/index.js";
import { fakeClock } from "../helpers/clock.js";

const dir = mkdtempSync(join(tmpdir(), "effect-views-"));
const db = join(dir, "checkpoints.sqlite");
const NOW = Date.parse("2026-01-01T00:01:00Z");
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A side-effecting tool whose first call never answers (our deadline cuts it): it does not honour keys. */
const hangingFirst = (name: string, output: Record<string, unknown>) => {
  let calls = 0;
  return tool(
    async () => {
      calls += 1;
      if (calls === 1) await new Promise(() => undefined);
      return output;
    },
    { name, description: name, schema: z.object({}).passthrough(), metadata: { sideEffects: [name] } },
  );
};
const findShipment = tool(async () => ({ happened: true, output: { shipment: "s-found" } }), {
  name: "find_shipment",
  description: "looks a shipment up by key (read-only)",
  schema: z.object({}).passthrough(),
});
const plan = {
  steps: [
    {
      id: "ship",
      goal: "Ship the parcel",
      tool: "ship",
      args: {},
      produces: ["shipment"],
      sideEffects: ["ships"],
      idempotent: false,
      timeoutMs: 20,
      verify: { tool: "find_shipment" },
    },
    {
      id: "pay",
      goal: "Charge the card",
      tool: "charge",
      args: {},
      produces: ["receipt"],
      sideEffects: ["charges"],
      idempotent: false,
      timeoutMs: 20,
      dependsOn: ["ship"],
    },
  ],
};

const noShipment = tool(async () => ({ happened: false }), {
  name: "find_shipment",
  description: "looks a shipment up by key (read-only): finds none",
  schema: z.object({}).passthrough(),
});

/** `again`: the probe finds no shipment (so it goes out again) and the charge's tool honours keys. */
function graphOn(saver: SqliteSaver, again = false) {
  const tools = [
    hangingFirst("ship", { shipment: "s-1" }),
    hangingFirst("charge", { receipt: "r-1" }),
    again ? noShipment : findShipment,
  ];
  const effects = again ? { effects: { honoursKeys: ["charge"] } } : {};
  return createPlanManager({ tools, planner: staticPlanner({ plan }), clock: fakeClock(), ...effects }).compile({
    checkpointer: saver,
  });
}

async function cli(...argv: string[]) {
  const out: string[] = [];
  const code = await runCli(argv, {
    out: (l) => out.push(l),
    err: () => undefined,
    now: () => NOW,
    sleep: async () => undefined,
  });
  return { code, out };
}

const cfg = (thread_id: string) => ({ configurable: { thread_id } });
let asked: Record<string, any>;
let answered: Record<string, any>;
let key: string;
let again: Record<string, any>;
let retried: Record<string, any>;
let aborted: Record<string, any>;

beforeAll(async () => {
  const saver = SqliteSaver.fromConnString(db);
  // Each thread its own tools: their first calls hang.
  let graph = graphOn(saver);
  await graph.invoke({ goal: "ship and charge" }, cfg("asks"));
  asked = (await graph.getState(cfg("asks"))).values;
  key = asked.pendingHuman.context.inDoubt.key;
  graph = graphOn(saver);
  await graph.invoke({ goal: "ship and charge" }, cfg("answered"));
  await resumeRun(graph, cfg("answered"), { action: "happened", output: { receipt: "r-by-hand" } });
  answered = (await graph.getState(cfg("answered"))).values;
  graph = graphOn(saver, true);
  await graph.invoke({ goal: "ship and charge" }, cfg("again"));
  again = (await graph.getState(cfg("again"))).values;
  graph = graphOn(saver);
  await graph.invoke({ goal: "ship and charge" }, cfg("retried"));
  await resumeRun(graph, cfg("retried"), { action: "retry" });
  retried = (await graph.getState(cfg("retried"))).values;
  graph = graphOn(saver);
  await graph.invoke({ goal: "ship and charge" }, cfg("aborted"));
  await resumeRun(graph, cfg("aborted"), { action: "abort" });
  aborted = (await graph.getState(cfg("aborted"))).values;
  saver.db.close();
});

describe("calls in doubt in the views", () => {
  it("the run: ship verified by its probe, pay asked about (the state the views read)", () => {
    expect(asked.status).toBe("awaiting_human");
    expect(asked.decisions.map((d: any) => `${d.stepId}:${d.rule}`)).toEqual([
      "ship:effect.verified",
      "pay:effect.in-doubt",
    ]);
    expect(answered.status).toBe("completed");
    expect(answered.decisions.map((d: any) => `${d.stepId}:${d.rule}`)).toEqual([
      "ship:effect.verified",
      "pay:effect.in-doubt",
      "pay:human.effect-happened",
    ]);
  });

  it("planMetrics counts every settlement; a run without any counts 0 of each", () => {
    const counts = (state: Record<string, any>) => {
      const m = planMetrics(state as never);
      return [
        m.effectsVerified,
        m.effectsNotHappened,
        m.effectsRecalled,
        m.effectsInDoubt,
        m.effectsHappened,
        m.effectsRetried,
      ];
    };
    expect(counts(asked)).toEqual([1, 0, 0, 1, 0, 0]);
    expect(counts(answered)).toEqual([1, 0, 0, 1, 1, 0]);
    expect(counts(again)).toEqual([0, 1, 1, 0, 0, 0]);
    expect(counts(retried)).toEqual([1, 0, 0, 1, 0, 1]);
    expect(counts({ ...answered, decisions: [] })).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it("a probe that found nothing done and a call again under an honoured key are decisions, each with its rule", () => {
    expect(again.status).toBe("completed");
    // The ship's probe said no: the attempt failed on its deadline and the ladder retried it; the charge's
    // tool honours keys, so it went out again under the same key at once.
    expect(again.decisions.map((d: any) => `${d.stepId}:${d.rule}`)).toEqual([
      "ship:effect.not-happened",
      "ship:transient.retry",
      "pay:effect.recalled",
    ]);
    expect(retried.decisions.map((d: any) => `${d.stepId}:${d.rule}:${d.by ?? "-"}`)).toEqual([
      "ship:effect.verified:-",
      "pay:effect.in-doubt:-",
      "pay:human.effect-retry:person",
    ]);
  });

  it("every view and the report show those settlements too", () => {
    expect(operatorView(again as never, { now: NOW }).filter((l) => l.includes("in doubt"))).toEqual([
      "effects in doubt: 1 not happened by its probe, 1 called again under its key",
    ]);
    expect(operatorView(retried as never, { now: NOW }).filter((l) => l.includes("in doubt"))).toEqual([
      "effects in doubt: 1 verified by its probe, 1 asked a person, 1 called again by a person",
    ]);
    const lines = debugView(again as never);
    const at = lines.indexOf("effects in doubt:");
    expect(lines.slice(at, at + 3)).toEqual([
      "effects in doubt:",
      "  ship attempt 1 (#1): its probe said it did not happen",
      "  pay attempt 1 (#3): called again under the key its tool honours",
    ]);
    expect(userView(again as never)).toContain(
      "Side effects whose outcome was unknown: 1 found not done by a probe, 1 made again under the same key.",
    );
    expect(userView(retried as never)).toContain(
      "Side effects whose outcome was unknown: 1 verified by a probe, 1 made again on a person's say-so.",
    );
    expect(htmlReport(retried as never)).toContain("<li>pay attempt 1 (#3): a person had it called again</li>");
  });

  it("the user view shows a call in doubt as in doubt, not as failed, while asked and after an abort", () => {
    expect(userView(asked as never)).toEqual([
      "✓ Ship the parcel",
      "? Charge the card (outcome unknown: waiting for a person to say whether it happened)",
      "Side effects whose outcome was unknown: 1 verified by a probe, 1 still unknown.",
      "Waiting for a person to review.",
    ]);
    expect(aborted.status).toBe("aborted");
    expect(userView(aborted as never).slice(0, 3)).toEqual([
      "✓ Ship the parcel",
      "? Charge the card (outcome unknown)",
      "Side effects whose outcome was unknown: 1 verified by a probe, 1 still unknown.",
    ]);
  });

  it("the operator view sums them up and names the call in doubt now, with its tool and key", () => {
    const lines = operatorView(asked as never, { now: NOW });
    expect(lines.filter((l) => l.startsWith("effects in doubt") || l.startsWith("in doubt now"))).toEqual([
      "effects in doubt: 1 verified by its probe, 1 asked a person",
      `in doubt now: pay (charge under key ${key}): happened, retry or abort?`,
    ]);
    expect(operatorView(answered as never, { now: NOW }).filter((l) => l.includes("in doubt"))).toEqual([
      "effects in doubt: 1 verified by its probe, 1 asked a person, 1 said happened by a person",
    ]);
  });

  it("the debug view lists each settlement; the user view says what a person settled", () => {
    const lines = debugView(answered as never);
    const at = lines.indexOf("effects in doubt:");
    expect(lines.slice(at, at + 4)).toEqual([
      "effects in doubt:",
      "  ship attempt 1 (#1): verified by its probe",
      "  pay attempt 1 (#2): asked a person",
      "  pay attempt 1 (#3): a person said it happened",
    ]);
    expect(debugView({ ...answered, decisions: [] } as never)).not.toContain("effects in doubt:");
    expect(userView(answered as never)).toContain(
      "Side effects whose outcome was unknown: 1 verified by a probe, 1 a person said happened.",
    );
  });

  it("the report lists them", () => {
    expect(htmlReport(answered as never)).toContain(
      "<p><strong>Effects in doubt:</strong></p>\n<ul><li>ship attempt 1 (#1): verified by its probe</li>" +
        "<li>pay attempt 1 (#2): asked a person</li><li>pay attempt 1 (#3): a person said it happened</li></ul>",
    );
  });

  it("the CLI's show prints them, operator and debug views", async () => {
    const operator = await cli("show", db, "asks");
    expect(operator.code).toBe(0);
    expect(operator.out.filter((l) => l.includes("in doubt"))).toEqual([
      "effects in doubt: 1 verified by its probe, 1 asked a person",
      `in doubt now: pay (charge under key ${key}): happened, retry or abort?`,
    ]);
    const debug = await cli("show", db, "answered", "--view", "debug");
    expect(debug.out.slice(debug.out.indexOf("effects in doubt:"), debug.out.indexOf("effects in doubt:") + 4)).toEqual(
      [
        "effects in doubt:",
        "  ship attempt 1 (#1): verified by its probe",
        "  pay attempt 1 (#2): asked a person",
        "  pay attempt 1 (#3): a person said it happened",
      ],
    );
  });
});

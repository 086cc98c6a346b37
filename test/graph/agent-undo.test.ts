/**
 * Undos inside createAgent run by the graph's one undo runner (docs/decisions/0047-one-undo-runner.md):
 * a revision that drops a committed step leaves its undo pending, and it runs before the next model
 * call; one that fails, or whose outcome is unknown, asks a person (`compensate.failed`, the graph's
 * answers); a run that ends aborted undoes its effects; a process killed inside an undo is settled
 * through the journal on resume.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Command, MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { createAgent } from "langchain";
import { afterAll, describe, expect, it } from "vitest";
import { planMiddleware, type PlanMiddlewareOptions } from "../../src/middleware/index.js";
import { PermanentError } from "../../src/errors.js";
import { scriptedAgentModel, type Turn } from "../helpers/agent-model.js";
import { countedTool, ledger, type Ledger } from "../helpers/agent-tools.js";

const start = { messages: [{ role: "user", content: "Book the trip" }] };
const config = { configurable: { thread_id: "trip-1" } };
const resume = (value: unknown) => new Command({ resume: value });
const rules = (out: { decisions: { rule: string }[] }) => out.decisions.map((d) => d.rule);
const asked = (out: { __interrupt__?: { value: unknown }[] }) =>
  out.__interrupt__?.[0]?.value as Record<string, unknown>;

const dir = mkdtempSync(join(tmpdir(), "agent-undo-"));
const opened: SqliteSaver[] = [];
afterAll(() => {
  for (const saver of opened) if (saver.db.open) saver.db.close();
  rmSync(dir, { recursive: true, force: true });
});
function sqlite(file: string): SqliteSaver {
  const saver = SqliteSaver.fromConnString(file);
  opened.push(saver);
  return saver;
}

/** A hotel booked for the wrong date; `release` undoes a booking (its body decides how it goes). */
function hotel(l: Ledger, release: (n: number) => unknown) {
  return [
    countedTool(l, "book_hotel", (_n, args) => ({ hotel: `H-${String(args.date)}` })),
    countedTool(l, "release_hotel", (n) => release(n)),
    countedTool(l, "charge", () => {
      throw Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    }),
  ];
}

const undo = { tool: "release_hotel", inputs: ["hotel"] };
const booking = (id: string, date: string, extra: Record<string, unknown> = {}) => ({
  id,
  goal: "Book the hotel",
  tool: "book_hotel",
  args: { date },
  produces: ["hotel"],
  ...extra,
});
const v1 = { steps: [booking("hotel", "05-01", { compensate: undo, retry: { maxAttempts: 2, backoff: "none" } })] };
const v2 = { steps: [booking("hotel2", "05-02")] };
const effects = { sideEffectTools: ["book_hotel", "release_hotel", "charge"] };
/** The model books, revises its plan to another date, books again and finishes. */
const redated: Turn[] = [
  [{ name: "write_plan", args: v1 }],
  [{ name: "book_hotel", args: {} }],
  [{ name: "write_plan", args: v2 }],
  [{ name: "book_hotel", args: {} }],
  "booked",
];

function agent(
  turns: Turn[],
  tools: ReturnType<typeof countedTool>[],
  saver: BaseCheckpointSaver,
  options: PlanMiddlewareOptions = {},
) {
  return createAgent({
    model: scriptedAgentModel(turns),
    tools,
    middleware: [planMiddleware({ sleep: async () => {}, now: () => 0, ...effects, ...options })],
    checkpointer: saver,
  });
}

describe("an undo inside createAgent that fails", () => {
  it("asks a person with compensate.failed after its retry policy runs out; skip leaves the effect standing", async () => {
    const l = ledger();
    const a = agent(
      redated,
      hotel(l, () => {
        throw new PermanentError("the hotel's system is down");
      }),
      new MemorySaver(),
    );
    const first = await a.invoke(start, config);
    expect(asked(first)).toMatchObject({
      kind: "escalation",
      rule: "compensate.failed",
      stepId: "hotel",
      options: ["retry", "skip", "abort"],
    });
    expect(l.calls).toEqual({ book_hotel: 1, release_hotel: 2 });
    const out = await a.invoke(resume({ action: "skip" }), config);
    expect(rules(out)).toEqual(["compensate.failed", "human.skip"]);
    expect(out.compensations!.map((c) => [c.stepId, c.status])).toEqual([["hotel", "waived"]]);
    expect([l.calls, out.plan!.steps.map((s) => s.id), out.status]).toEqual([
      { book_hotel: 2, release_hotel: 2 },
      ["hotel2"],
      "completed",
    ]);
  });

  it("retry runs a fresh round of its retry policy before the model's next call", async () => {
    const l = ledger();
    const a = agent(
      redated,
      hotel(l, (n) => {
        if (n < 3) throw new PermanentError("the hotel's system is down");
        return { released: true };
      }),
      new MemorySaver(),
    );
    await a.invoke(start, config);
    const out = await a.invoke(resume({ action: "retry" }), config);
    expect(rules(out)).toEqual(["compensate.failed", "human.retry", "compensate.run"]);
    expect(out.compensations!.map((c) => [c.stepId, c.status, c.attempts])).toEqual([["hotel", "done", 1]]);
    expect([l.calls, out.status]).toEqual([{ book_hotel: 2, release_hotel: 3 }, "completed"]);
  });
});

describe("a run inside createAgent that ends aborted", () => {
  it("undoes its committed effects before it ends, once each under <key>:compensate", async () => {
    const l = ledger();
    const plan = {
      steps: [
        booking("hotel", "05-01", { compensate: undo }),
        { id: "pay", goal: "Pay", tool: "charge", args: { amount: 40 }, dependsOn: ["hotel"] },
      ],
    };
    const turns: Turn[] = [
      [{ name: "write_plan", args: plan }],
      [{ name: "book_hotel", args: {} }],
      [{ name: "charge", args: {} }],
      "never reached",
    ];
    const a = agent(
      turns,
      hotel(l, () => ({ released: true })),
      new MemorySaver(),
    );
    expect(asked(await a.invoke(start, config))).toMatchObject({ rule: "effect.in-doubt" });
    const out = await a.invoke(resume({ action: "abort" }), config);
    const booked = out.sideEffects[0]!.idempotencyKey;
    expect(rules(out)).toEqual(["effect.in-doubt", "human.abort", "compensate.run"]);
    expect([out.status, l.calls, l.keys.release_hotel]).toEqual([
      "aborted",
      { book_hotel: 1, charge: 1, release_hotel: 1 },
      [`${booked}:compensate`],
    ]);
    expect(out.compensations!.map((c) => [c.stepId, c.status])).toEqual([["hotel", "done"]]);
  });
});

/**
 * A process killed inside the undo after the hotel was released, before its result was written: the
 * saver's connection closes while the release runs; a new process on the file takes the run up with
 * `invoke(null)`.
 */
export function killedInTheUndo() {
  const l = ledger();
  let entered!: () => void;
  let release!: () => void;
  const inUndo = new Promise<void>((r) => (entered = r));
  const gate = new Promise<void>((r) => (release = r));
  const tools = () =>
    hotel(l, async (n) => {
      if (n === 1) {
        entered();
        await gate;
      }
      return { released: true };
    });
  async function dies(first: (saver: SqliteSaver) => Promise<unknown>): Promise<SqliteSaver> {
    const file = join(dir, `undo-${Math.random().toString(36).slice(2)}.sqlite`);
    const dying = sqlite(file);
    const run = first(dying).catch((e: unknown) => e);
    await inUndo;
    dying.db.close();
    release();
    expect(await run).toBeInstanceOf(Error);
    return sqlite(file);
  }
  return { l, tools, dies };
}

describe("a process killed inside an undo inside createAgent", () => {
  it("resumed with invoke(null): the revision stands, the undo is asked about (in doubt), recorded once", async () => {
    const { l, tools, dies } = killedInTheUndo();
    const saver = await dies((dying) => agent(redated, tools(), dying).invoke(start, config));
    expect(l.calls).toEqual({ book_hotel: 1, release_hotel: 1 });
    // A new process: a new saver on the file, a new agent and middleware, no model call yet.
    const second = agent(redated.slice(3), tools(), saver);
    const question = await second.invoke(null, config);
    expect(asked(question)).toMatchObject({
      rule: "compensate.failed",
      options: ["happened", "retry", "skip", "abort"],
    });
    expect(question.plan!.version).toBe(2);
    const out = await second.invoke(resume({ action: "happened", output: { released: true } }), config);
    expect(rules(out)).toEqual(["compensate.failed", "human.effect-happened"]);
    expect(out.compensations!.map((c) => [c.stepId, c.status])).toEqual([["hotel", "done"]]);
    expect([l.calls, out.plan!.version, out.status]).toEqual([{ book_hotel: 2, release_hotel: 1 }, 2, "completed"]);
  });

  it("an undo tool that honours keys is called again under the same key, once, and the undo is done", async () => {
    const { l, tools, dies } = killedInTheUndo();
    const honours = { effects: { honoursKeys: ["release_hotel"] } };
    const saver = await dies((dying) => agent(redated, tools(), dying, honours).invoke(start, config));
    const own = tools();
    const out = await agent(redated.slice(3), own, saver, { ...honours, tools: own }).invoke(null, config);
    expect(rules(out)).toEqual(["effect.recalled", "compensate.run"]);
    const [key] = l.keys.release_hotel!;
    expect([l.calls, l.keys.release_hotel, out.status]).toEqual([
      { book_hotel: 2, release_hotel: 2 },
      [key, key],
      "completed",
    ]);
  });
});

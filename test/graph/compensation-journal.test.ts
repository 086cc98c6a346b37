/**
 * Compensations go through the effect journal (docs/decisions/0039-compensation.md,
 * docs/decisions/0038-effect-journal.md): an undo cut before it answered is settled like any
 * side-effecting call, never called again silently; a fork does not undo twice; and an operation
 * made again after its effect was undone gets a fresh key instead of the cancelled booking.
 */
import { tool } from "@langchain/core/tools";
import { Command, MemorySaver, type BaseCheckpointSaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AssumptionBrokenError,
  isPlanManagerError,
  PermanentError,
  resumeRun,
  staticPlanner,
  type PlanDraft,
  type PlanManagerOptions,
} from "../../src/index.js";
import { operationKey } from "../../src/plan/operation.js";
import { LIMITS } from "../../src/plan/schema/primitives.js";
import { sqliteJournal } from "../../src/storage/journal-sqlite.js";
import { harness, scriptedTool, type Loose } from "../helpers/graph.js";

const dir = mkdtempSync(join(tmpdir(), "compensation-journal-"));
const opened: SqliteSaver[] = [];
afterAll(() => {
  for (const saver of opened) if (saver.db.open) saver.db.close();
  rmSync(dir, { recursive: true, force: true });
});
const openSaver = (file: string) => {
  const saver = SqliteSaver.fromConnString(file);
  opened.push(saver);
  return saver;
};

type Entry = "ok" | Error | (() => Promise<unknown>);

/** A booking API that dedupes by key; its cancel follows `script` (a function runs after the cancellation). */
function airline(script: Entry[]) {
  const bookings = new Map<string, string>();
  const cancelled: string[] = [];
  const raw = { book: [] as string[], cancel: [] as string[] };
  const book = tool(
    async (args: Record<string, unknown>, config) => {
      const key = String(config?.configurable?.idempotencyKey ?? "");
      raw.book.push(key);
      if (!bookings.has(key)) bookings.set(key, `B-${bookings.size + 1}`);
      return { flight_id: bookings.get(key)! };
    },
    {
      name: "book",
      description: "Book",
      schema: z.object({ what: z.string(), date: z.string() }),
      metadata: { sideEffects: ["booking"] },
    },
  );
  const cancel = tool(
    async ({ flight_id }, config) => {
      raw.cancel.push(String(config?.configurable?.idempotencyKey ?? ""));
      const entry = script[Math.min(raw.cancel.length - 1, script.length - 1)]!;
      if (entry instanceof Error) throw entry;
      cancelled.push(String(flight_id));
      if (typeof entry === "function") await entry();
      return { cancelled: flight_id };
    },
    {
      name: "cancel",
      description: "Cancel a booking (does not dedupe by key)",
      schema: z.object({ flight_id: z.string().optional() }),
      metadata: { sideEffects: ["booking cancellation"] },
    },
  );
  return { book, cancel, raw, cancelled };
}

const ASSUMPTIONS = ["dates_ok", "dates_ok_2", "dates_ok_3"];

/** Books the flight, then the confirmation says the dates were wrong; each replan books another date. */
function trip(dates: string[]) {
  const plan: PlanDraft = {
    assumptions: ASSUMPTIONS.map((id) => ({ id, statement: `the dates are right (${id})` })),
    steps: [
      {
        id: "flight",
        goal: "Book the flight",
        tool: "book",
        args: { what: "flight", date: dates[0]! },
        produces: ["flight_id"],
        assumptions: ["dates_ok"],
        compensate: { tool: "cancel", inputs: ["flight_id"] },
      },
      { id: "confirm", goal: "Confirm", tool: "confirm", dependsOn: ["flight"], produces: ["ok"] },
    ],
  };
  let replans = 0;
  const replan = (req: { affectedSteps: PlanDraft["steps"] }): { steps: PlanDraft["steps"] } => {
    replans += 1;
    const suffix = `_${replans + 1}`;
    const base = (id: string) => id.replace(/_\d+$/, "");
    return {
      steps: req.affectedSteps.map((s) => ({
        ...s,
        id: base(s.id) + suffix,
        ...(base(s.id) === "flight"
          ? { args: { ...s.args, date: dates[replans]! }, assumptions: [ASSUMPTIONS[replans]!] }
          : { args: { again: replans }, dependsOn: [`flight${suffix}`] }),
      })),
    };
  };
  return staticPlanner({ plan, replan });
}

function setup(
  o: {
    dates?: string[];
    cancel?: Entry[];
    confirm?: unknown[];
    checkpointer?: BaseCheckpointSaver;
    airline?: ReturnType<typeof airline>;
  } & Partial<PlanManagerOptions> = {},
) {
  const { dates = ["05-01", "05-02"], cancel = ["ok"], confirm: script, checkpointer = new MemorySaver(), ...rest } = o;
  const a = o.airline ?? airline(cancel);
  const confirm = scriptedTool(
    "confirm",
    (script ?? [new AssumptionBrokenError("dates_ok", "the dates were wrong"), { ok: true }]) as never,
  );
  const { airline: _a, ...options } = rest as { airline?: unknown } & Partial<PlanManagerOptions>;
  const h = harness(trip(dates), [a.book, a.cancel, confirm], { threadId: "trip-1", checkpointer, ...options });
  return { ...h, ...a, confirm };
}

const key = (date: string) => operationKey("trip-1", "book", { what: "flight", date });
const rules = (out: Loose) => out.decisions.map((d: Loose) => d.rule);
const hang = () => new Promise<never>(() => undefined);
/** A cancel that blocks after cancelling until released: the test kills the process while it waits. */
function cutInside() {
  let entered = () => {};
  let release = () => {};
  const inCall = new Promise<void>((r) => (entered = r));
  const gate = new Promise<void>((r) => (release = r));
  return { call: async () => (entered(), gate), entered: inCall, release: () => release() };
}

describe("a compensation cut before it answered, whose tool does not honour keys", () => {
  it("cut by its deadline: not called again; a person is asked, and told the undo's outcome is unknown", async () => {
    const s = setup({ cancel: [hang, "ok"], policy: { defaultTimeoutMs: 20 } });
    const out = await s.run();
    expect(s.raw.cancel).toEqual([`${key("05-01")}:compensate`]);
    expect(out.status).toBe("awaiting_human");
    expect(rules(out)).toEqual(["assumption.replan-local", "compensate.failed"]);
    const decision = out.decisions.at(-1);
    expect(decision.reason).toBe(
      `the outcome of cancel for the effect of step "flight" (${key("05-01")}) under key ${key("05-01")}:compensate ` +
        "is unknown: the outcome of the undo cancel under key " +
        `${key("05-01")}:compensate is unknown (the call was cut before it answered), and cancel is not declared to ` +
        "honour idempotency keys (effects.honoursKeys): did it happen? " +
        "retry calls it once more under the same key; skip leaves it as it is",
    );
    expect(out.pendingHuman.options).toEqual(["happened", "retry", "skip", "abort"]);
    expect(out.pendingHuman.context.compensation.failed).toMatchObject({ inDoubt: true, tool: "cancel" });
    expect(out.compensations[0]).toMatchObject({ status: "failed", inDoubt: true, attempts: 1 });
    // No step of the new version ran while the undo is in doubt.
    expect(s.raw.book).toEqual([key("05-01")]);
  });

  it("a person's retry approves exactly one more call under that key", async () => {
    const s = setup({ cancel: [hang, "ok"], policy: { defaultTimeoutMs: 20 } });
    await s.run();
    const out = await s.run(new Command({ resume: { action: "retry" } }));
    expect(out.status).toBe("completed");
    expect(s.raw.cancel).toEqual([`${key("05-01")}:compensate`, `${key("05-01")}:compensate`]);
    expect(out.compensations.map((c: Loose) => [c.status, c.attempts, c.inDoubt, c.approval])).toEqual([
      ["done", 1, undefined, undefined],
    ]);
    expect(rules(out)).toEqual([
      "assumption.replan-local",
      "compensate.failed",
      "human.effect-retry",
      "compensate.run",
    ]);
  });

  it("an approved call cut again is asked about again, not looped", async () => {
    const s = setup({ cancel: [hang], policy: { defaultTimeoutMs: 20 } });
    await s.run();
    const out = await s.run(new Command({ resume: { action: "retry" } }));
    expect(out.status).toBe("awaiting_human");
    expect(s.raw.cancel.length).toBe(2);
    expect(rules(out).slice(-2)).toEqual(["human.effect-retry", "compensate.failed"]);
    const again = await s.run(new Command({ resume: { action: "skip" } }));
    expect([again.status, s.raw.cancel.length, again.compensations[0].status]).toEqual(["completed", 2, "waived"]);
  });

  it("a tool declared to honour keys (effects.honoursKeys) is called again under the same key, once", async () => {
    const s = setup({ cancel: [hang, "ok"], policy: { defaultTimeoutMs: 20 }, effects: { honoursKeys: ["cancel"] } });
    const out = await s.run();
    expect(out.status).toBe("completed");
    expect(s.raw.cancel).toEqual([`${key("05-01")}:compensate`, `${key("05-01")}:compensate`]);
    // The call made again is a settlement of the undo in doubt, recorded before the undo's own decision.
    expect(rules(out)).toEqual(["assumption.replan-local", "effect.recalled", "compensate.run"]);
    expect(out.decisions[1]).toMatchObject({ stepId: "flight", failureClass: "none", action: "retry" });
  });

  it("a connection reset after the cancellation is in doubt too: one call, a person asked", async () => {
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    const s = setup({
      cancel: [
        async () => {
          throw reset;
        },
        "ok",
      ],
    });
    const out = await s.run();
    expect([out.status, s.raw.cancel.length, s.cancelled]).toEqual(["awaiting_human", 1, ["B-1"]]);
    expect(rules(out).at(-1)).toBe("compensate.failed");
  });

  it("the process killed during the refund (SQLite): the resumed run does not call it again, it asks", async () => {
    const file = join(dir, "killed.sqlite");
    let entered = () => {};
    let release = () => {};
    const inCall = new Promise<void>((r) => (entered = r));
    const gate = new Promise<void>((r) => (release = r));
    const a = airline([async () => (entered(), gate), "ok"]);
    const dying = openSaver(file);
    const first = setup({ airline: a, checkpointer: dying })
      .run()
      .catch((e: unknown) => e);
    await inCall;
    dying.db.close();
    release();
    expect(await first).toBeInstanceOf(Error);
    const saver = openSaver(file);
    // The dead process's lease on the thread: on another host it would run out; here its pid lives on.
    saver.db.prepare("DELETE FROM langgraph_replan_thread_claims").run();
    const confirmed = [{ ok: true }];
    const out = await setup({ airline: a, checkpointer: saver, confirm: confirmed }).run(null);
    expect(a.raw.cancel).toEqual([`${key("05-01")}:compensate`]);
    expect(out.status).toBe("awaiting_human");
    expect(rules(out).at(-1)).toBe("compensate.failed");
    expect(out.compensations[0]).toMatchObject({ status: "failed", inDoubt: true });
  });

  it("a person's retry of the refund, killed in it too (SQLite), is asked about again: the undo is called twice in all", async () => {
    const file = join(dir, "killed-twice.sqlite");
    const cuts = [cutInside(), cutInside()];
    const a = airline([cuts[0]!.call, cuts[1]!.call, "ok"]);
    // The process dies in the cancel: its database connection is gone before the call answers.
    const dieIn = async (saver: SqliteSaver, run: Promise<unknown>, cut: ReturnType<typeof cutInside>) => {
      await cut.entered;
      saver.db.close();
      cut.release();
      expect(await run.catch((e: unknown) => e)).toBeInstanceOf(Error);
    };
    const fresh = () => {
      const saver = openSaver(file);
      saver.db.prepare("DELETE FROM langgraph_replan_thread_claims").run();
      return { saver, s: setup({ airline: a, checkpointer: saver, confirm: [{ ok: true }] }) };
    };
    const first = openSaver(file);
    await dieIn(first, setup({ airline: a, checkpointer: first }).run(), cuts[0]!);
    const second = fresh();
    expect((await second.s.run(null)).status).toBe("awaiting_human");
    await dieIn(second.saver, resumeRun(second.s.graph, second.s.config, { action: "retry" }), cuts[1]!);
    expect(a.raw.cancel.length).toBe(2);
    const third = fresh();
    const out = await third.s.run(null);
    expect(a.raw.cancel).toEqual([`${key("05-01")}:compensate`, `${key("05-01")}:compensate`]);
    expect([out.status, out.pendingHuman.context.compensation.failed.inDoubt]).toEqual(["awaiting_human", true]);
    expect(rules(out)).toEqual([
      "assumption.replan-local",
      "compensate.failed",
      "human.effect-retry",
      "compensate.failed",
    ]);
    expect(out.compensations.map((c: Loose) => [c.status, c.inDoubt, c.approval?.key])).toEqual([
      ["failed", true, undefined],
    ]);
    // Asked again and approved again: one more call, which answers.
    const done = (await resumeRun(third.s.graph, third.s.config, { action: "retry" })) as Loose;
    expect([done.status, a.raw.cancel.length, a.cancelled]).toEqual(["completed", 3, ["B-1", "B-1", "B-1"]]);
  });

  it("a result the journal holds for the compensation's key is reused: the undo is done", async () => {
    const file = join(dir, "lost.sqlite");
    const saver = openSaver(file);
    const s = setup({ checkpointer: saver });
    // Killed between the cancel's end and its checkpoint: every write after the call is lost.
    const put = saver.put.bind(saver);
    const putWrites = saver.putWrites.bind(saver);
    const dead = () => Promise.reject(new Error("killed"));
    saver.put = (...args) => (s.raw.cancel.length > 0 ? dead() : put(...args));
    saver.putWrites = (...args) => (s.raw.cancel.length > 0 ? dead() : putWrites(...args));
    expect(((await s.run().catch((e: unknown) => e)) as Error).message).toBe("killed");
    saver.put = put;
    saver.putWrites = putWrites;
    const out = await s.run(null);
    expect(out.status).toBe("completed");
    expect(s.raw.cancel.length).toBe(1);
    expect(out.compensations.map((c: Loose) => c.status)).toEqual(["done"]);
  });
});

describe("an undo in doubt at the run's end", () => {
  it("an aborted run asks about it (retry or skip), and a retry makes one more call before the run ends", async () => {
    const a = airline([hang, "ok"]);
    const pay = scriptedTool("pay", [new PermanentError("card declined")]);
    const draft: PlanDraft = {
      steps: [
        {
          id: "flight",
          goal: "Book",
          tool: "book",
          args: { what: "flight", date: "05-01" },
          produces: ["flight_id"],
          compensate: { tool: "cancel", inputs: ["flight_id"] },
        },
        { id: "pay", goal: "Pay", tool: "pay", dependsOn: ["flight"] },
      ],
    };
    const h = harness(draft, [a.book, a.cancel, pay], { threadId: "trip-1", policy: { defaultTimeoutMs: 20 } });
    expect((await h.run()).status).toBe("awaiting_human");
    const asked = await h.run(new Command({ resume: { action: "abort" } }));
    expect([asked.status, a.raw.cancel.length, asked.pendingHuman.options]).toEqual([
      "awaiting_human",
      1,
      ["happened", "retry", "skip"],
    ]);
    expect(asked.pendingHuman.context.compensation).toMatchObject({ endStatus: "aborted", failed: { inDoubt: true } });
    const out = await h.run(new Command({ resume: { action: "retry" } }));
    expect([out.status, a.raw.cancel, out.compensations[0].status]).toEqual([
      "aborted",
      [`${key("05-01")}:compensate`, `${key("05-01")}:compensate`],
      "done",
    ]);
  });
});

describe("an undo in doubt that a person says happened", () => {
  it("mid-run: recorded done under the person's decision, the cancel not called again, its output journaled", async () => {
    const saver = openSaver(join(dir, "happened.sqlite"));
    const s = setup({ cancel: [hang, "ok"], policy: { defaultTimeoutMs: 20 }, checkpointer: saver });
    const compensationKey = `${key("05-01")}:compensate`;
    expect((await s.run()).pendingHuman.options).toEqual(["happened", "retry", "skip", "abort"]);
    await resumeRun(s.graph, s.config, { action: "happened", output: { cancelled: "B-1" } });
    const out = await s.state();
    expect([out.status, s.raw.cancel, s.raw.book]).toEqual([
      "completed",
      [compensationKey],
      [key("05-01"), key("05-02")],
    ]);
    expect(rules(out)).toEqual(["assumption.replan-local", "compensate.failed", "human.effect-happened"]);
    const said = out.decisions.at(-1);
    expect([said.by, said.stepId, said.action, said.reason]).toEqual([
      "person",
      "flight",
      "provide",
      `a person said cancel under key ${compensationKey} took effect: the compensation is done and not called again`,
    ]);
    expect(out.compensations).toEqual([
      {
        stepId: "flight",
        idempotencyKey: key("05-01"),
        compensationKey,
        status: "done",
        at: said.at,
        tool: "cancel",
        args: { flight_id: "B-1" },
        attempts: 1,
      },
    ]);
    // Every branch of the thread sees the undo done: the journal holds the person's output as its result.
    expect((await sqliteJournal(saver.db).lookup("trip-1", compensationKey))?.result).toEqual({
      ok: true,
      output: { cancelled: "B-1" },
    });
  });

  it("at the run's end: the output is the undo's, checked against the fact limits, not the step's produces", async () => {
    const a = airline([hang, "ok"]);
    const pay = scriptedTool("pay", [new PermanentError("card declined")]);
    const draft: PlanDraft = {
      steps: [
        {
          id: "flight",
          goal: "Book",
          tool: "book",
          args: { what: "flight", date: "05-01" },
          produces: ["flight_id"],
          compensate: { tool: "cancel", inputs: ["flight_id"] },
        },
        { id: "pay", goal: "Pay", tool: "pay", dependsOn: ["flight"] },
      ],
    };
    const h = harness(draft, [a.book, a.cancel, pay], { threadId: "trip-1", policy: { defaultTimeoutMs: 20 } });
    await h.run();
    const asked = await h.run(new Command({ resume: { action: "abort" } }));
    expect(asked.pendingHuman.options).toEqual(["happened", "retry", "skip"]);
    const tooBig = { action: "happened", output: { note: "x".repeat(LIMITS.maxJsonBytes) } } as const;
    const refused = await resumeRun(h.graph, h.config, tooBig).catch((e: unknown) => e);
    expect(isPlanManagerError(refused) && refused.code).toBe("invalid_resume");
    await resumeRun(h.graph, h.config, { action: "happened", output: { cancelled: "B-1" } });
    const out = await h.state();
    expect([out.status, a.raw.cancel.length]).toEqual(["aborted", 1]);
    expect(out.compensations.map((c: Loose) => [c.status, c.attempts, c.inDoubt, c.error])).toEqual([
      ["done", 1, undefined, undefined],
    ]);
    expect(rules(out).slice(-3)).toEqual(["human.abort", "compensate.failed", "human.effect-happened"]);
  });

  it("an undo that failed with an error, not in doubt, is not offered happened", async () => {
    const s = setup({ cancel: [new PermanentError("no such booking")] });
    const asked = await s.run();
    expect(asked.pendingHuman.options).toEqual(["retry", "skip", "abort"]);
    const refused = await resumeRun(s.graph, s.config, { action: "happened", output: { cancelled: "B-1" } }).catch(
      (e: unknown) => e,
    );
    expect(isPlanManagerError(refused) && refused.code).toBe("invalid_resume");
    expect(s.raw.cancel.length).toBe(3);
  });
});

describe("a fork or time travel does not undo twice", () => {
  it("forked from a checkpoint before the undo was recorded done: the cancel tool is not called again", async () => {
    const s = setup({});
    const done = await s.run();
    expect([done.status, s.raw.cancel.length]).toEqual(["completed", 1]);
    let before: Loose | undefined;
    for await (const snapshot of s.graph.getStateHistory(s.config)) {
      const records = (snapshot.values as Loose).compensations as Loose[] | undefined;
      if (records?.[0]?.status === "pending") before = snapshot;
    }
    expect(before).toBeDefined();
    const out = (await s.graph.invoke(null, before!.config)) as Loose;
    expect(out.status).toBe("completed");
    expect(s.raw.cancel.length).toBe(1);
    expect(out.compensations.map((c: Loose) => c.status)).toEqual(["done"]);
  });

  it("forked from before the booking: the booking cancelled on another branch is not reused, it is made again", async () => {
    const s = setup({});
    await s.run();
    let before: Loose | undefined;
    for await (const snapshot of s.graph.getStateHistory(s.config)) {
      const values = snapshot.values as Loose;
      if (values.plan?.version === 1 && values.sideEffects?.length === 0 && values.status === "running")
        before = snapshot;
    }
    expect(before).toBeDefined();
    const out = (await s.graph.invoke(null, before!.config)) as Loose;
    expect(out.status).toBe("completed");
    expect(s.raw.book).toEqual([key("05-01"), key("05-02"), `${key("05-01")}:redo-1`]);
    expect(s.raw.cancel.length).toBe(1);
    expect(out.facts.flight_id.value).toBe("B-3");
  });
});

describe("an operation made again after its effect was undone", () => {
  it("v1 books, v2 cancels it, v3 books the same again: a fresh key, a new booking, not the cancelled one", async () => {
    const s = setup({
      dates: ["05-01", "05-02", "05-01"],
      confirm: [
        new AssumptionBrokenError("dates_ok", "the dates were wrong"),
        new AssumptionBrokenError("dates_ok_2", "wrong again"),
        { ok: true },
      ],
    });
    const out = await s.run();
    expect(out.status).toBe("completed");
    expect(out.plan.version).toBe(3);
    expect(s.raw.book).toEqual([key("05-01"), key("05-02"), `${key("05-01")}:redo-1`]);
    expect(s.raw.cancel).toEqual([`${key("05-01")}:compensate`, `${key("05-02")}:compensate`]);
    expect(s.cancelled).toEqual(["B-1", "B-2"]);
    expect(out.facts.flight_id.value).toBe("B-3");
    expect(rules(out)).not.toContain("effect.reused");
    expect(out.sideEffects.map((e: Loose) => e.idempotencyKey)).toEqual([
      key("05-01"),
      key("05-02"),
      `${key("05-01")}:redo-1`,
    ]);
  });

  it("a journaled result under a key whose undo the journal holds is not reused, though the state lost the undo", async () => {
    const saver = openSaver(join(dir, "undone.sqlite"));
    const journal = sqliteJournal(saver.db);
    const at = "2026-01-01T00:00:00.000Z";
    const booked = key("05-01");
    // What another branch left in the thread's journal: the booking, then its cancellation.
    await journal.intent("trip-1", { key: booked, stepId: "flight", tool: "book", args: {}, attempt: 1, at });
    await journal.result("trip-1", booked, { ok: true, output: { flight_id: "B-9" } });
    const undo = `${booked}:compensate`;
    await journal.intent("trip-1", { key: undo, stepId: "flight", tool: "cancel", args: {}, attempt: 1, at });
    await journal.result("trip-1", undo, { ok: true, output: { cancelled: "B-9" } });
    const s = setup({ checkpointer: saver, confirm: [{ ok: true }] });
    const out = await s.run();
    expect(out.status).toBe("completed");
    expect(s.raw.book).toEqual([`${booked}:redo-1`]);
    expect(out.facts.flight_id.value).toBe("B-1");
    expect(out.sideEffects.map((e: Loose) => e.idempotencyKey)).toEqual([`${booked}:redo-1`]);
    expect(rules(out)).toEqual([]);
  });
});

/**
 * Compensation (docs/decisions/0039-compensation.md): a committed side effect that a
 * replan or the run's end abandons is undone by its step's `compensate` tool, once, under its own key.
 */
import { tool } from "@langchain/core/tools";
import { Command, MemorySaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  AssumptionBrokenError,
  isPlanManagerError,
  PermanentError,
  staticPlanner,
  type PlanDraft,
} from "../../src/index.js";
import { managerWrite } from "../../src/graph/boundary.js";
import { operationKey } from "../../src/plan/operation.js";
import { runGoingOn, statusCore } from "../../src/mcp/status.js";
import { brief, harness, scriptedTool, type Loose } from "../helpers/graph.js";

/**
 * A booking API that honours idempotency keys like a real payment API: one booking per new key, the
 * old answer for a known one; its cancel dedupes by key too. `raw` counts every call, `effects` what happened.
 */
function airline(cancelScript: ("ok" | Error | (() => Promise<unknown>))[] = ["ok"]) {
  const bookings = new Map<string, string>();
  const cancelled = new Map<string, string>();
  const raw = { book: [] as string[], cancel: [] as { key: string; booking_id: unknown }[] };
  const book = tool(
    async (args: Record<string, unknown>, config) => {
      const key = String(config?.configurable?.idempotencyKey ?? "");
      raw.book.push(key);
      if (!bookings.has(key)) bookings.set(key, `B-${bookings.size + 1}`);
      return { [String(args.as ?? "booking_id")]: bookings.get(key)! };
    },
    {
      name: "book",
      description: "Book",
      schema: z.object({ what: z.string(), date: z.string(), as: z.string().optional() }),
      metadata: { sideEffects: ["booking"] },
    },
  );
  const cancel = tool(
    async ({ flight_id, hotel_id }, config) => {
      const booking_id = flight_id ?? hotel_id;
      const key = String(config?.configurable?.idempotencyKey ?? "");
      raw.cancel.push({ key, booking_id });
      const entry = cancelScript[Math.min(raw.cancel.length - 1, cancelScript.length - 1)]!;
      if (entry instanceof Error) throw entry;
      if (!cancelled.has(key)) cancelled.set(key, String(booking_id));
      // A function runs after the cancellation happened: a reset connection, or a slow answer.
      if (typeof entry === "function") await entry();
      return { cancelled: booking_id };
    },
    {
      name: "cancel",
      description: "Cancel a booking",
      schema: z.object({ flight_id: z.string().optional(), hotel_id: z.string().optional() }),
      metadata: { sideEffects: ["booking cancellation"] },
    },
  );
  return { book, cancel, raw, cancellations: () => [...cancelled.values()], bookings: () => bookings.size };
}

const undo = (input: string) => ({ tool: "cancel", inputs: [input] });

function bookStep(id: string, what: string, date: string, as: string, compensate = true) {
  return {
    id,
    goal: `Book the ${what}`,
    tool: "book",
    args: { what, date, as },
    produces: [as],
    assumptions: ["dates_ok"],
    ...(compensate ? { compensate: undo(as) } : {}),
  };
}

/** Books the flight (and the hotel), then the confirmation says the dates were wrong. */
function trip(withHotel: boolean, compensate = true): PlanDraft {
  const steps: PlanDraft["steps"] = [bookStep("flight", "flight", "05-01", "flight_id", compensate)];
  if (withHotel) steps.push({ ...bookStep("hotel", "hotel", "05-01", "hotel_id"), dependsOn: ["flight"] });
  const last = withHotel ? "hotel" : "flight";
  steps.push({ id: "confirm", goal: "Confirm the trip", tool: "confirm", dependsOn: [last], produces: ["ok"] });
  return { assumptions: [{ id: "dates_ok", statement: "the dates are right" }], steps };
}

/** The replan books the same things on another date, under new ids. */
const redate =
  (date: string) =>
  (req: { affectedSteps: PlanDraft["steps"] }): { steps: PlanDraft["steps"] } => ({
    steps: req.affectedSteps.map((s) =>
      s.id === "confirm"
        ? { ...s, id: "confirm_2", args: { again: true }, dependsOn: [s.dependsOn![0] + "_2"], assumptions: [] }
        : {
            ...s,
            id: `${s.id}_2`,
            args: { ...s.args, date },
            assumptions: [],
            ...(s.dependsOn ? { dependsOn: s.dependsOn.map((d) => `${d}_2`) } : {}),
          },
    ),
  });

function setup(opts: { hotel?: boolean; compensate?: boolean; date?: string; cancel?: Parameters<typeof airline>[0] }) {
  const a = airline(opts.cancel);
  const confirm = scriptedTool("confirm", [
    new AssumptionBrokenError("dates_ok", "the dates were wrong"),
    { ok: true },
  ]);
  const planner = staticPlanner({
    plan: trip(opts.hotel ?? false, opts.compensate ?? true),
    replan: redate(opts.date ?? "05-02"),
  });
  const h = harness(planner, [a.book, a.cancel, confirm], { threadId: "trip-1" });
  return { ...h, ...a, confirm };
}

const key = (what: string, date: string, as: string) => operationKey("trip-1", "book", { what, date, as });
const rulesOf = (out: Loose) => out.decisions.map((d: { rule: string }) => d.rule);

describe("a replan that abandons a committed effect compensates it", () => {
  it("a booking replaced by a replan is cancelled exactly once under <key>:compensate, in state and decisions", async () => {
    const s = setup({});
    const out = await s.run();
    const booked = key("flight", "05-01", "flight_id");
    expect(out.status).toBe("completed");
    expect(s.raw.cancel).toEqual([{ key: `${booked}:compensate`, booking_id: "B-1" }]);
    expect(s.cancellations()).toEqual(["B-1"]);
    expect(out.compensations).toEqual([
      {
        stepId: "flight",
        idempotencyKey: booked,
        compensationKey: `${booked}:compensate`,
        status: "done",
        at: "2026-01-01T00:00:00.000Z",
        tool: "cancel",
        args: { flight_id: "B-1" },
        attempts: 1,
      },
    ]);
    expect(brief(out.decisions)).toEqual([
      "confirm: assumption_broken → replan_local [assumption.replan-local]",
      "flight: none → compensate [compensate.run]",
    ]);
    expect(out.decisions[1].reason).toBe(
      `cancel for the effect of step "flight" (${booked}) ran under key ${booked}:compensate`,
    );
    // The new booking is made after the old one is cancelled, and stands.
    expect(s.raw.book).toEqual([booked, key("flight", "05-02", "flight_id")]);
    expect(out.facts.flight_id.value).toBe("B-2");
  });

  it("two abandoned effects are compensated in reverse commit order", async () => {
    const s = setup({ hotel: true });
    const out = await s.run();
    expect(out.status).toBe("completed");
    expect(s.raw.cancel.map((c) => c.booking_id)).toEqual(["B-2", "B-1"]);
    expect(out.compensations.map((c: Loose) => [c.stepId, c.status])).toEqual([
      ["hotel", "done"],
      ["flight", "done"],
    ]);
    expect(brief(out.decisions).slice(1)).toEqual([
      "hotel: none → compensate [compensate.run]",
      "flight: none → compensate [compensate.run]",
    ]);
  });

  it("an effect whose operation the new version repeats is reused, not compensated", async () => {
    const s = setup({ date: "05-01" });
    const out = await s.run();
    expect(out.status).toBe("completed");
    expect(s.raw.cancel).toEqual([]);
    expect(out.compensations).toBeUndefined();
    expect(rulesOf(out)).toEqual(["assumption.replan-local", "effect.reused"]);
    expect(s.bookings()).toBe(1);
  });
});

describe("an abandoned effect with no compensate is asked about before the version commits", () => {
  it("escalates with compensate.missing; the replan's version is not written", async () => {
    const s = setup({ compensate: false });
    const out = await s.run();
    const booked = key("flight", "05-01", "flight_id");
    expect(out.status).toBe("awaiting_human");
    expect(out.plan.version).toBe(1);
    expect(out.planHistory).toEqual([]);
    expect(out.replans).toEqual([]);
    expect(rulesOf(out)).toEqual(["assumption.replan-local", "compensate.missing"]);
    const asked = out.__interrupt__[0].value;
    expect([asked.kind, asked.options, asked.context.rule, asked.context.compensation]).toEqual([
      "escalation",
      ["approve", "abort"],
      "compensate.missing",
      { missing: [{ stepId: "flight", idempotencyKey: booked }] },
    ]);
    expect(s.raw.book).toEqual([booked]);
  });

  it("approve keeps the effect: the version commits, the booking stands, nothing is cancelled", async () => {
    const s = setup({ compensate: false });
    await s.run();
    const out = await s.run(new Command({ resume: { action: "approve" } }));
    const booked = key("flight", "05-01", "flight_id");
    expect(out.status).toBe("completed");
    expect(out.plan.version).toBe(2);
    expect(s.raw.cancel).toEqual([]);
    expect(out.compensations).toEqual([
      {
        stepId: "flight",
        idempotencyKey: booked,
        compensationKey: `${booked}:compensate`,
        status: "waived",
        at: "2026-01-01T00:00:00.000Z",
      },
    ]);
    expect(brief(out.decisions).slice(1, 3)).toEqual([
      "flight: none → escalate [compensate.missing]",
      "flight: person → replan_local [human.approve-replan]",
    ]);
    expect(s.raw.book).toEqual([booked, key("flight", "05-02", "flight_id")]);
  });

  it("survives a SQLite checkpoint round trip: a new graph on the same file answers the held question", async () => {
    const dir = mkdtempSync(join(tmpdir(), "compensate-"));
    const file = join(dir, "run.db");
    const first = setup({ compensate: false });
    const saver = () => SqliteSaver.fromConnString(file);
    const build = (s: ReturnType<typeof setup>, confirm = s.confirm) =>
      harness(staticPlanner({ plan: trip(false, false), replan: redate("05-02") }), [s.book, s.cancel, confirm], {
        threadId: "trip-1",
        checkpointer: saver(),
      });
    const before = await build(first).run();
    expect([before.status, before.decisions.at(-1).rule]).toEqual(["awaiting_human", "compensate.missing"]);
    const second = setup({ compensate: false });
    // Another process, whose confirm tool answers at once.
    const confirmed = scriptedTool("confirm", [{ ok: true }]);
    const out = await build(second, confirmed).run(new Command({ resume: { action: "approve" } }));
    expect([out.status, out.plan.version, out.compensations.map((c: Loose) => c.status)]).toEqual([
      "completed",
      2,
      ["waived"],
    ]);
    rmSync(dir, { recursive: true, force: true });
  });

  it("abort ends the run with version 1; an answer not offered is refused and asked again", async () => {
    const s = setup({ compensate: false });
    await s.run();
    const refused = await s.run(new Command({ resume: { action: "retry" } }));
    expect(refused.__interrupt__[0].value.error).toContain("retry");
    const out = await s.run(new Command({ resume: { action: "abort", reason: "book by hand" } }));
    expect([out.status, out.plan.version, out.compensations, s.raw.cancel]).toEqual(["aborted", 1, undefined, []]);
    expect(rulesOf(out).at(-1)).toBe("human.abort");
  });
});

describe("the run's end compensates", () => {
  /** Books, then a payment fails for good and escalates. */
  function payAfterBooking(options: {
    compensateOn?: ("aborted" | "failed")[];
    cancel?: Parameters<typeof airline>[0];
  }) {
    const a = airline(options.cancel);
    const pay = scriptedTool("pay", [new PermanentError("card declined")]);
    const plan: PlanDraft = {
      steps: [
        {
          id: "flight",
          goal: "Book",
          tool: "book",
          args: { what: "flight", date: "05-01", as: "flight_id" },
          produces: ["flight_id"],
          compensate: undo("flight_id"),
        },
        { id: "pay", goal: "Pay", tool: "pay", dependsOn: ["flight"] },
      ],
    };
    const policy = options.compensateOn ? { compensateOn: options.compensateOn } : {};
    const h = harness(plan, [a.book, a.cancel, pay], { threadId: "trip-1", policy });
    return { ...h, ...a };
  }

  it("an aborted run cancels the booking before it ends", async () => {
    const s = payAfterBooking({});
    expect((await s.run()).status).toBe("awaiting_human");
    const out = await s.run(new Command({ resume: { action: "abort" } }));
    const booked = key("flight", "05-01", "flight_id");
    expect(out.status).toBe("aborted");
    expect(s.raw.cancel).toEqual([{ key: `${booked}:compensate`, booking_id: "B-1" }]);
    expect(out.compensations.map((c: Loose) => c.status)).toEqual(["done"]);
    expect(rulesOf(out).slice(-2)).toEqual(["human.abort", "compensate.run"]);
    expect(out.outcome.summary).toContain("Aborted");
  });

  it("a plan status read while the aborted run's undo is still queued says the run goes on", async () => {
    const s = payAfterBooking({});
    await s.run();
    await s.run(new Command({ resume: { action: "abort" } }));
    const seen: [string, string[], boolean, boolean][] = [];
    for await (const snapshot of s.graph.getStateHistory(s.config)) {
      const core = statusCore(snapshot);
      if (core.stored === "aborted")
        seen.push([core.stored, [...snapshot.next], core.ending === true, runGoingOn(core)]);
    }
    // Newest first: the run's end; before it, finalize still to write the outcome; before that, the
    // checkpoint written between the abort and the undo.
    expect(seen).toEqual([
      ["aborted", [], false, false],
      ["aborted", ["finalize"], true, true],
      ["aborted", ["executor"], true, true],
    ]);
  });

  it("a failed run compensates only with policy.compensateOn including failed", async () => {
    for (const compensateOn of [undefined, ["aborted", "failed"] as ("aborted" | "failed")[]]) {
      const a = airline();
      const plan: PlanDraft = {
        steps: [
          {
            id: "flight",
            goal: "Book",
            tool: "book",
            args: { what: "flight", date: "05-01", as: "flight_id" },
            produces: ["flight_id"],
            compensate: undo("flight_id"),
          },
          { id: "x", goal: "x", tool: "confirm" },
          { id: "y", goal: "y", tool: "confirm", dependsOn: ["x"] },
        ],
      };
      const confirm = scriptedTool("confirm", [{}]);
      const policy = compensateOn ? { compensateOn } : {};
      const h = harness(plan, [a.book, a.cancel, confirm], { threadId: "trip-1", policy, reviewPlan: true });
      expect((await h.run()).status).toBe("awaiting_review");
      // x can never run: y waits for it, and the run ends failed (blocked) once the booking is made.
      await h.graph.updateState(h.config, managerWrite({ steps: { x: { status: "invalidated", attempts: 1 } } }));
      const out = await h.run(new Command({ resume: { action: "approve" } }));
      expect(out.status).toBe("failed");
      expect(a.raw.book.length).toBe(1);
      expect(a.raw.cancel.length).toBe(compensateOn ? 1 : 0);
      expect(out.compensations?.map((c: Loose) => c.status)).toEqual(compensateOn ? ["done"] : undefined);
    }
  });
});

describe("a failing compensation", () => {
  it("is retried per its step's retry policy: fails twice, then succeeds", async () => {
    const s = setup({ cancel: [new Error("HTTP 503"), new Error("HTTP 503"), "ok"] });
    const out = await s.run();
    expect(out.status).toBe("completed");
    expect(s.raw.cancel.length).toBe(3);
    expect(new Set(s.raw.cancel.map((c) => c.key)).size).toBe(1);
    expect(s.cancellations()).toEqual(["B-1"]);
    expect(out.compensations[0]).toMatchObject({ status: "done", attempts: 3 });
    // The default retry policy's backoff, on the injected clock.
    expect(s.clock.sleeps).toEqual([200, 400]);
  });

  it("one that always fails escalates with compensate.failed; retry runs it again, skip leaves it standing", async () => {
    const s = setup({ cancel: [new Error("HTTP 503")] });
    const out = await s.run();
    expect(out.status).toBe("awaiting_human");
    expect(s.raw.cancel.length).toBe(3);
    expect(rulesOf(out).at(-1)).toBe("compensate.failed");
    const asked = out.__interrupt__[0].value;
    expect(asked.options).toEqual(["retry", "skip", "abort"]);
    expect(asked.context.compensation.failed).toMatchObject({ stepId: "flight", tool: "cancel" });
    expect(out.compensations[0]).toMatchObject({ status: "failed", attempts: 3 });
    // No step of the new version ran while the undo failed.
    expect(s.raw.book.length).toBe(1);
    const again = await s.run(new Command({ resume: { action: "retry" } }));
    expect([again.status, s.raw.cancel.length]).toEqual(["awaiting_human", 6]);
    const skipped = await s.run(new Command({ resume: { action: "skip" } }));
    expect(skipped.status).toBe("completed");
    expect(skipped.compensations[0].status).toBe("waived");
    expect(rulesOf(skipped)).toEqual([
      "assumption.replan-local",
      "compensate.failed",
      "human.retry",
      "compensate.failed",
      "human.skip",
    ]);
    expect(s.raw.book.length).toBe(2);
  });
});

describe("abort while an undo is asked about", () => {
  it("the undos still waiting run before the run ends", async () => {
    const e = new Error("HTTP 503");
    const s = setup({ hotel: true, cancel: [e, e, e, async () => undefined] });
    const out = await s.run();
    expect(rulesOf(out).at(-1)).toBe("compensate.failed");
    expect(out.compensations.map((c: Loose) => [c.stepId, c.status])).toEqual([
      ["hotel", "failed"],
      ["flight", "pending"],
    ]);
    const ended = await s.run(new Command({ resume: { action: "abort" } }));
    expect(ended.status).toBe("aborted");
    expect(ended.compensations.map((c: Loose) => [c.stepId, c.status])).toEqual([
      ["hotel", "failed"],
      ["flight", "done"],
    ]);
    expect(s.cancellations()).toEqual(["B-1"]);
  });
});

describe("a run killed mid-compensation", () => {
  function tripWith(cancel: Parameters<typeof airline>[0], options: { effects?: { honoursKeys: string[] } } = {}) {
    const a = airline(cancel);
    const confirm = scriptedTool("confirm", [
      new AssumptionBrokenError("dates_ok", "the dates were wrong"),
      { ok: true },
    ]);
    const planner = staticPlanner({ plan: trip(false), replan: redate("05-02") });
    const h = harness(planner, [a.book, a.cancel, confirm], {
      threadId: "trip-1",
      checkpointer: new MemorySaver(),
      ...options,
    });
    return { ...h, ...a };
  }
  const booked = () => key("flight", "05-01", "flight_id");

  it("cut after the cancellation happened (a connection reset): called again under the same key, cancelled once", async () => {
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    // The cancellation lands, then the connection drops before the answer arrives. The cancel
    // dedupes by key, and says so: a reset leaves it in doubt, settled by calling again under the key.
    const s = tripWith(
      [
        async () => {
          throw reset;
        },
        "ok",
      ],
      { effects: { honoursKeys: ["cancel"] } },
    );
    const out = await s.run();
    expect(out.status).toBe("completed");
    expect(s.raw.cancel.map((c) => c.key)).toEqual([`${booked()}:compensate`, `${booked()}:compensate`]);
    expect(s.cancellations()).toEqual(["B-1"]);
    expect(rulesOf(out).filter((r: string) => r === "compensate.run").length).toBe(1);
  });

  it("stopped through the run's signal while the cancel is in flight: resume does not cancel again", async () => {
    let release = () => {};
    let started = () => {};
    const inFlight = new Promise<void>((resolve) => (started = resolve));
    const s = tripWith([() => (started(), new Promise<void>((resolve) => (release = resolve))), "ok"]);
    const controller = new AbortController();
    const run = s.graph
      .invoke({ goal: "trip", context: {} } as never, { ...s.config, signal: controller.signal })
      .catch((e: Error) => e.name);
    await inFlight;
    controller.abort();
    expect(await run).toBe("AbortError");
    release(); // the cancellation went through after the caller stopped waiting
    const out = await resume(s.graph, s.config);
    expect(out.status).toBe("completed");
    expect(s.raw.cancel.map((c) => c.key)).toEqual([`${booked()}:compensate`]);
    expect(s.cancellations()).toEqual(["B-1"]);
    expect(out.compensations.map((c: Loose) => c.status)).toEqual(["done"]);
  });
});

/** Resumes the thread once the stopped run has let go of it (`thread_busy` until then). */
async function resume(graph: { invoke(input: null, config: object): Promise<unknown> }, config: object) {
  for (let i = 0; i < 400; i++) {
    try {
      return (await graph.invoke(null, config)) as Loose;
    } catch (error) {
      if (!isPlanManagerError(error) || error.code !== "thread_busy") throw error;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  throw new Error("the thread stayed busy for 2 s");
}

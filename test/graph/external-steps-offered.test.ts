/**
 * Several external steps ready together are offered at once (docs/decisions/0042-external-steps.md):
 * one question lists them all, the calling agent submits any of them in any order, and each is on its
 * own ladder, exactly as one external step is. A side-effecting one has its own key and journal intent,
 * and each commits once, whatever the order of the submissions.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { afterEach, describe, expect, it } from "vitest";
import { isPlanManagerError, pendingQuestion, resumeRun, staticPlanner, type PlanDraft } from "../../src/index.js";
import { userView } from "../../src/views/index.js";
import { effectKey } from "../../src/policy/attempt/attempt.js";
import { externalCall } from "../../src/policy/attempt/external.js";
import { saverAdapter } from "../../src/storage/index.js";
import { harness, scriptedTool, type Loose } from "../helpers/graph.js";

const PACK = "Pack the parcel; answer with its parcel id";
const LABEL = "Buy postage and print the label; answer with the tracking number";
const BOOK = "Book the courier's pickup; answer with the pickup slot";
const TELL = "Tell the customer the pickup slot";
const AT = "2026-01-01T00:00:00.000Z";

/** Three independent external steps, one made ready by another's submission, and a tool step after them. */
const draft: PlanDraft = {
  steps: [
    {
      id: "pack",
      goal: "pack the parcel",
      external: { instructions: PACK },
      produces: ["parcel"],
      successSignal: 'output.parcel != ""',
      retry: { maxAttempts: 3, backoff: "none" },
    },
    {
      id: "label",
      goal: "print the label",
      external: { instructions: LABEL },
      produces: ["tracking"],
      sideEffects: ["buys postage"],
      idempotent: false,
    },
    {
      id: "book",
      goal: "book the pickup",
      external: { instructions: BOOK },
      produces: ["slot"],
      sideEffects: ["books a courier"],
      idempotent: false,
    },
    { id: "tell", goal: "tell the customer", external: { instructions: TELL }, dependsOn: ["book"], inputs: ["slot"] },
    {
      id: "ship",
      goal: "hand the parcel over",
      tool: "ship",
      dependsOn: ["pack", "label", "book"],
      inputs: ["parcel", "tracking", "slot"],
    },
  ],
};

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup() {
  const dir = mkdtempSync(join(tmpdir(), "offered-"));
  dirs.push(dir);
  const checkpointer = SqliteSaver.fromConnString(join(dir, "plans.sqlite"));
  const ship = scriptedTool("ship", [{ shipped: true }]);
  const h = harness(draft, [ship], { checkpointer, threadId: "shop-1" });
  const journal = saverAdapter(checkpointer).journal!;
  return { ...h, ship, checkpointer, journal };
}

/** The key `effectKey` gives a side-effecting external step of the plan (no inputs). */
function keyOf(state: Loose, id: string): string {
  const step = state.plan.steps.find((s: Loose) => s.id === id);
  const call = externalCall(step, {});
  return effectKey("shop-1", step, call.tool, call.args)!.key;
}

/** The question's offers as `id@attempt`, in the order listed. */
async function offers(h: ReturnType<typeof setup>): Promise<string[]> {
  const question = (await pendingQuestion(h.graph, h.config)) as Loose | undefined;
  if (question?.kind !== "external_step") return [`not an external step: ${String(question?.kind)}`];
  return question.context.offered.map((o: Loose) => `${o.step.id}@${o.attempt}`);
}

async function submit(h: ReturnType<typeof setup>, stepId: string, body: Record<string, unknown>) {
  await resumeRun(h.graph, h.config, { action: "submit", stepId, ...body } as never);
  return (await h.graph.getState(h.config)).values as Loose;
}

const rules = (state: Loose) => state.decisions.map((d: Loose) => `${d.stepId ?? "-"} ${d.rule}`);

describe("several ready external steps: one question lists them all", () => {
  it("pauses once with the three, the first as the question's own step, each with its key and journal intent", async () => {
    const h = setup();
    const paused = await h.run();
    expect(paused.status).toBe("awaiting_human");
    expect(paused.__interrupt__).toHaveLength(1);
    const label = keyOf(paused, "label");
    const book = keyOf(paused, "book");
    expect(label).not.toBe(book);
    const question = (await pendingQuestion(h.graph, h.config)) as Loose;
    const pack = {
      step: { id: "pack", goal: "pack the parcel", instructions: PACK },
      inputs: {},
      produces: ["parcel"],
      successSignal: 'output.parcel != ""',
      attempt: 1,
    };
    expect(question).toEqual({
      kind: "external_step",
      reason: PACK,
      stepId: "pack",
      planVersion: 1,
      options: ["submit", "skip", "abort"],
      context: {
        goal: "test goal",
        ...pack,
        offered: [
          pack,
          {
            step: { id: "label", goal: "print the label", instructions: LABEL },
            inputs: {},
            produces: ["tracking"],
            attempt: 1,
            idempotencyKey: label,
            sideEffects: ["buys postage"],
          },
          {
            step: { id: "book", goal: "book the pickup", instructions: BOOK },
            inputs: {},
            produces: ["slot"],
            attempt: 1,
            idempotencyKey: book,
            sideEffects: ["books a courier"],
          },
        ],
      },
    });
    for (const id of ["pack", "label", "book"])
      expect(paused.steps[id]).toEqual({ status: "running", attempts: 1, startedAt: AT });
    expect(paused.steps.tell).toBeUndefined();
    expect(await h.journal.lookup("shop-1", label)).toEqual({
      key: label,
      stepId: "label",
      tool: `external:${LABEL}`,
      args: {},
      attempt: 1,
      at: AT,
    });
    expect((await h.journal.lookup("shop-1", book))?.stepId).toBe("book");
    expect(userView((await h.graph.getState(h.config)).values as never).at(-1)).toBe(
      "Waiting for the calling agent to do 3 steps: pack, label, book.",
    );
    h.checkpointer.db.close();
  });

  it("takes them out of order; a transient error is retried on its own ladder; a step made ready joins the offer", async () => {
    const h = setup();
    const paused = await h.run();
    const label = keyOf(paused, "label");
    const book = keyOf(paused, "book");

    // The last first: the others stay offered, under the same keys; the step it made ready joins them.
    let state = await submit(h, "book", { output: { slot: "09:00-11:00" } });
    expect(await offers(h)).toEqual(["pack@1", "label@1", "tell@1"]);
    expect(state.steps.book).toMatchObject({ status: "succeeded", attempts: 1 });
    expect(state.sideEffects.map((e: Loose) => e.idempotencyKey)).toEqual([book]);
    expect((await pendingQuestion(h.graph, h.config))?.context).toMatchObject({
      offered: [{}, { idempotencyKey: label }, { inputs: { slot: "09:00-11:00" } }],
    });

    // A transient error: the ladder retries that step alone, offered again as its attempt 2.
    state = await submit(h, "pack", { error: { message: "the tape ran out", class: "transient" } });
    expect(rules(state)).toEqual(["pack transient.retry"]);
    expect(state.decisions[0].evidence).toBe("transient.error");
    expect(await offers(h)).toEqual(["pack@2", "label@1", "tell@1"]);

    state = await submit(h, "tell", { output: {} });
    // Why the retried step was sent back stays with its offer while the others are answered.
    expect((await pendingQuestion(h.graph, h.config))?.context).toMatchObject({
      step: { id: "pack" },
      attempt: 2,
      previousError: "the tape ran out",
      offered: [{ step: { id: "pack" }, attempt: 2, previousError: "the tape ran out" }, { step: { id: "label" } }],
    });
    expect(await offers(h)).toEqual(["pack@2", "label@1"]);

    state = await submit(h, "label", { output: { tracking: "TRK-7" } });
    expect(await offers(h)).toEqual(["pack@2"]);
    expect(h.ship.calls).toEqual([]);

    state = await submit(h, "pack", { output: { parcel: "P-1" } });
    expect(await pendingQuestion(h.graph, h.config)).toBeUndefined();
    expect(state.status).toBe("completed");
    expect(rules(state)).toEqual(["pack transient.retry"]);
    expect(h.ship.calls).toEqual([{ parcel: "P-1", tracking: "TRK-7", slot: "09:00-11:00" }]);
    expect(Object.fromEntries(Object.entries(state.steps).map(([id, r]) => [id, (r as Loose).attempts]))).toEqual({
      pack: 2,
      label: 1,
      book: 1,
      tell: 1,
      ship: 1,
    });
    expect(state.steps.pack.nextDelayMs).toBeUndefined();
    // Each side effect committed once, under its own key, in state and in the journal.
    expect(state.sideEffects.map((e: Loose) => [e.stepId, e.idempotencyKey])).toEqual([
      ["book", book],
      ["label", label],
    ]);
    expect((await h.journal.lookup("shop-1", label))?.result).toEqual({ ok: true, output: { tracking: "TRK-7" } });
    expect((await h.journal.lookup("shop-1", book))?.result).toEqual({ ok: true, output: { slot: "09:00-11:00" } });
    h.checkpointer.db.close();
  });
});

async function refusal(h: ReturnType<typeof setup>, value: unknown): Promise<string> {
  const error: unknown = await resumeRun(h.graph, h.config, value as never).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isPlanManagerError(error) || error.code !== "invalid_resume") throw new Error(`not refused: ${String(error)}`);
  return error.message;
}

describe("several offered external steps: a submission for a step not offered", () => {
  it("is refused with the steps offered named, and nothing written", async () => {
    const h = setup();
    await h.run();
    const checkpoint = async () => (await h.graph.getState(h.config)).config.configurable?.checkpoint_id;
    const before = await checkpoint();
    expect(await refusal(h, { action: "submit", stepId: "tell", output: {} })).toBe(
      'thread "shop-1", external_step for step "pack": submit names step "tell", but the steps waiting for the ' +
        'calling agent are "pack", "label", "book"',
    );
    expect(await checkpoint()).toBe(before);
    await submit(h, "book", { output: { slot: "09:00-11:00" } });
    const after = await checkpoint();
    expect(await refusal(h, { action: "submit", stepId: "book", output: { slot: "12:00" } })).toBe(
      'thread "shop-1", external_step for step "pack": submit names step "book", but the steps waiting for the ' +
        'calling agent are "pack", "label", "tell"',
    );
    // The produced keys are those of the step named, not of the question's own step.
    expect(await refusal(h, { action: "submit", stepId: "label", output: { parcel: "P-1" } })).toBe(
      'thread "shop-1", external_step for step "pack": output is missing tracking, which step "label" must produce',
    );
    expect(await checkpoint()).toBe(after);
    expect(await offers(h)).toEqual(["pack@1", "label@1", "tell@1"]);
    h.checkpointer.db.close();
  });
});

describe("several offered external steps: the ladder of one while the others wait", () => {
  it("an escalation is asked alone; once answered, the others are offered again as they were", async () => {
    const h = setup();
    const paused = await h.run();
    const keys = { label: keyOf(paused, "label"), book: keyOf(paused, "book") };
    let state = await submit(h, "pack", { error: { message: "the part is discontinued" } });
    expect(rules(state)).toEqual(["pack unknown.escalate"]);
    expect((await pendingQuestion(h.graph, h.config))?.kind).toBe("escalation");
    expect([state.steps.label.status, state.steps.book.status]).toEqual(["running", "running"]);
    await resumeRun(h.graph, h.config, { action: "skip" });
    state = (await h.graph.getState(h.config)).values as Loose;
    expect(rules(state)).toEqual(["pack unknown.escalate", "pack human.skip"]);
    expect(await offers(h)).toEqual(["label@1", "book@1"]);
    const question = (await pendingQuestion(h.graph, h.config)) as Loose;
    expect(question.context.offered.map((o: Loose) => o.idempotencyKey)).toEqual([keys.label, keys.book]);
    // Offered again, not anew: no second intent, no second charge.
    expect((await h.journal.lookup("shop-1", keys.label))?.attempt).toBe(1);
    expect(state.steps.label).toEqual({ status: "running", attempts: 1, startedAt: AT });
    h.checkpointer.db.close();
  });

  it("a local replan of one offered step's branch leaves the others offered, under the same keys", async () => {
    const dir = mkdtempSync(join(tmpdir(), "offered-"));
    dirs.push(dir);
    const checkpointer = SqliteSaver.fromConnString(join(dir, "plans.sqlite"));
    const packer = scriptedTool("packer", [{ parcel: "P-M" }]);
    const ship = scriptedTool("ship", [{ shipped: true }]);
    const replacement: PlanDraft = {
      steps: [{ id: "machine-pack", goal: "pack by machine", tool: "packer", produces: ["parcel"] }],
    };
    const resting: PlanDraft = {
      assumptions: [{ id: "boxes", statement: "there are boxes to pack the parcel in" }],
      steps: draft.steps.map((step) => (step.id === "pack" ? { ...step, assumptions: ["boxes"] } : step)),
    };
    const planner = staticPlanner({ plan: resting, replan: () => replacement });
    const h = harness(planner, [packer, ship], { checkpointer, threadId: "shop-1" });
    const journal = saverAdapter(checkpointer).journal!;
    const paused = await h.run();
    const keys = { label: keyOf(paused, "label"), book: keyOf(paused, "book") };
    // An unmet success signal of a step resting on an assumption: its branch is replanned.
    await resumeRun(h.graph, h.config, { action: "submit", stepId: "pack", output: { parcel: "" } });
    const state = (await h.graph.getState(h.config)).values as Loose;
    expect(rules(state)).toEqual(["pack unmet.replan-local"]);
    expect(state.plan.version).toBe(2);
    expect(packer.calls).toEqual([{}]);
    const question = (await pendingQuestion(h.graph, h.config)) as Loose;
    expect(question.planVersion).toBe(2);
    expect(question.context.offered.map((o: Loose) => [o.step.id, o.attempt, o.idempotencyKey])).toEqual([
      ["label", 1, keys.label],
      ["book", 1, keys.book],
    ]);
    expect((await journal.lookup("shop-1", keys.book))?.attempt).toBe(1);
    checkpointer.db.close();
  });
});

describe("several offered external steps: a checkpoint round trip", () => {
  it("a new graph instance on the same SQLite file takes a submission for any offered step", async () => {
    const dir = mkdtempSync(join(tmpdir(), "offered-"));
    dirs.push(dir);
    const file = join(dir, "plans.sqlite");
    const build = () => {
      const checkpointer = SqliteSaver.fromConnString(file);
      const ship = scriptedTool("ship", [{ shipped: true }]);
      return { ...harness(draft, [ship], { checkpointer, threadId: "shop-1" }), checkpointer, ship };
    };
    const first = build();
    const paused = await first.run();
    const label = keyOf(paused, "label");
    first.checkpointer.db.close();

    const second = build();
    const question = (await pendingQuestion(second.graph, second.config)) as Loose;
    expect(question.context.offered.map((o: Loose) => o.step.id)).toEqual(["pack", "label", "book"]);
    await resumeRun(second.graph, second.config, { action: "submit", stepId: "label", output: { tracking: "T" } });
    const state = (await second.graph.getState(second.config)).values as Loose;
    expect(state.sideEffects.map((e: Loose) => e.idempotencyKey)).toEqual([label]);
    const again = (await pendingQuestion(second.graph, second.config)) as Loose;
    expect(again.context.offered.map((o: Loose) => `${o.step.id}@${o.attempt}`)).toEqual(["pack@1", "book@1"]);
    second.checkpointer.db.close();
  });
});

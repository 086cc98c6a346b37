/**
 * The undo runner (runtime/undo.ts) makes its calls through the driver's one keyed call
 * (runtime/run-attempt.ts): the journal inside it, and its one deadline, so an undo whose tool never
 * answers is cut and in doubt, as a step's call is, whatever the face's own call does.
 */
import { describe, expect, it } from "vitest";
import type { CompensationRecord } from "../../src/plan/schema/run.js";
import type { JournalEntry, RunJournal } from "../../src/contracts/effect-journal.js";
import { runUndo, type UndoPort } from "../../src/runtime/undo.js";

const at = "2026-01-01T00:00:00.000Z";
const record: CompensationRecord = {
  stepId: "hotel",
  idempotencyKey: "th:k1",
  compensationKey: "th:k1:compensate",
  status: "pending",
  tool: "release_hotel",
  args: { hotel: "H" },
  at,
  retry: { maxAttempts: 1 },
};

function journal() {
  const entries = new Map<string, JournalEntry>();
  const j: RunJournal = {
    intent: async (_t, i) => void entries.set(i.key, i),
    result: async (_t, key, result) => void entries.set(key, { ...entries.get(key)!, result }),
    lookup: async (_t, key) => entries.get(key),
  };
  return { j, entries };
}

function port(call: UndoPort["call"], j: RunJournal | undefined): UndoPort {
  return {
    journal: j,
    threadId: "th",
    honoursKeys: new Set(),
    policy: {
      defaultRetry: { maxAttempts: 1, backoff: "none", initialDelayMs: 0, maxDelayMs: 0 },
      defaultTimeoutMs: 20,
    },
    has: () => true,
    call,
    clock: { sleep: async () => undefined },
    now: () => at,
  };
}

describe("the undo runner's calls", () => {
  it("an undo whose tool never answers is cut by the driver's one deadline and left in doubt, intent journaled", async () => {
    const { j, entries } = journal();
    const keys: string[] = [];
    const ran = await runUndo(
      port(async (c) => (keys.push(c.key), new Promise(() => undefined)), j),
      record,
    );
    expect(ran).not.toBe("stopped");
    const done = ran === "stopped" ? undefined : ran.record;
    expect([done?.status, done?.inDoubt, done?.attempts, done?.error?.name]).toEqual([
      "failed",
      true,
      1,
      "EffectInDoubt",
    ]);
    expect(keys).toEqual(["th:k1:compensate"]);
    expect(entries.get("th:k1:compensate")).toMatchObject({ tool: "release_hotel", attempt: 1 });
    expect(entries.get("th:k1:compensate")?.result).toBeUndefined();
  });

  it("without a journal the undo is called as it is, under the same deadline", async () => {
    const ran = await runUndo(
      port(async () => new Promise(() => undefined), undefined),
      record,
    );
    const done = ran === "stopped" ? undefined : ran.record;
    expect([done?.status, done?.error?.name]).toEqual(["failed", "StepTimeout"]);
  });

  it("a person's approval of the undo in doubt lets one call go out under its key, journaled above the base", async () => {
    const { j, entries } = journal();
    await j.intent("th", { key: "th:k1:compensate", stepId: "hotel", tool: "release_hotel", args: {}, attempt: 1, at });
    const approved = { ...record, approval: { key: "th:k1:compensate", attempt: 1 }, attempts: 0 };
    const attempts: number[] = [];
    const ran = await runUndo(
      port(async (c) => (attempts.push(c.attempt), { ok: true, output: "released" }), j),
      approved,
    );
    const done = ran === "stopped" ? undefined : ran.record;
    expect([done?.status, done?.attempts, "approval" in (done ?? {})]).toEqual(["done", 1, false]);
    expect(attempts).toEqual([1]);
    expect(entries.get("th:k1:compensate")).toMatchObject({ attempt: 2, result: { ok: true, output: "released" } });
  });
});

/** An undo's round as data (policy/compensation/undo-round.ts): the moves, the replay, the end, the question's options. */
import { describe, expect, it } from "vitest";
import type { CompensationRecord } from "../../src/plan/schema/run.js";
import {
  nextPendingUndo,
  nextUndoMove,
  replayedCalls,
  undoEnded,
  undoOptions,
  undoRetried,
  undoRetry,
  undoRoundKey,
} from "../../src/policy/compensation/undo-round.js";

const record = (extra: Partial<CompensationRecord> = {}): CompensationRecord => ({
  stepId: "hotel",
  idempotencyKey: "k1",
  compensationKey: "k1:compensate",
  status: "pending",
  tool: "release_hotel",
  args: {},
  at: "2026-01-01T00:00:00.000Z",
  ...extra,
});
const policy = { maxAttempts: 3, backoff: "exponential" as const, initialDelayMs: 200, maxDelayMs: 10_000 };

describe("an undo's round", () => {
  it("calls, backs off after each failure per the retry policy, and gives up after maxAttempts", () => {
    const moves = [];
    const p = { policy, calls: 0, slept: 0, error: { name: "HttpError", message: "503", retryAfterMs: 1_000 } };
    for (let move = nextUndoMove(p); move.kind !== "give-up"; move = nextUndoMove(p)) {
      moves.push(move);
      if (move.kind === "call") p.calls++;
      else p.slept++;
    }
    expect(moves).toEqual([
      { kind: "call" },
      { kind: "sleep", ms: 1_000 },
      { kind: "call" },
      { kind: "sleep", ms: 1_000 },
      { kind: "call" },
    ]);
  });

  it("runs under its step's retry fields over the run's default", () => {
    expect(undoRetry(record({ retry: { maxAttempts: 2 } }), { defaultRetry: policy })).toEqual({
      ...policy,
      maxAttempts: 2,
    });
  });

  it("takes the first pending record, latest commit first as written", () => {
    expect(nextPendingUndo([record({ status: "done" }), record({ status: "failed" }), record()])).toBe(2);
    expect(nextPendingUndo([record({ status: "waived" })])).toBe(-1);
  });

  it("counts the calls the journal shows failed in this round, above its base", () => {
    const failed = { result: { ok: false } };
    expect(replayedCalls(record(), { attempt: 2, ...failed })).toBe(2);
    expect(replayedCalls(record({ approval: { attempt: 3 }, attempts: 1 }), { attempt: 5, ...failed })).toBe(1);
    // A record written before the approval was one record reads the same.
    expect(replayedCalls(record({ approvedAttempt: 3, attempts: 1 }), { attempt: 5, ...failed })).toBe(1);
    expect(replayedCalls(record(), { attempt: 2, result: { ok: true } })).toBe(0);
    expect(replayedCalls(record(), { attempt: 2 })).toBe(0);
    expect(replayedCalls(record(), undefined)).toBe(0);
  });

  it("a person's retry numbers the new round above the last call, with the key when it was in doubt", () => {
    expect(undoRetried(record({ attempts: 2 }))).toEqual({ attempt: 2 });
    expect(undoRetried(record({ approval: { attempt: 3 }, attempts: 2, inDoubt: true }))).toEqual({
      key: "k1:compensate",
      attempt: 5,
    });
    expect(undoRetried(record({ approvedAttempt: 3, attempts: 1 }))).toEqual({ attempt: 4 });
  });

  it("names each round by the journal attempt it starts above", () => {
    expect([undoRoundKey(record()), undoRoundKey(record({ approval: { attempt: 3 }, attempts: 0 }))]).toEqual([
      "k1:compensate#0",
      "k1:compensate#3",
    ]);
  });

  it("ends done, failed, or failed in doubt; a failed record keeps its numbering base, a done one drops it", () => {
    const at = "2026-01-02T00:00:00.000Z";
    const approved = record({ approval: { attempt: 3, key: "k1:compensate" }, inDoubt: true });
    const error = { name: "PermanentError", message: "down" };
    expect(undoEnded(approved, { kind: "done" }, 1, at)).toEqual({ ...record(), status: "done", attempts: 1, at });
    expect(undoEnded(approved, { kind: "failed", error }, 2, at)).toEqual({
      ...record(),
      approval: { attempt: 3 },
      status: "failed",
      attempts: 2,
      error,
      at,
    });
    expect(undoEnded(record(), { kind: "in-doubt", error }, 1, at)).toMatchObject({ status: "failed", inDoubt: true });
    expect(undoEnded(record(), { kind: "missing-tool" }, 0, at).error).toEqual({
      name: "PermanentError",
      message: 'tool "release_hotel" is not in the registry',
    });
  });

  it("offers happened only for an undo in doubt, and abort only mid-run", () => {
    expect(undoOptions(record({ inDoubt: true }), false)).toEqual(["happened", "retry", "skip", "abort"]);
    expect(undoOptions(record(), false)).toEqual(["retry", "skip", "abort"]);
    expect(undoOptions(record(), true)).toEqual(["retry", "skip"]);
  });
});

/**
 * The key an operation commits under once an effect of it was undone
 * (docs/decisions/0039-compensation.md): past every undone key, the same on every branch.
 */
import { describe, expect, it } from "vitest";
import { liveKey, undoneKeys } from "../../src/policy/attempt/redo-key.js";

const record = (idempotencyKey: string, status: "pending" | "done" | "failed" | "waived") => ({
  stepId: "s",
  idempotencyKey,
  compensationKey: `${idempotencyKey}:compensate`,
  status,
  at: "2026-01-01T00:00:00.000Z",
});

describe("the live key of an operation", () => {
  it("is the operation's key while nothing under it was undone, then counts the undos", () => {
    expect(liveKey("t:k", undoneKeys(undefined))).toBe("t:k");
    expect(liveKey("t:k", undoneKeys([record("t:k", "done")]))).toBe("t:k:redo-1");
    expect(liveKey("t:k", undoneKeys([record("t:k:redo-1", "done"), record("t:k", "done")]))).toBe("t:k:redo-2");
  });

  it("counts only undos that were done: a waived, pending or failed one leaves the effect standing", () => {
    for (const status of ["pending", "failed", "waived"] as const)
      expect(liveKey("t:k", undoneKeys([record("t:k", status)]))).toBe("t:k");
  });

  it("treats keys as data (__proto__ included)", () => {
    expect(liveKey("__proto__", undoneKeys([record("__proto__", "done")]))).toBe("__proto__:redo-1");
  });
});

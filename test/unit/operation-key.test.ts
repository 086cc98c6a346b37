/**
 * An operation's key is digested once per arguments object (plan/operation.ts): every policy pass of
 * one attempt asks for the key of the same snapshot's arguments (docs/decisions/0059-short-path.md).
 */
import { describe, expect, it } from "vitest";
import { operationKey } from "../../src/plan/operation.js";

/** Arguments that count how often their keys are listed (the canonical JSON lists them once per digest). */
function counted(args: Record<string, unknown>) {
  const seen = { listed: 0 };
  const proxy = new Proxy(args, {
    ownKeys: (target) => {
      seen.listed += 1;
      return Reflect.ownKeys(target);
    },
  });
  return { args: proxy, seen };
}

describe("operationKey", () => {
  it("three passes over one arguments object digest it once, and give the same key each time", () => {
    const { args, seen } = counted({ flight: "AA100", seats: 2 });
    const keys = [1, 2, 3].map(() => operationKey("trip-1", "hold_seat", args));
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toBe(operationKey("trip-1", "hold_seat", { seats: 2, flight: "AA100" }));
    expect(seen.listed).toBe(1);
  });

  it("the same arguments object under another thread, tool or label keys each apart", () => {
    const { args, seen } = counted({ flight: "AA100" });
    const keys = [
      operationKey("trip-1", "hold_seat", args),
      operationKey("trip-2", "hold_seat", args),
      operationKey("trip-1", "book_seat", args),
      operationKey("trip-1", "hold_seat", args, "second"),
    ];
    expect(keys[1]).toBe(keys[0]!.replace("trip-1:", "trip-2:"));
    expect(new Set(keys.map((k) => k.split(":")[1])).size).toBe(3);
    expect(keys[3]).toBe(operationKey("trip-1", "hold_seat", { flight: "AA100" }, "second"));
    expect(seen.listed).toBe(3);
  });
});

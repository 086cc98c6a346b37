/** Error evidence made storable: any value becomes JSON within the limits, and reading it never throws. */
import { describe, expect, it } from "vitest";
import { capText, toJsonSafe } from "../../src/plan/json-safe.js";
import { errorInfo } from "../../src/policy/ladder/deviation.js";
import { LIMITS } from "../../src/plan/schema/primitives.js";

describe("toJsonSafe", () => {
  it("turns what JSON cannot hold into strings, and keeps JSON as it is", () => {
    const evidence = {
      n: 10n,
      nan: Number.NaN,
      inf: Number.NEGATIVE_INFINITY,
      at: new Date("2026-01-01T00:00:00Z"),
      bad: new Date(Number.NaN),
      cause: new TypeError("boom"),
      fn: function refund() {},
      sym: Symbol("s"),
      gone: undefined,
      list: [1, undefined, 2n, "x", null, true],
    };
    expect(toJsonSafe(evidence)).toEqual({
      n: "10",
      nan: "NaN",
      inf: "-Infinity",
      at: "2026-01-01T00:00:00.000Z",
      bad: "Invalid Date",
      cause: { name: "TypeError", message: "boom" },
      fn: "[function refund]",
      sym: "Symbol(s)",
      list: [1, null, "2", "x", null, true],
    });
    expect(toJsonSafe(42n)).toBe("42");
  });

  it("names cycles, stops at the depth limit, and keeps a shared value that is not a cycle", () => {
    const shared = { k: 1 };
    const a: Record<string, unknown> = { shared, again: shared };
    a.self = a;
    expect(toJsonSafe(a)).toEqual({ shared: { k: 1 }, again: { k: 1 }, self: "[Circular]" });
    let deep: unknown = "bottom";
    for (let i = 0; i < 100; i++) deep = { d: deep };
    const text = JSON.stringify(toJsonSafe(deep));
    expect(text.split('{"d":').length - 1).toBe(LIMITS.maxJsonDepth);
    expect(text).toContain('"[Too deep]"');
  });

  it("reads a getter that throws, a Proxy that throws and a __proto__ key as data", () => {
    const trap = new Proxy(
      {},
      {
        ownKeys: () => {
          throw new Error("no");
        },
      },
    );
    const getter = Object.defineProperty({ ok: 1 }, "bad", {
      enumerable: true,
      get: () => {
        throw new Error("no");
      },
    });
    const proto = JSON.parse('{"__proto__": {"polluted": true}}') as object;
    expect(toJsonSafe({ trap, getter })).toEqual({ trap: "[Unreadable]", getter: { ok: 1, bad: "[Unreadable]" } });
    const safe = toJsonSafe(proto) as Record<string, unknown>;
    expect(Object.getPrototypeOf(safe)).toBe(Object.prototype);
    expect(JSON.stringify(safe)).toBe('{"__proto__":{"polluted":true}}');
  });

  it("cuts a value over the JSON limit to a preview, without walking all of it", () => {
    const big = new Array(10_000_000).fill(12345);
    const safe = toJsonSafe(big) as string;
    expect(safe.startsWith("[12345,12345,")).toBe(true);
    expect(safe.endsWith("… [evidence over 64,000 bytes of JSON, cut]")).toBe(true);
    expect(safe.length).toBeLessThanOrEqual(LIMITS.maxErrorMessageLength + 50);
  });

  it("cuts text without splitting a surrogate pair", () => {
    expect(capText("ab", 2)).toBe("ab");
    expect(capText("abc", 2)).toBe("ab… [3 characters, cut]");
    expect(capText("a😀b", 2)).toBe("a… [4 characters, cut]");
  });
});

describe("errorInfo", () => {
  it("records a thrown object's retryAfterMs only when it names a usable wait", () => {
    const read = (retryAfterMs: unknown) =>
      errorInfo({ name: "TransientError", message: "m", retryAfterMs }).retryAfterMs;
    expect([Number.NaN, Infinity, -1, "30", null].map(read)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    expect([0, 1_500, 1e12].map(read)).toEqual([0, 1_500, 86_400_000]);
  });

  it("cuts a long message, name and code, and a thrown string", () => {
    const long = "y".repeat(5_000);
    const info = errorInfo({ name: long, message: long, code: long });
    expect(info.message).toBe(`${"y".repeat(4_000)}… [5,000 characters, cut]`);
    expect(info.name).toBe(`${"y".repeat(200)}… [5,000 characters, cut]`);
    expect(info.code).toBe(`${"y".repeat(200)}… [5,000 characters, cut]`);
    expect(errorInfo(long).message).toBe(`${"y".repeat(4_000)}… [5,000 characters, cut]`);
  });
});

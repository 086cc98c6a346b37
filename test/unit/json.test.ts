/**
 * Tool outputs are normalised to JSON at the boundary (issue [hardening], item 6): a resumed run
 * must see exactly what an uninterrupted one saw, so only JSON values are stored.
 */
import { describe, expect, it } from "vitest";
import { toJsonValue } from "../../src/plan/json.js";
import { jsonDepth } from "../../src/plan/validate.js";

const JSON_ONLY = "tools must return JSON values (plain objects, arrays, strings, numbers, booleans, null)";
const utf8 = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? "", "utf8");
const TOO_DEEP = { ok: false, code: "too_deep", path: "output", message: "output is nested deeper than 32 levels" };

/** `levels` objects nested inside one another: `{ a: { a: … { a: 1 } } }`, the leaf at depth `levels`. */
function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { a: value };
  return value;
}

describe("toJsonValue: JSON values pass", () => {
  it("returns a JSON value unchanged, the same object, with its UTF-8 JSON size", () => {
    const output = { price: 120.5, ok: true, note: null, tags: ["a", "b"], nested: { n: -0, e: 1e21 } };
    const result = toJsonValue(output);
    expect(result).toEqual({ ok: true, value: output, bytes: utf8(output) });
    expect(result.ok && result.value).toBe(output);
    for (const scalar of ["text", 0, 3.25, false, null]) {
      expect(toJsonValue(scalar)).toEqual({ ok: true, value: scalar, bytes: utf8(scalar) });
    }
  });

  it("counts bytes as UTF-8 of the JSON text, escapes and all", () => {
    const strings = [
      'quote " and \\ backslash',
      "tab\tnew\nline\u0001\u001f",
      "é ü ß",
      "中文",
      "emoji 🎉",
      "lone \ud800 surrogate",
      "\u2028\u2029",
      "\u007f",
    ];
    for (const s of strings) expect(toJsonValue(s)).toEqual({ ok: true, value: s, bytes: utf8(s) });
    const keyed = { 'ké"y': [1, "ü"], "": {}, "a\nb": [] };
    expect(toJsonValue(keyed)).toEqual({ ok: true, value: keyed, bytes: utf8(keyed) });
    expect(toJsonValue({ price: 120 })).toEqual({ ok: true, value: { price: 120 }, bytes: 13 });
  });

  it("accepts objects with a null prototype", () => {
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 });
    expect(toJsonValue(bare)).toEqual({ ok: true, value: bare, bytes: 7 });
  });

  it("top-level undefined (a tool that returns nothing) is no output: 0 bytes", () => {
    expect(toJsonValue(undefined)).toEqual({ ok: true, value: undefined, bytes: 0 });
  });
});

describe("toJsonValue: what JSON would change is changed here, once", () => {
  it("a Date becomes its ISO string, at the top and nested anywhere", () => {
    const when = new Date("2026-03-01T10:00:00.000Z");
    expect(toJsonValue(when)).toEqual({ ok: true, value: "2026-03-01T10:00:00.000Z", bytes: 26 });
    const output = { flight: { departs: when, legs: [{ at: when }] }, seat: { row: 12 } };
    const result = toJsonValue(output);
    const iso = "2026-03-01T10:00:00.000Z";
    const expected = { flight: { departs: iso, legs: [{ at: iso }] }, seat: { row: 12 } };
    expect(result).toEqual({ ok: true, value: expected, bytes: utf8(expected) });
    // Copy on write: the tool's object is left alone, and untouched branches are shared.
    expect(output.flight.departs).toBe(when);
    expect(result.ok && (result.value as typeof output).seat).toBe(output.seat);
  });

  it("drops undefined properties and turns undefined array items and holes into null, as JSON does", () => {
    const output = { a: 1, gone: undefined, list: [1, undefined, 3], inner: { also: undefined } };
    // A sparse array: index 1 is a hole.
    const sparse: unknown[] = [1];
    sparse[2] = 3;
    const expected = { a: 1, list: [1, null, 3], inner: {} };
    expect(toJsonValue(output)).toEqual({ ok: true, value: expected, bytes: utf8(expected) });
    expect(toJsonValue(sparse)).toEqual({ ok: true, value: [1, null, 3], bytes: 10 });
    expect(Object.keys((toJsonValue(output) as { value: { inner: object } }).value.inner)).toEqual([]);
  });

  it("keeps an own __proto__ key as data when it copies, never as a prototype", () => {
    const output = JSON.parse('{"__proto__": {"admin": true}, "when": null}') as Record<string, unknown>;
    output.when = new Date(0);
    const result = toJsonValue(output);
    expect(result.ok).toBe(true);
    const value = (result as { value: Record<string, unknown> }).value;
    expect(Object.getPrototypeOf(value)).toBe(Object.prototype);
    expect(Object.keys(value)).toEqual(["__proto__", "when"]);
    expect(JSON.stringify(value)).toBe('{"__proto__":{"admin":true},"when":"1970-01-01T00:00:00.000Z"}');
  });

  it("the same value shared in two places (not a cycle) is fine, and counted twice as JSON does", () => {
    const shared = { id: 7 };
    const output = { a: shared, b: [shared, shared] };
    expect(toJsonValue(output)).toEqual({ ok: true, value: output, bytes: utf8(output) });
  });

  it("a value shared 2^24 times is measured without walking it 2^24 times", () => {
    let value: unknown = 1;
    for (let i = 0; i < 24; i++) value = [value, value];
    const started = performance.now();
    // b(0) = 1 byte; b(k+1) = 2·b(k) + 3 ("[", ",", "]") → b(24) = 2^26 − 3.
    expect(toJsonValue(value)).toEqual({ ok: true, value, bytes: 2 ** 26 - 3 });
    // Walking every path takes seconds; measuring each shared array once takes well under a millisecond.
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe("toJsonValue: anything else is rejected, naming the type and the path", () => {
  class Quote {
    price = 1;
  }
  it.each([
    ["a function", { run: () => 1 }, "output.run is a function"],
    ["a symbol", { s: Symbol("x") }, "output.s is a symbol"],
    ["a BigInt", { amount: 10n }, "output.amount is a BigInt"],
    ["NaN", { ratio: Number.NaN }, "output.ratio is NaN"],
    ["Infinity", [Number.POSITIVE_INFINITY], "output[0] is Infinity"],
    ["-Infinity", { low: Number.NEGATIVE_INFINITY }, "output.low is -Infinity"],
    ["a Map", { items: [1, 2, new Map()] }, "output.items[2] is a Map"],
    ["a Set", new Set([1]), "output is a Set"],
    ["a user class", { quote: new Quote() }, "output.quote is a Quote"],
    ["a Buffer", { data: Buffer.from("hi") }, "output.data is a Buffer"],
    ["a typed array", { data: new Int8Array(2) }, "output.data is an Int8Array"],
    ["a Promise", { later: Promise.resolve(1) }, "output.later is a Promise"],
    ["an Error", { failure: new Error("x") }, "output.failure is an Error"],
    ["a boxed string", { s: new String("x") }, "output.s is a String"],
    ["an invalid Date", { when: new Date("not a date") }, "output.when is an invalid Date"],
    [
      "an object with a prototype but no constructor",
      { odd: Object.create({ inherited: 1 }) as object },
      "output.odd is an object with a custom prototype",
    ],
    ["keys that are not identifiers", { "a b": { "0": [{ "x-y": 1n }] } }, 'output["a b"]["0"][0]["x-y"] is a BigInt'],
    ["a function at the top", () => 1, "output is a function"],
  ])("%s", (_label, value, where) => {
    const path = where.split(" is ")[0];
    expect(toJsonValue(value)).toEqual({ ok: false, code: "not_json", path, message: `${where}; ${JSON_ONLY}` });
  });

  it("the first offence in JSON order is the one reported", () => {
    const message = `output.a[1].b is a Map; ${JSON_ONLY}`;
    expect(toJsonValue({ a: [1, { b: new Map() }], c: 1n })).toMatchObject({ message });
  });

  it("names a cycle and where it closes", () => {
    const self: Record<string, unknown> = { name: "loop" };
    self.self = self;
    expect(toJsonValue(self)).toEqual({
      ok: false,
      code: "circular",
      path: "output.self",
      message: "output.self is a circular reference",
    });
    const list: unknown[] = [1];
    list.push({ back: list });
    expect(toJsonValue({ list })).toEqual({
      ok: false,
      code: "circular",
      path: "output.list[1].back",
      message: "output.list[1].back is a circular reference",
    });
  });

  it("says where the value could not be read when a getter throws", () => {
    const output = {
      get secret(): string {
        throw new Error("denied");
      },
    };
    expect(toJsonValue(output)).toEqual({
      ok: false,
      code: "unreadable",
      path: "output.secret",
      message: "output.secret could not be read (denied)",
    });
  });

  it("names the value with the path it is given", () => {
    expect(toJsonValue({ when: new Map() }, { path: "facts.receipt" })).toEqual({
      ok: false,
      code: "not_json",
      path: "facts.receipt.when",
      message: `facts.receipt.when is a Map; ${JSON_ONLY}`,
    });
  });
});

describe("toJsonValue: depth", () => {
  it("accepts 32 levels and rejects 33, like jsonDepth and the plan validator", () => {
    expect(jsonDepth(nested(32))).toBe(32);
    expect(toJsonValue(nested(32))).toMatchObject({ ok: true });
    expect(jsonDepth(nested(33))).toBe(33);
    expect(toJsonValue(nested(33))).toEqual(TOO_DEEP);
  });

  it("a hostile depth of 200,000 levels fails cleanly instead of overflowing the stack", () => {
    expect(toJsonValue(nested(200_000))).toEqual(TOO_DEEP);
  });

  it("a shared value counts at every depth it appears at", () => {
    const deep = nested(20);
    expect(toJsonValue({ shallow: deep })).toMatchObject({ ok: true });
    const wrap = (levels: number) => {
      let wrapper: unknown = deep;
      for (let i = 0; i < levels; i++) wrapper = [wrapper];
      return wrapper;
    };
    // Seen first at depth 1, then again 11 or 12 levels further down: its leaf at 32, then at 33.
    expect(toJsonValue({ first: deep, second: wrap(11) })).toMatchObject({ ok: true });
    expect(toJsonValue({ first: deep, second: wrap(12) })).toEqual(TOO_DEEP);
  });

  it("takes a maxDepth", () => {
    const message = "output is nested deeper than 1 levels";
    expect(toJsonValue({ a: { b: 1 } }, { maxDepth: 1 })).toEqual({ ...TOO_DEEP, message });
  });
});

describe("toJsonValue is pure", () => {
  it("gives the same answer twice and leaves its input as it was", () => {
    const when = new Date("2026-01-01T00:00:00.000Z");
    const output = { when, list: [undefined] };
    const first = toJsonValue(output);
    expect(toJsonValue(output)).toEqual(first);
    expect(output).toEqual({ when, list: [undefined] });
  });
});

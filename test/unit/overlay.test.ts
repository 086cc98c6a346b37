/**
 * A record read as a base with changes on top (plan/overlay.ts), and the reader that scans of
 * every open step use instead of the view's traps.
 */
import { describe, expect, it } from "vitest";
import { overlay, overlayParts, ownReader } from "../../src/plan/overlay.js";

describe("overlay", () => {
  it("reads the changes over the base, writes into the changes, and enumerates both once", () => {
    const base = { a: 1, b: 2 };
    const view = overlay<number>(base, { b: 3 });
    view.c = 4;
    expect([view.a, view.b, view.c, "a" in view, Object.hasOwn(view, "b")]).toEqual([1, 3, 4, true, true]);
    expect(Object.keys(view)).toEqual(["a", "b", "c"]);
    expect({ ...view }).toEqual({ a: 1, b: 3, c: 4 });
    expect(base).toEqual({ a: 1, b: 2 });
    expect(overlayParts(view)).toEqual({ base: { a: 1, b: 2 }, changes: { b: 3, c: 4 } });
  });

  it("keys named like the view's own parts read the records, not the parts", () => {
    const view = overlay<unknown>({ base: "from base" }, { changes: "from changes" });
    expect([view.base, view.changes, "parts" in view]).toEqual(["from base", "from changes", false]);
    expect(JSON.stringify(view)).toBe('{"base":"from base","changes":"from changes"}');
  });

  it("refuses to delete, as a view of records it does not own", () => {
    const view = overlay<number>({ a: 1 }, {});
    expect(Reflect.deleteProperty(view, "a")).toBe(false);
    expect(view.a).toBe(1);
  });
});

describe("ownReader", () => {
  it("on a view: the changes over the base, without the prototype's keys", () => {
    const view = overlay<number>({ a: 1, b: 2 }, { b: 3 });
    view.c = 5;
    const read = ownReader(view);
    expect(["a", "b", "c", "d", "constructor", "toString", "__proto__"].map(read)).toEqual([
      1,
      3,
      5,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("on a plain record: its own entries only", () => {
    const read = ownReader<number>({ a: 1 });
    expect(["a", "b", "hasOwnProperty"].map(read)).toEqual([1, undefined, undefined]);
  });

  it("reads a change made after the reader was taken", () => {
    const view = overlay<number>({ a: 1 }, {});
    const read = ownReader(view);
    view.a = 2;
    expect(read("a")).toBe(2);
  });
});

import { describe, expect, it } from "vitest";
import { evaluateExpression as evaluate } from "../../src/policy/index.js";

describe("CEL expressions over JSON facts", () => {
  it("mixes JSON numbers with int literals without the author caring", () => {
    expect(evaluate("facts.qty + 1 > 2", "precondition", { qty: 2 })).toEqual({ ok: true, value: true });
    expect(evaluate("facts.qty + 1", "precondition", { qty: 2 })).toEqual({ ok: true, value: 3 });
    expect(evaluate("output.fee < 1", "successSignal", {}, { fee: 0.5 })).toEqual({ ok: true, value: true });
    expect(evaluate("facts.n / 2", "check", { n: 5 })).toEqual({ ok: true, value: 2.5 });
    expect(evaluate("facts.qty * 1.5 - 1", "check", { qty: 2 })).toEqual({ ok: true, value: 2 });
    expect(evaluate("size(facts.items) * 2", "check", { items: [1, 2, 3] })).toEqual({ ok: true, value: 6 });
  });
  it("returns numbers to state as plain JS numbers", () => {
    const r = evaluate("[1, 2, facts.x]", "check", { x: 3 });
    expect(r).toEqual({ ok: true, value: [1, 2, 3] });
    expect(typeof (r as { value: unknown[] }).value[0]).toBe("number");
  });
  it("reports a missing fact by name instead of throwing", () => {
    expect(evaluate("facts.a > 1 && facts.b > 1", "when", { a: 2 })).toEqual({
      ok: false,
      missing: ["b"],
      message: "missing fact: b",
    });
    expect(evaluate("has(facts.b)", "when", {})).toEqual({ ok: true, value: false });
  });
  it("sees only the facts it names", () => {
    expect(evaluate('facts["a"] == 1', "check", { a: 1, secret: "x" })).toEqual({ ok: true, value: true });
  });
});

import { Environment } from "@marcbachmann/cel-js";
import * as fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fromCel } from "../../src/expr/cel.js";
import { compileExpression, evaluateExpression as evaluate } from "../../src/policy/index.js";

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
  it("finds the facts read under a unary operator", () => {
    expect(evaluate("!facts.flag", "when", { flag: false })).toEqual({ ok: true, value: true });
    expect(evaluate("-facts.n < 0", "when", { n: 2 })).toEqual({ ok: true, value: true });
    expect(evaluate("!facts.flag", "when", {})).toEqual({
      ok: false,
      missing: ["flag"],
      message: "missing fact: flag",
    });
  });
  it("sees only the facts it names", () => {
    expect(evaluate('facts["a"] == 1', "check", { a: 1, secret: "x" })).toEqual({ ok: true, value: true });
  });
});

describe("CEL over plain JSON that has keys JavaScript treats specially", () => {
  it("reads a `constructor` key like any other key", () => {
    const race = { constructor: "Ferrari", driver: "Leclerc" };
    expect(evaluate('output.constructor == "Ferrari"', "successSignal", {}, race)).toEqual({ ok: true, value: true });
    expect(evaluate('facts.race.constructor + " / " + facts.race.driver', "check", { race })).toEqual({
      ok: true,
      value: "Ferrari / Leclerc",
    });
    expect(evaluate('facts.results.all(r, r.constructor != "")', "check", { results: [race, race] })).toEqual({
      ok: true,
      value: true,
    });
    expect(evaluate("output", "successSignal", {}, race)).toEqual({ ok: true, value: race });
  });
  it("reads a `__proto__` key of parsed JSON as data, not as a prototype", () => {
    const parsed = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as Record<string, unknown>;
    expect(evaluate('output["__proto__"].polluted && output.ok == 1', "successSignal", {}, parsed)).toEqual({
      ok: true,
      value: true,
    });
    expect(evaluate("has(output.polluted)", "successSignal", {}, parsed)).toEqual({ ok: true, value: false });
  });
});

describe("the cost of an expression is bounded", () => {
  it("matches with RE2 syntax (inline flags, partial match)", () => {
    expect(evaluate('facts.s.matches("(?i)^abc$")', "check", { s: "ABC" })).toEqual({ ok: true, value: true });
    expect(evaluate('facts.s.matches("b")', "check", { s: "abc" })).toEqual({ ok: true, value: true });
    expect(evaluate("facts.s.matches(facts.p)", "check", { s: "a1", p: "^[a-z][0-9]$" })).toEqual({
      ok: true,
      value: true,
    });
  });
  it("refuses at compile time a regex RE2 cannot run in linear time (backreference, lookaround)", () => {
    expect(compileExpression('facts.s.matches("(a)\\\\1")', "check")).toEqual({
      ok: false,
      code: "invalid",
      message:
        'matches() pattern "(a)\\\\1" is not RE2 syntax (no backreferences or lookaround): invalid escape sequence: `\\1`',
    });
    expect(compileExpression('facts.s.matches("a(?=b)")', "check")).toMatchObject({ ok: false, code: "invalid" });
  });
  it("reports a pattern from facts that RE2 refuses as an evaluation error", () => {
    expect(evaluate("facts.s.matches(facts.p)", "check", { s: "aa", p: "(a)\\1" })).toEqual({
      ok: false,
      message:
        'matches() pattern "(a)\\\\1" is not RE2 syntax (no backreferences or lookaround): invalid escape sequence: `\\1`',
    });
  });
  it("refuses comprehensions nested more than three deep at compile time", () => {
    const nested = (depth: number) => {
      let body = `v${depth - 1} > 0`;
      for (let i = depth - 1; i >= 0; i--) body = `facts.xs.all(v${i}, ${body})`;
      return body;
    };
    expect(compileExpression(nested(3), "check").ok).toBe(true);
    expect(compileExpression(nested(4), "check")).toEqual({
      ok: false,
      code: "too_costly",
      message: "comprehensions (all, exists, exists_one, map, filter) are nested 4 deep; at most 3 are allowed",
    });
  });
  it("stops an evaluation past its step budget with a clear error, whatever the quantifier swallows", () => {
    const xs = Array.from({ length: 120 }, (_, i) => i);
    // 120^3 = 1.7 million iterations: over the budget, stopped once the budget is spent.
    expect(evaluate("facts.xs.all(a, facts.xs.all(b, facts.xs.all(c, a + b + c >= 0)))", "check", { xs })).toEqual({
      ok: false,
      message:
        "expression exceeded its evaluation budget of 250000 steps (comprehensions or matches() over too much data)",
    });
    // exists() absorbs the errors of the elements before the last, which yields true by itself.
    expect(
      evaluate("facts.xs.exists(a, a == 119 || facts.xs.exists(b, facts.xs.exists(c, a + b + c < 0)))", "check", {
        xs,
      }),
    ).toEqual({
      ok: false,
      message:
        "expression exceeded its evaluation budget of 250000 steps (comprehensions or matches() over too much data)",
    });
    // The same shape over small lists is well inside the budget.
    expect(
      evaluate("facts.xs.all(a, facts.xs.all(b, facts.xs.all(c, a + b + c >= 0)))", "check", { xs: xs.slice(0, 20) }),
    ).toEqual({
      ok: true,
      value: true,
    });
  });
  it("charges matches() by text length times the pattern's program size, before it runs", () => {
    const s = "a".repeat(64_000);
    // 3,002 instructions over 64,000 characters: about 3 million steps, refused without matching.
    expect(evaluate('facts.s.matches("(?:a?){1000}a{1000}")', "check", { s })).toEqual({
      ok: false,
      message:
        "expression exceeded its evaluation budget of 250000 steps (comprehensions or matches() over too much data)",
    });
    expect(evaluate('facts.s.matches("^(a+)+$")', "check", { s })).toEqual({ ok: true, value: true });
    // Distinct patterns from data pay for their compilation too.
    const ps = Array.from({ length: 200 }, (_, i) => `(?:a?){1000}a{${800 + i}}`);
    expect(evaluate('facts.ps.exists(p, "b".matches(p))', "check", { ps })).toEqual({
      ok: false,
      message:
        "expression exceeded its evaluation budget of 250000 steps (comprehensions or matches() over too much data)",
    });
  });
  it("charges values that map() and cel.bind() build, so a shared structure cannot grow unseen", () => {
    const budget = {
      ok: false,
      message:
        "expression exceeded its evaluation budget of 250000 steps (comprehensions or matches() over too much data)",
    };
    // Each map doubles the tree under one element: 2^22 leaves for == to compare.
    const doubled = "[1]" + ".map(x, [x, x])".repeat(22);
    expect(evaluate(`${doubled} == ${doubled}`, "check", {})).toEqual(budget);
    // Two equal trees of binds over distinct copies of a list: 2^10 × 2,000 comparisons.
    const tree = (depth: number) => {
      let body = `v${depth}`;
      for (let i = depth; i >= 1; i--) body = `cel.bind(v${i}, [v${i - 1}, v${i - 1}], ${body})`;
      return `cel.bind(v0, facts.xs + [], ${body})`;
    };
    const xs = Array.from({ length: 2_000 }, (_, i) => i);
    expect(evaluate(`${tree(10)} == ${tree(10)}`, "check", { xs })).toEqual(budget);
    expect(evaluate(`${tree(3)} == ${tree(3)}`, "check", { xs })).toEqual({ ok: true, value: true });
    // 8,000 references to one 60,000-character string, joined: 480 million characters.
    const s = "x".repeat(60_000);
    expect(
      evaluate('facts.xs.map(x, facts.s).join().contains("y")', "check", { xs: [...xs, ...xs, ...xs, ...xs], s }),
    ).toEqual(budget);
  });
  it("charges the data an operator or a string function touches in each iteration", () => {
    const budget = {
      ok: false,
      message:
        "expression exceeded its evaluation budget of 250000 steps (comprehensions or matches() over too much data)",
    };
    const xs = Array.from({ length: 500 }, (_, i) => i);
    // 40 × 60,000 characters built and searched in each of 500 iterations: 1.2 billion.
    const cat = Array.from({ length: 40 }, () => "facts.s").join(" + ");
    const s = "x".repeat(60_000);
    expect(evaluate(`facts.xs.all(x, (${cat}).contains("y") == false)`, "check", { xs, s })).toEqual(budget);
    // `in` scans the list in each iteration: 500 × 20,000 comparisons.
    const ys = Array.from({ length: 20_000 }, (_, i) => -i);
    expect(evaluate("facts.xs.all(x, !(x in facts.ys))", "check", { xs: xs.slice(1), ys })).toEqual(budget);
    expect(evaluate("facts.xs.all(x, !(x in facts.ys))", "check", { xs: xs.slice(1, 11), ys })).toEqual({
      ok: true,
      value: true,
    });
  });
  it("keeps its internal helpers out of plan source", () => {
    expect(compileExpression("__iterate(facts.xs, 1).all(x, x > 0)", "check")).toMatchObject({ ok: false });
    expect(compileExpression('facts.s.__matches("a")', "check")).toMatchObject({ ok: false });
  });
});

describe("the metered rewrite", () => {
  // The reference: the same expression on a plain cel-js environment, without the rewrite.
  const reference = new Environment({ unlistedVariablesAreDyn: false, homogeneousAggregateLiterals: false })
    .registerVariable("facts", "map")
    .registerOperator("int + double", (a: bigint, b: number) => Number(a) + b)
    .registerOperator("double + int", (a: number, b: bigint) => a + Number(b));
  const facts = {
    xs: [1, 2, 3],
    s: "abc",
    items: [
      { n: "a1", q: 2 },
      { n: "b2", q: 0 },
    ],
  };
  // Mostly well-typed expressions: strings, lists of numbers, numbers and booleans, with
  // comprehensions over `v` (and `u` inside), `cel.bind`, string functions and `matches`.
  const { bool: expr } = fc.letrec<{ str: string; list: string; num: string; bool: string; vbool: string }>((tie) => ({
    str: fc.oneof(
      { depthSize: "small" },
      fc.constantFrom("facts.s", '"ab"'),
      fc.tuple(tie("str"), tie("str")).map(([a, b]) => `(${a} + ${b})`),
      fc.tuple(tie("str"), tie("str")).map(([a, b]) => `cel.bind(w, ${a}, w + ${b})`),
    ),
    list: fc.oneof(
      { depthSize: "small" },
      fc.constantFrom("facts.xs", "[1, 2]", "facts.items.map(i, i.q)"),
      fc.tuple(tie("list"), tie("vbool")).map(([l, b]) => `${l}.filter(v, ${b})`),
      fc.tuple(tie("list"), tie("num")).map(([l, n]) => `${l}.map(v, v + ${n})`),
      fc.tuple(tie("list"), tie("list")).map(([a, b]) => `(${a} + ${b})`),
      fc.tuple(tie("list"), tie("list")).map(([a, b]) => `cel.bind(w, ${a}, w + ${b})`),
    ),
    num: fc.oneof(
      { depthSize: "small" },
      fc.constantFrom("1", "2.5"),
      tie("list").map((l) => `size(${l})`),
      tie("str").map((t) => `size(${t})`),
      fc.tuple(tie("num"), tie("num")).map(([a, b]) => `(${a} + ${b})`),
    ),
    vbool: fc.oneof(
      { depthSize: "small" },
      tie("num").map((n) => `(v < ${n})`),
      tie("list").map((l) => `(v in ${l})`),
      tie("list").map((l) => `${l}.exists(u, u == v)`),
      tie("bool"),
    ),
    bool: fc.oneof(
      { depthSize: "small" },
      fc.constantFrom("true", "false"),
      fc.tuple(tie("num"), fc.constantFrom("<", "==", "!="), tie("num")).map(([a, op, b]) => `(${a} ${op} ${b})`),
      fc.tuple(tie("str"), fc.constantFrom("==", "<"), tie("str")).map(([a, op, b]) => `(${a} ${op} ${b})`),
      fc.tuple(tie("list"), tie("list")).map(([a, b]) => `(${a} == ${b})`),
      fc.tuple(tie("num"), tie("list")).map(([n, l]) => `(${n} in ${l})`),
      fc
        .tuple(tie("str"), fc.constantFrom("contains", "startsWith", "endsWith"), tie("str"))
        .map(([a, f, b]) => `${a}.${f}(${b})`),
      fc.tuple(tie("str"), fc.constantFrom('"a|b"', '"^a+$"', "facts.s")).map(([a, p]) => `${a}.matches(${p})`),
      fc
        .tuple(tie("list"), fc.constantFrom("all", "exists", "exists_one"), tie("vbool"))
        .map(([l, m, b]) => `${l}.${m}(v, ${b})`),
      fc.tuple(tie("bool"), fc.constantFrom("&&", "||"), tie("bool")).map(([a, op, b]) => `(${a} ${op} ${b})`),
      tie("bool").map((b) => `!${b}`),
    ),
  }));

  const outcome = (run: () => { ok: boolean; value?: unknown }) => {
    try {
      const result = run();
      return result.ok ? { value: result.value } : "fails";
    } catch {
      return "fails";
    }
  };

  it("gives what the expression as written gives, for every expression that compiles", () => {
    fc.assert(
      fc.property(expr, (source) => {
        const compiled = compileExpression(source, "check");
        if (!compiled.ok && compiled.code === "too_costly") return;
        const ours = compiled.ok ? outcome(() => evaluate(source, "check", facts)) : "does not compile";
        const theirs = reference.check(source).valid
          ? outcome(() => ({ ok: true, value: fromCel(reference.evaluate(source, { facts })) }))
          : "does not compile";
        expect({ source, result: ours }).toEqual({ source, result: theirs });
      }),
      { numRuns: 400, seed: 28 },
    );
  });
});

/**
 * CEL expressions (preconditions, success signals, `when`, assumption checks), evaluated by
 * @marcbachmann/cel-js over plain JSON. Never `eval`.
 *
 * Plan authors write `facts.qty + 1 > 2` without caring whether a JSON number is an int or a
 * double. JSON numbers reach CEL as doubles and literals like `1` are ints, and CEL refuses
 * mixed arithmetic; so we register the mixed int/double operators (the result is a double),
 * and convert CEL ints back to plain JS numbers on the way out.
 *
 * An expression may read `facts` only as `facts.key` or `facts["key"]` (and `output`, in
 * success signals). That makes the facts it needs statically known: a missing one is reported
 * by name, and the evaluator sees nothing else.
 *
 * Its cost is bounded (expr/cost.ts): what the author wrote is type-checked, and a metered
 * rewrite of it is what runs.
 */
import { Environment, type ASTNode } from "@marcbachmann/cel-js";
import { checkCost, overBudget, registerMetering, startMetering } from "./cost.js";

export type ExpressionKind = "precondition" | "successSignal" | "when" | "check" | "watch";

export interface CompiledExpression {
  readonly source: string;
  readonly kind: ExpressionKind;
  /** Fact keys the expression reads (each must be present). */
  readonly facts: readonly string[];
  /** Fact keys only tested with `has(facts.key)`. */
  readonly probes: readonly string[];
  readonly run: (context: Record<string, unknown>) => unknown;
}

/** `too_costly`: the expression is valid CEL but could cost more than an evaluation may. */
export type CompileResult =
  { ok: true; expression: CompiledExpression } | { ok: false; code: "invalid" | "too_costly"; message: string };

export type EvalResult =
  | { ok: true; value: unknown }
  | { ok: false; missing: string[]; message: string }
  | { ok: false; missing?: undefined; message: string };

const LIMITS = { maxAstNodes: 400, maxDepth: 40, maxListElements: 200, maxMapEntries: 200, maxCallArguments: 8 };
/** The metered rewrite wraps comprehensions and operands: at most a few nodes and levels for each. */
const RUN_LIMITS = { ...LIMITS, maxAstNodes: 4 * LIMITS.maxAstNodes, maxDepth: 4 * LIMITS.maxDepth };

const MIXED_OPERATORS = ["+", "-", "*", "/"] as const;

function applyArithmetic(op: (typeof MIXED_OPERATORS)[number], a: number, b: number): number {
  switch (op) {
    case "+":
      return a + b;
    case "-":
      return a - b;
    case "*":
      return a * b;
    case "/":
      return a / b;
  }
}

function makeEnvironment(withOutput: boolean, limits: typeof LIMITS): Environment {
  const env = new Environment({
    unlistedVariablesAreDyn: false,
    homogeneousAggregateLiterals: false,
    limits,
  }).registerVariable("facts", "map");
  if (withOutput) env.registerVariable("output", "dyn");
  for (const op of MIXED_OPERATORS) {
    env.registerOperator(`int ${op} double`, (a: bigint, b: number) => applyArithmetic(op, Number(a), b));
    env.registerOperator(`double ${op} int`, (a: number, b: bigint) => applyArithmetic(op, a, Number(b)));
  }
  return env;
}

const factsEnv = makeEnvironment(false, LIMITS);
const signalEnv = makeEnvironment(true, LIMITS);
const factsRunEnv = registerMetering(makeEnvironment(false, RUN_LIMITS));
const signalRunEnv = registerMetering(makeEnvironment(true, RUN_LIMITS));

const cache = new Map<string, CompileResult>();
const CACHE_LIMIT = 2_000;

/** Collects the fact keys read by the AST; returns an error message for any other use of `facts`. */
function collectFacts(node: ASTNode, keys: Set<string>, probed: Set<string>): string | undefined {
  const { op, args } = node as { op: string; args: unknown };
  // has(facts.key) tests presence: the key is read but not required.
  if (op === "call" && Array.isArray(args) && args[0] === "has") {
    const inner = (args[1] as ASTNode[] | undefined)?.[0] as { op: string; args: unknown } | undefined;
    if (inner && inner.op === "." && Array.isArray(inner.args)) {
      const [target, field] = inner.args as [{ op: string; args: unknown }, string];
      if (target.op === "id" && target.args === "facts") {
        probed.add(field);
        return undefined;
      }
    }
  }
  if (op === "id") {
    return args === "facts"
      ? 'read `facts` only as facts.key or facts["key"] (no whole-map or computed access)'
      : undefined;
  }
  if ((op === "." || op === ".?") && Array.isArray(args)) {
    const [target, field] = args as [ASTNode, string];
    if ((target as { op: string }).op === "id" && (target as { args: unknown }).args === "facts") {
      keys.add(field);
      return undefined;
    }
  }
  if ((op === "[]" || op === "[?]") && Array.isArray(args)) {
    const [target, index] = args as [ASTNode, ASTNode];
    const t = target as { op: string; args: unknown };
    if (t.op === "id" && t.args === "facts") {
      const i = index as { op: string; args: unknown };
      if (i.op === "value" && typeof i.args === "string") {
        keys.add(i.args);
        return undefined;
      }
      return 'read `facts` only with a literal key: facts["key"]';
    }
  }
  // A unary operator's operand is a single node, not a list.
  const children: unknown[] = Array.isArray(args) ? args.flat(2) : [args];
  for (const child of children) {
    if (child && typeof child === "object" && "op" in (child as object)) {
      const problem = collectFacts(child as ASTNode, keys, probed);
      if (problem) return problem;
    }
  }
  return undefined;
}

/** Parses and type-checks an expression. Results are cached by kind and source. */
export function compileExpression(source: string, kind: ExpressionKind): CompileResult {
  const cacheKey = `${kind}\u0000${source}`;
  const hit = cache.get(cacheKey);
  if (hit) return hit;
  const result = compileUncached(source, kind);
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(cacheKey, result);
  return result;
}

function compileUncached(source: string, kind: ExpressionKind): CompileResult {
  // A watch's check reads its tool's `output` like a success signal does.
  const signal = kind === "successSignal" || kind === "watch";
  const env = signal ? signalEnv : factsEnv;
  try {
    const checked = env.check(source);
    if (!checked.valid) return invalid(firstLine(checked.error?.message ?? "does not type-check"));
    const parsed = env.parse(source);
    const keys = new Set<string>();
    const probed = new Set<string>();
    const problem = collectFacts(parsed.ast, keys, probed);
    if (problem) return invalid(problem);
    for (const key of keys) probed.delete(key);
    const cost = checkCost(source, parsed.ast);
    if (!cost.ok) return cost;
    const runnable = (signal ? signalRunEnv : factsRunEnv).parse(cost.runnable);
    // Checked once here, so that each evaluation does not type-check again.
    const rechecked = runnable.check();
    if (!rechecked.valid) return invalid(firstLine(rechecked.error?.message ?? "does not type-check"));
    return {
      ok: true,
      expression: { source, kind, facts: [...keys], probes: [...probed], run: (context) => runnable(context) },
    };
  } catch (error) {
    return invalid(firstLine(error instanceof Error ? error.message : String(error)));
  }
}

function invalid(message: string): CompileResult {
  return { ok: false, code: "invalid", message };
}

function firstLine(message: string): string {
  return message.split("\n")[0] ?? message;
}

/**
 * Evaluates a compiled expression over trusted fact values (and `output`). Only the facts the
 * expression names are handed to CEL. A named fact that is absent gives `{ ok: false, missing }`.
 */
export function evaluateExpression(
  expression: CompiledExpression,
  facts: Readonly<Record<string, unknown>>,
  output?: unknown,
): EvalResult {
  const missing = expression.facts.filter((key) => !Object.hasOwn(facts, key));
  if (missing.length > 0) {
    return { ok: false, missing, message: `missing fact${missing.length > 1 ? "s" : ""}: ${missing.join(", ")}` };
  }
  const scoped: Record<string, unknown> = {};
  for (const key of expression.facts) scoped[key] = toCel(facts[key]);
  for (const key of expression.probes) if (Object.hasOwn(facts, key)) scoped[key] = toCel(facts[key]);
  const context: Record<string, unknown> = { facts: scoped };
  if (expression.kind === "successSignal" || expression.kind === "watch") context.output = toCel(output ?? null);
  startMetering();
  try {
    const value = expression.run(context);
    const over = overBudget();
    return over === undefined ? { ok: true, value: fromCel(value) } : { ok: false, message: over };
  } catch (error) {
    const message = overBudget() ?? firstLine(error instanceof Error ? error.message : String(error));
    return { ok: false, message };
  }
}

/** Compiles (cached) and evaluates; a compile error is reported like an evaluation error. */
export function evaluate(
  source: string,
  kind: ExpressionKind,
  facts: Readonly<Record<string, unknown>>,
  output?: unknown,
): EvalResult {
  const compiled = compileExpression(source, kind);
  if (!compiled.ok) return { ok: false, message: compiled.message };
  return evaluateExpression(compiled.expression, facts, output);
}

/**
 * JSON values into CEL: `undefined` becomes null, and objects become Maps. cel-js tells a map
 * from other objects by its `constructor`, so a plain object with a `constructor` key (a
 * sports result, say) would be refused as an unsupported type; a Map has no such key, and
 * keeps a `__proto__` key as data.
 */
function toCel(value: unknown): unknown {
  if (value === undefined) return null;
  if (Array.isArray(value)) return value.map(toCel);
  if (isPlainObject(value)) {
    const out = new Map<string, unknown>();
    for (const key of Object.keys(value)) out.set(key, toCel(value[key]));
    return out;
  }
  return value;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/** CEL values back to JSON: ints (bigint) become plain numbers, Maps plain objects. */
export function fromCel(value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (Array.isArray(value)) return value.map(fromCel);
  if (value instanceof Map) return Object.fromEntries([...value.entries()].map(([k, v]) => [String(k), fromCel(v)]));
  if (isPlainObject(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromCel(v)]));
  return value;
}

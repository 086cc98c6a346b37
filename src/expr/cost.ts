/**
 * Bounds what one CEL expression may cost. Expressions come from plans, plans from models, and
 * an evaluation runs synchronously in the step loop: a backtracking regex or comprehensions
 * nested over large lists would block the whole process (docs/decisions/0029-cel-expression-cost.md).
 *
 * - `matches` runs on RE2 (linear in its input) instead of the backtracking `RegExp`; a literal
 *   pattern RE2 refuses (backreferences, lookaround) is refused when the plan is validated.
 * - Comprehensions may nest at most {@link MAX_COMPREHENSION_NESTING} deep (validation).
 * - Every comprehension and every `matches` is charged to a per-evaluation budget of
 *   {@link EVALUATION_BUDGET} steps, before it runs; past the budget the evaluation fails.
 *
 * - The values `map()` and `cel.bind()` build are charged by their size as trees: a structure
 *   that shares a value (`[x, x]`) can double at each step, and comparing two such values with
 *   `==` walks the whole tree. Only these two can repeat a value (a fact is JSON, a tree; a
 *   literal repeats a variable at most as often as the source names it), so nothing else is
 *   walked.
 *
 * cel-js has no hook for any of this, and its built-in `matches` cannot be replaced. So the
 * source that runs is the author's source rewritten, spliced at the parsed nodes' offsets:
 * `r.all(x, p)` becomes `__iterate(r, w).all(x, p)`, where `__iterate` charges `r`'s length
 * times `w` (the nodes of the body) and hands `r` back unchanged;
 * `r.map(x, t)` is also wrapped in `__value(…)`, which charges the tree size of the result, as is
 * the value of `cel.bind(v, value, e)`; in a comprehension's body, the operands of comparisons,
 * `in`, `+` and the string functions are wrapped in `__weigh(…)`, which charges theirs (a
 * number or a short string costs nothing more); `s.matches(p)` becomes `s.__matches(p)`. Plan
 * source may not name these helpers.
 */
import type { ASTNode, Environment } from "@marcbachmann/cel-js";
import { RE2JS } from "re2js";

/** How deep comprehensions (`all`, `exists`, `exists_one`, `map`, `filter`) may nest. */
export const MAX_COMPREHENSION_NESTING = 3;
/** Steps one evaluation may spend: about one per AST node evaluated in a comprehension's body. */
export const EVALUATION_BUDGET = 250_000;

const COMPREHENSIONS = new Set(["all", "exists", "exists_one", "map", "filter"]);
const ITERATE = "__iterate";
const VALUE = "__value";
const WEIGH = "__weigh";
/** Operators whose work grows with their operands (strings, lists, maps are compared or copied). */
const SIZED_OPERATORS = new Set(["==", "!=", "<", "<=", ">", ">=", "in", "+"]);
/** Functions whose work grows with their receiver and arguments. */
const SIZED_FUNCTIONS = new Set([
  "contains",
  "startsWith",
  "endsWith",
  "indexOf",
  "lastIndexOf",
  "lowerAscii",
  "upperAscii",
  "trim",
  "substring",
  "split",
  "join",
]);
const MATCHES = "__matches";
const RESERVED_PREFIX = "__";

export type CostCheck = { ok: true; runnable: string } | { ok: false; code: "invalid" | "too_costly"; message: string };

interface Node {
  op: string;
  args: unknown;
  start: number;
  end: number;
}

/** An insertion or replacement; `close` marks the end of a wrapper, closed inner first. */
interface Edit {
  at: number;
  remove: number;
  insert: string;
  close?: true;
}

function childrenOf(node: Node): Node[] {
  const args = node.args;
  const flat = Array.isArray(args) ? (args as unknown[]).flat(2) : [args];
  return flat.filter((c): c is Node => typeof c === "object" && c !== null && "op" in c);
}

function countNodes(node: Node): number {
  let n = 1;
  for (const child of childrenOf(node)) n += countNodes(child);
  return n;
}

/**
 * Checks the static bounds of a parsed (and type-checked) expression and returns the source
 * to run: the same expression with the metering rewrites.
 */
export function checkCost(source: string, ast: ASTNode): CostCheck {
  scanned = { source, literals: stringLiterals(ast as unknown as Node, new Map()) };
  const edits: Edit[] = [];
  let deepest = 0;
  let problem: CostCheck | undefined;

  const visit = (node: Node, depth: number): void => {
    if (problem) return;
    if ((node.op === "call" || node.op === "rcall") && Array.isArray(node.args)) {
      const name = node.args[0] as string;
      if (name.startsWith(RESERVED_PREFIX)) {
        problem = {
          ok: false,
          code: "invalid",
          message: `function names starting with "${RESERVED_PREFIX}" are reserved`,
        };
        return;
      }
    }
    if (node.op === "rcall" && Array.isArray(node.args)) {
      const [name, receiver, params] = node.args as [string, Node, Node[]];
      if (COMPREHENSIONS.has(name) && params.length >= 2 && params[0]?.op === "id") {
        deepest = Math.max(deepest, depth + 1);
        const weight = params.slice(1).reduce((sum, p) => sum + countNodes(p), 0);
        if (name === "map") wrap(edits, node, `${VALUE}(`, ")");
        wrap(edits, receiver, `${ITERATE}(`, `, ${weight})`);
        visit(receiver, depth);
        for (const p of params.slice(1)) visit(p, depth + 1);
        return;
      }
      if (name === "bind" && receiver.op === "id" && receiver.args === "cel" && params.length === 3) {
        wrap(edits, params[1]!, `${VALUE}(`, ")");
      }
      if (depth > 0 && SIZED_FUNCTIONS.has(name)) for (const operand of [receiver, ...params]) weigh(edits, operand);
      if (name === "matches" && params.length === 1) {
        const edit = renameMatches(source, receiver, params[0]!);
        if (!edit.ok) {
          problem = edit;
          return;
        }
        edits.push(edit.edit);
      }
    }
    if (depth > 0 && SIZED_OPERATORS.has(node.op) && Array.isArray(node.args)) {
      const [left, right] = node.args as [Node, Node];
      // Against a literal, a comparison or `+` is cheap: a string is compared (by length
      // first) or joined without copying, a list or map fails the comparison by its type.
      const cheap = node.op === "in" ? isConstant(right) : left.op === "value" || right.op === "value";
      if (!cheap) for (const operand of [left, right]) weigh(edits, operand);
    }
    for (const child of childrenOf(node)) visit(child, depth);
  };
  visit(ast as unknown as Node, 0);

  if (problem) return problem;
  if (deepest > MAX_COMPREHENSION_NESTING) {
    const message = `comprehensions (all, exists, exists_one, map, filter) are nested ${deepest} deep; at most ${MAX_COMPREHENSION_NESTING} are allowed`;
    return { ok: false, code: "too_costly", message };
  }
  return { ok: true, runnable: applyEdits(source, edits) };
}

/**
 * In a comprehension's body, where it runs once per element, an operand of sized work is
 * charged by its size (a literal is as small as the source that spells it).
 */
function weigh(edits: Edit[], operand: Node): void {
  if (!isConstant(operand)) wrap(edits, operand, `${WEIGH}(`, ")");
}

/** A literal, or a list or map literal of literals. */
function isConstant(node: Node): boolean {
  if (node.op === "value") return true;
  if (node.op !== "list" && node.op !== "map") return false;
  return childrenOf(node).every(isConstant);
}

function wrap(edits: Edit[], node: Node, open: string, close: string): void {
  const [start, end] = outerRange(node);
  edits.push({ at: start, remove: 0, insert: open });
  edits.push({ at: end, remove: 0, insert: close, close: true });
}

/** The source being rewritten, and where its string literals lie (their parentheses are text). */
let scanned: { source: string; literals: Map<number, number> } = { source: "", literals: new Map() };

/**
 * A node's range as cel-js reports it leaves out the parentheses around its first and last
 * operands (`(a) + b` starts at `a`), so it may not be an expression by itself. Widened over
 * the unmatched parentheses just outside it, it is.
 */
function outerRange(node: Node): [number, number] {
  const { source } = scanned;
  let balance = 0;
  let lowest = 0;
  for (let i = node.start; i < node.end; i++) {
    i = skipText(i);
    if (i >= node.end) break;
    if (source[i] === "(") balance += 1;
    else if (source[i] === ")") lowest = Math.min(lowest, (balance -= 1));
  }
  let start = node.start;
  for (let missing = -lowest; missing > 0 && start > 0;) {
    start -= 1;
    if (source[start] === "(") missing -= 1;
  }
  let end = node.end;
  for (let missing = balance - lowest; missing > 0 && end < source.length; end++) {
    if (source[end] === ")") missing -= 1;
  }
  return [start, end];
}

/** Past a string literal or a comment starting at `i`, or `i` itself. */
function skipText(i: number): number {
  const literalEnd = scanned.literals.get(i);
  if (literalEnd !== undefined) return literalEnd;
  if (scanned.source.startsWith("//", i)) {
    const eol = scanned.source.indexOf("\n", i);
    return eol === -1 ? scanned.source.length : eol;
  }
  return i;
}

function stringLiterals(node: Node, into: Map<number, number>): Map<number, number> {
  if (node.op === "value" && (typeof node.args === "string" || node.args instanceof Uint8Array)) {
    into.set(node.start, node.end);
  }
  for (const child of childrenOf(node)) stringLiterals(child, into);
  return into;
}

/** `s.matches(p)` → `s.__matches(p)`; a literal pattern must be RE2 syntax. */
function renameMatches(
  source: string,
  receiver: Node,
  pattern: Node,
): { ok: true; edit: Edit } | { ok: false; code: "invalid"; message: string } {
  if (pattern.op === "value" && typeof pattern.args === "string") {
    const refused = re2Problem(pattern.args);
    if (refused) return { ok: false, code: "invalid", message: refused };
  }
  // Between the receiver and the pattern only `.matches(` may stand (with spaces and parentheses).
  const between = /^([\s)]*\.\s*)matches\s*\([\s(]*$/.exec(source.slice(receiver.end, pattern.start));
  if (!between) return { ok: false, code: "invalid", message: "write matches() as text.matches(pattern)" };
  return { ok: true, edit: { at: receiver.end + between[1]!.length, remove: "matches".length, insert: MATCHES } };
}

function applyEdits(source: string, edits: Edit[]): string {
  // Wrappers are pushed outer first. At one offset, openings go outer first and closings
  // inner first (two wrappers never close and open at the same offset).
  const rank = (e: Edit, i: number) => (e.close ? -i : i);
  const ordered = edits.map((e, i) => ({ e, i })).sort((a, b) => a.e.at - b.e.at || rank(a.e, a.i) - rank(b.e, b.i));
  let out = "";
  let from = 0;
  for (const { e } of ordered) {
    out += source.slice(from, e.at) + e.insert;
    from = e.at + e.remove;
  }
  return out + source.slice(from);
}

/** A compiled pattern and the size of its program (RE2's matching time is text length × size). */
interface Pattern {
  re: RE2JS;
  size: number;
}

const patterns = new Map<string, Pattern | string>();
const PATTERN_CACHE_LIMIT = 100;

function compilePattern(pattern: string): Pattern | string {
  const hit = patterns.get(pattern);
  if (hit !== undefined) return hit;
  let compiled: Pattern | string;
  try {
    const re = RE2JS.compile(pattern);
    compiled = { re, size: (re.re2().prog as { numInst(): number }).numInst() };
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^error parsing regexp: /, "") : String(error);
    compiled = `matches() pattern ${JSON.stringify(pattern.slice(0, 80))} is not RE2 syntax (no backreferences or lookaround): ${reason}`;
  }
  if (patterns.size >= PATTERN_CACHE_LIMIT) patterns.delete(patterns.keys().next().value as string);
  patterns.set(pattern, compiled);
  return compiled;
}

function re2Problem(pattern: string): string | undefined {
  const compiled = compilePattern(pattern);
  return typeof compiled === "string" ? compiled : undefined;
}

/** The budget of the evaluation under way (evaluation is synchronous: one at a time). */
const meter = { spent: 0, exceeded: false, compiled: new Set<string>() };

/**
 * Steps charged per program instruction: compiling a pattern (once per evaluation, so that the
 * charge does not depend on what an earlier evaluation left in the cache), and matching
 * `MATCH_CHARS_PER_STEP` characters of text. Measured: a 3,000-instruction program takes about
 * 1 s over 64,000 characters, and 1,000,000 steps of comprehension bodies about 0.3 s.
 */
const COMPILE_STEPS_PER_INSTRUCTION = 40;
const MATCH_CHARS_PER_STEP = 64;

class BudgetExceeded extends Error {}

function charge(steps: number): void {
  meter.spent += steps;
  if (meter.spent > EVALUATION_BUDGET) meter.exceeded = true;
  // Once over, every later charge throws too: a quantifier that absorbs one element's error
  // stops paying for the rest at once.
  if (meter.exceeded) throw new BudgetExceeded(budgetMessage());
}

function sizeOf(value: unknown): number {
  if (Array.isArray(value)) return value.length;
  if (value instanceof Map || value instanceof Set) return value.size;
  if (typeof value === "object" && value !== null) return Object.keys(value).length;
  return 0;
}

/**
 * The number of nodes of `value` as a tree (a shared value counts each time it appears), a
 * string counting one more per `MATCH_CHARS_PER_STEP` characters; counted only up to `cap`,
 * so that the walk costs no more than what it may charge.
 */
function treeSize(value: unknown, cap: number): number {
  let count = nodeSize(value);
  const pending: unknown[] = [value];
  while (pending.length > 0 && count <= cap) {
    for (const child of childrenOfValue(pending.pop())) {
      count += nodeSize(child);
      if (typeof child === "object" && child !== null) pending.push(child);
      if (count > cap) break;
    }
  }
  return count;
}

function nodeSize(value: unknown): number {
  return typeof value === "string" ? 1 + Math.floor(value.length / MATCH_CHARS_PER_STEP) : 1;
}

function childrenOfValue(value: unknown): Iterable<unknown> {
  if (Array.isArray(value)) return value as unknown[];
  if (value instanceof Map || value instanceof Set) return value.values();
  if (typeof value === "object" && value !== null) return Object.values(value);
  return [];
}

function chargeTree(value: unknown): void {
  charge(treeSize(value, EVALUATION_BUDGET - meter.spent));
}

/** Registers the metering helpers the rewritten source calls. */
export function registerMetering(env: Environment): Environment {
  return env
    .registerFunction(`${ITERATE}(A, int): A`, (value: unknown, weight: bigint) => {
      charge(1 + sizeOf(value) * Number(weight));
      return value;
    })
    .registerFunction(`${VALUE}(A): A`, (value: unknown) => {
      chargeTree(value);
      return value;
    })
    .registerFunction(`${WEIGH}(A): A`, (value: unknown) => {
      if (typeof value === "object" && value !== null) chargeTree(value);
      else if (typeof value === "string" && value.length >= MATCH_CHARS_PER_STEP) charge(nodeSize(value));
      return value;
    })
    .registerFunction(`string.${MATCHES}(string): bool`, (text: string, pattern: string) => {
      charge(1); // past the budget, before compiling anything
      const compiled = compilePattern(pattern);
      if (!meter.compiled.has(pattern)) {
        meter.compiled.add(pattern);
        charge(1 + pattern.length + (typeof compiled === "string" ? 0 : compiled.size * COMPILE_STEPS_PER_INSTRUCTION));
      }
      if (typeof compiled === "string") throw new Error(compiled);
      charge(1 + Math.ceil((text.length * compiled.size) / MATCH_CHARS_PER_STEP));
      return compiled.re.test(text);
    });
}

/** Starts a fresh budget for the evaluation about to run. */
export function startMetering(): void {
  meter.spent = 0;
  meter.exceeded = false;
  if (meter.compiled.size > 0) meter.compiled.clear();
}

/**
 * Why the evaluation that just ran is not to be trusted, if it went past its budget (even
 * when it produced a value: a quantifier may have absorbed the budget's error).
 */
export function overBudget(): string | undefined {
  return meter.exceeded ? budgetMessage() : undefined;
}

function budgetMessage(): string {
  return `expression exceeded its evaluation budget of ${EVALUATION_BUDGET} steps (comprehensions or matches() over too much data)`;
}

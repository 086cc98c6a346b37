/**
 * Tool outputs at the boundary: only JSON values become facts. A checkpoint stores JSON, so a live
 * `Date`, `Map` or class instance would reach the next step in one process and a string or `{}`
 * after a resume; normalising here makes a resumed run equal an uninterrupted one.
 *
 * Pure. It recurses at most `maxDepth` + 1 frames whatever the input (hostile depth is reported,
 * not followed), and measures a value shared in many places once (a DAG of 2^30 paths is cheap).
 */
import { LIMITS } from "./schema/primitives.js";

export type JsonIssueCode = "not_json" | "circular" | "too_deep" | "unreadable";

export type JsonResult =
  /** `value` is the input itself when nothing had to change; `bytes` is the UTF-8 size of its JSON text. */
  { ok: true; value: unknown; bytes: number } | { ok: false; code: JsonIssueCode; path: string; message: string };

export interface JsonOptions {
  /** How the value is named in messages (`output.items[2] is a Map`). Default `"output"`. */
  path?: string;
  /** Deepest nesting allowed; the value itself is at depth 0. Default `LIMITS.maxJsonDepth` (32). */
  maxDepth?: number;
  /** Whose values these are, for the rule a rejection quotes. Default `"tools"` ("tools must return JSON values"). */
  source?: "tools" | "input" | "person";
}

const JSON_KINDS = "JSON values (plain objects, arrays, strings, numbers, booleans, null)";
const JSON_RULE = {
  tools: `tools must return ${JSON_KINDS}`,
  input: `input context values must be ${JSON_KINDS}`,
  person: `a person's answer must be ${JSON_KINDS}`,
} as const;

/**
 * Normalises a tool output to a JSON value: JSON values pass unchanged; a `Date` becomes its ISO
 * string; `undefined` properties are dropped and `undefined` array items become `null`, as
 * `JSON.stringify` does. Anything else (functions, symbols, BigInt, NaN and ±Infinity, class
 * instances such as Map, Set, Buffer or typed arrays, cycles, nesting beyond `maxDepth`) is
 * rejected with the path of the first offence in JSON order.
 */
export function toJsonValue(value: unknown, options: JsonOptions = {}): JsonResult {
  const walk = new Walk(options.maxDepth ?? LIMITS.maxJsonDepth);
  const node = walk.visit(value, 0, undefined);
  if (node instanceof Issue) {
    const path = formatPath(options.path ?? "output", node.at);
    const message = node.describe(path, JSON_RULE[options.source ?? "tools"]);
    return { ok: false, code: node.code, path, message };
  }
  return { ok: true, value: node.value, bytes: node.bytes };
}

/** Path segments as a linked list from the leaf up, formatted only when something is reported. */
interface Segment {
  parent: Segment | undefined;
  key: string | number;
}

/** A normalised value, its JSON size and how many levels it nests below itself. */
interface Node {
  value: unknown;
  bytes: number;
  height: number;
}

class Issue {
  constructor(
    readonly code: JsonIssueCode,
    readonly at: Segment | undefined,
    private readonly what: string,
  ) {}

  describe(path: string, rule: string): string {
    return `${path} ${this.what}${this.code === "not_json" ? `; ${rule}` : ""}`;
  }
}

class Walk {
  /** Objects on the current path: meeting one again is a cycle. */
  private readonly ancestors = new Set<object>();
  /** Objects already measured, so a value shared in many places is walked once. */
  private readonly done = new WeakMap<object, Node>();

  constructor(private readonly maxDepth: number) {}

  visit(value: unknown, depth: number, at: Segment | undefined): Node | Issue {
    if (depth > this.maxDepth) return this.tooDeep();
    switch (typeof value) {
      case "string":
        return { value, bytes: quotedBytes(value), height: 0 };
      case "boolean":
        return { value, bytes: value ? 4 : 5, height: 0 };
      case "number":
        return Number.isFinite(value) ? { value, bytes: String(value).length, height: 0 } : notJson(at, String(value));
      case "bigint":
        return notJson(at, "a BigInt");
      case "symbol":
        return notJson(at, "a symbol");
      case "function":
        return notJson(at, "a function");
      case "undefined":
        // Only reached for the value itself (a tool that returns nothing): containers handle their own.
        return { value, bytes: 0, height: 0 };
    }
    if (value === null || typeof value !== "object") return { value: null, bytes: 4, height: 0 };
    return this.visitObject(value, depth, at);
  }

  private visitObject(value: object, depth: number, at: Segment | undefined): Node | Issue {
    if (this.ancestors.has(value)) return new Issue("circular", at, "is a circular reference");
    const seen = this.done.get(value);
    if (seen) return depth + seen.height > this.maxDepth ? this.tooDeep() : seen;
    let kind: string;
    try {
      kind = objectKind(value);
    } catch (error) {
      return unreadable(at, error);
    }
    if (kind === "date") {
      const time = (value as Date).getTime();
      if (Number.isNaN(time)) return notJson(at, "an invalid Date");
      const iso = (value as Date).toISOString();
      return { value: iso, bytes: quotedBytes(iso), height: 0 };
    }
    if (kind !== "array" && kind !== "plain") return notJson(at, kind);
    this.ancestors.add(value);
    const node = kind === "array" ? this.visitArray(value as unknown[], depth, at) : this.visitPlain(value, depth, at);
    this.ancestors.delete(value);
    if (!(node instanceof Issue)) this.done.set(value, node);
    return node;
  }

  private visitArray(array: readonly unknown[], depth: number, at: Segment | undefined): Node | Issue {
    const items: unknown[] = new Array<unknown>(array.length);
    let changed = false;
    let bytes = 2 + Math.max(0, array.length - 1);
    let height = 0;
    for (let i = 0; i < array.length; i++) {
      const where: Segment = { parent: at, key: i };
      let item: unknown;
      try {
        item = array[i];
      } catch (error) {
        return unreadable(where, error);
      }
      // A hole or undefined item is `null` in JSON.
      const node = item === undefined ? this.nullAt(depth + 1) : this.visit(item, depth + 1, where);
      if (node instanceof Issue) return node;
      items[i] = node.value;
      changed ||= node.value !== item || !(i in array);
      bytes += node.bytes;
      height = Math.max(height, node.height + 1);
    }
    return { value: changed ? items : array, bytes, height };
  }

  private visitPlain(object: object, depth: number, at: Segment | undefined): Node | Issue {
    let keys: string[];
    try {
      keys = Object.keys(object);
    } catch (error) {
      return unreadable(at, error);
    }
    const entries: [string, unknown][] = [];
    let changed = false;
    let bytes = 2;
    let height = 0;
    for (const key of keys) {
      const where: Segment = { parent: at, key };
      let child: unknown;
      try {
        child = (object as Record<string, unknown>)[key];
      } catch (error) {
        return unreadable(where, error);
      }
      // JSON drops undefined properties; the depth they would have had still counts (as in jsonDepth).
      if (child === undefined) {
        if (depth + 1 > this.maxDepth) return this.tooDeep();
        changed = true;
        height = Math.max(height, 1);
        continue;
      }
      const node = this.visit(child, depth + 1, where);
      if (node instanceof Issue) return node;
      entries.push([key, node.value]);
      changed ||= node.value !== child;
      bytes += (entries.length > 1 ? 1 : 0) + quotedBytes(key) + 1 + node.bytes;
      height = Math.max(height, node.height + 1);
    }
    return { value: changed ? fromEntries(entries) : object, bytes, height };
  }

  private nullAt(depth: number): Node | Issue {
    return depth > this.maxDepth ? this.tooDeep() : { value: null, bytes: 4, height: 0 };
  }

  private tooDeep(): Issue {
    return new Issue("too_deep", undefined, `is nested deeper than ${this.maxDepth} levels`);
  }
}

/**
 * What kind of object this is for JSON: an array, a plain object (no prototype, `Object.prototype`,
 * or another realm's `Object.prototype`), a Date, or else a description such as "a Map".
 */
function objectKind(value: object): string {
  if (Array.isArray(value)) return "array";
  const proto: unknown = Object.getPrototypeOf(value);
  if (proto === null || proto === Object.prototype || Object.getPrototypeOf(proto) === null) return "plain";
  if (value instanceof Date) return "date";
  // Only a constructor the prototype owns names the class; an inherited one would say "Object".
  const owner = Object.hasOwn(proto as object, "constructor")
    ? (proto as { constructor?: unknown }).constructor
    : undefined;
  const name = typeof owner === "function" && owner.name ? owner.name : "object with a custom prototype";
  return `${/^[aeio]/i.test(name) ? "an" : "a"} ${name}`;
}

function fromEntries(entries: readonly [string, unknown][]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of entries) {
    // Assigning "__proto__" would set the prototype instead of storing data.
    if (key === "__proto__") {
      Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
    } else out[key] = value;
  }
  return out;
}

function notJson(at: Segment | undefined, what: string): Issue {
  return new Issue("not_json", at, `is ${what}`);
}

function unreadable(at: Segment | undefined, error: unknown): Issue {
  const why = error instanceof Error ? error.message : String(error);
  return new Issue("unreadable", at, `could not be read (${why})`);
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function formatPath(root: string, at: Segment | undefined): string {
  const parts: string[] = [];
  for (let s = at; s; s = s.parent) {
    const key = s.key;
    parts.push(typeof key === "number" ? `[${key}]` : IDENTIFIER.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`);
  }
  return root + parts.reverse().join("");
}

/** UTF-8 bytes of `JSON.stringify(s)`: quotes, escapes, and lone surrogates written as `\uXXXX`. */
function quotedBytes(s: string): number {
  let n = 2;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20) n += c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d ? 2 : 6;
    else if (c === 0x22 || c === 0x5c) n += 2;
    else if (c < 0x80) n += 1;
    else if (c < 0x800) n += 2;
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        n += 4;
        i++;
      } else n += 6;
    } else if (c >= 0xdc00 && c <= 0xdfff) n += 6;
    else n += 3;
  }
  return n;
}

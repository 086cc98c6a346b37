/**
 * What a thrown error carries, made storable. Unlike a tool's output (`toJsonValue`, which refuses
 * what is not JSON), an error is evidence of a failure that already happened: refusing it would
 * lose the failure, and a value the checkpoint cannot store would break the thread. So anything is
 * turned into JSON here, and cut to the limits in docs/guides/configuration.md ("Limits").
 *
 * Pure; never throws (getters that throw and Proxies are read inside `try`), and the work is
 * bounded by the size limit whatever the input (a cycle, a billion-element array, a deep chain).
 */
import { LIMITS } from "./schema/primitives.js";

/** `text` cut to `max` characters (never inside a surrogate pair), saying how long it was. */
export function capText(text: string, max: number = LIMITS.maxErrorMessageLength): string {
  if (text.length <= max) return text;
  const end = isHighSurrogate(text.charCodeAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, end)}… [${text.length.toLocaleString("en-US")} characters, cut]`;
}

/**
 * A JSON value standing for `value`: BigInt as its decimal string, NaN and ±Infinity as their
 * names, a cycle as `"[Circular]"`, a Date as its ISO string, an Error as `{ name, message }`,
 * functions and symbols described, nesting past `LIMITS.maxJsonDepth` as `"[Too deep]"`. A value
 * whose JSON would exceed `LIMITS.maxJsonBytes` becomes the start of that JSON as a string, cut.
 */
export function toJsonSafe(value: unknown): unknown {
  const walk = new SafeWalk(LIMITS.maxJsonBytes);
  const safe = walk.visit(value, 0);
  if (!walk.over) {
    const text = JSON.stringify(safe);
    if (text === undefined || Buffer.byteLength(text) <= LIMITS.maxJsonBytes) return safe;
  }
  const text = JSON.stringify(safe) ?? "";
  const end = Math.min(text.length, LIMITS.maxErrorMessageLength);
  const cut = isHighSurrogate(text.charCodeAt(end - 1)) ? end - 1 : end;
  return `${text.slice(0, cut)}${CUT_MARK}`;
}

/** Whether `toJsonSafe` had to cut the value to the start of its JSON (it was over `LIMITS.maxJsonBytes`). */
export function wasCut(safe: unknown): boolean {
  return typeof safe === "string" && safe.endsWith(CUT_MARK);
}

const CUT_MARK = `… [evidence over ${LIMITS.maxJsonBytes.toLocaleString("en-US")} bytes of JSON, cut]`;

const MAX_DEPTH = LIMITS.maxJsonDepth;

class SafeWalk {
  /** Objects on the current path: meeting one again is a cycle. */
  private readonly ancestors = new Set<object>();
  /** Characters still allowed before the walk stops descending (a bound on work, not the final check). */
  private budget: number;
  over = false;

  constructor(maxChars: number) {
    this.budget = maxChars;
  }

  visit(value: unknown, depth: number): unknown {
    if (this.spent(8)) return undefined;
    switch (typeof value) {
      case "string":
        // Only the part that can be kept is copied.
        this.spent(value.length);
        return value.length > LIMITS.maxJsonBytes ? value.slice(0, LIMITS.maxJsonBytes) : value;
      case "number":
        return Number.isFinite(value) ? value : String(value);
      case "boolean":
        return value;
      case "bigint":
        return value.toString();
      case "symbol":
        return value.toString();
      case "function":
        return `[function${value.name ? ` ${value.name}` : ""}]`;
      case "undefined":
        return undefined;
    }
    if (value === null) return null;
    return this.visitObject(value as object, depth);
  }

  private visitObject(value: object, depth: number): unknown {
    if (this.ancestors.has(value)) return "[Circular]";
    if (depth >= MAX_DEPTH) return "[Too deep]";
    try {
      if (value instanceof Date) return Number.isNaN(value.getTime()) ? "Invalid Date" : value.toISOString();
      if (value instanceof Error) return { name: String(value.name), message: capText(String(value.message)) };
      this.ancestors.add(value);
      try {
        return Array.isArray(value) ? this.visitArray(value, depth) : this.visitEntries(value, depth);
      } finally {
        this.ancestors.delete(value);
      }
    } catch {
      return "[Unreadable]";
    }
  }

  private visitArray(array: readonly unknown[], depth: number): unknown[] {
    const out: unknown[] = [];
    for (let i = 0; i < array.length && !this.spent(1); i++) {
      const item = this.visit(array[i], depth + 1);
      out.push(item === undefined ? null : item);
    }
    return out;
  }

  private visitEntries(object: object, depth: number): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(object)) {
      if (this.spent(key.length + 4)) break;
      let child: unknown;
      try {
        child = (object as Record<string, unknown>)[key];
      } catch {
        child = "[Unreadable]";
      }
      const safe = this.visit(child, depth + 1);
      if (safe === undefined) continue;
      // Assigning "__proto__" would set the prototype instead of storing data.
      Object.defineProperty(out, key, { value: safe, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }

  /** Takes `chars` from the budget; true once it is spent (the walk then stops adding). */
  private spent(chars: number): boolean {
    if (this.over) return true;
    this.budget -= chars;
    if (this.budget < 0) this.over = true;
    return this.over;
  }
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

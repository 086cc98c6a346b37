/**
 * The bounds every plan field is held to (plans come from LLMs) and the small schemas the others
 * are built from: ids, fact keys, expressions, text and lists.
 */
import { z } from "zod";

/** Size limits enforced on every plan draft. Documented in docs/guides/configuration.md ("Limits"). */
export const LIMITS = {
  maxSteps: 200,
  maxAssumptions: 50,
  maxIdLength: 64,
  maxTextLength: 2_000,
  maxExpressionLength: 1_000,
  maxListLength: 50,
  /** Serialised JSON size of one step's `args` or one fact value. */
  maxJsonBytes: 64_000,
  /** Nesting depth of one step's `args` or one tool output. */
  maxJsonDepth: 32,
  /** Characters of a stored error message (longer ones are cut, saying so); an error's `evidence` is cut to `maxJsonBytes`. */
  maxErrorMessageLength: 4_000,
  /** Characters of a run's goal: it goes into every planner prompt and the outcome's summary. */
  maxGoalLength: 16_000,
} as const;

/** Names that would collide with Object.prototype when used as keys. */
export const RESERVED_KEYS: ReadonlySet<string> = new Set([
  "__proto__",
  "prototype",
  "constructor",
  ...Object.getOwnPropertyNames(Object.prototype),
]);

const ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]*$/;
const KEY_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const IdSchema = z
  .string()
  .min(1)
  .max(LIMITS.maxIdLength)
  .regex(ID_PATTERN, "must start with a letter and contain only letters, digits, '_' and '-'")
  .refine((id) => !RESERVED_KEYS.has(id), "is a reserved name (collides with Object.prototype)");

/** A fact key: usable as `facts.<key>` in CEL. */
export const FactKeySchema = z
  .string()
  .min(1)
  .max(LIMITS.maxIdLength)
  .regex(KEY_PATTERN, "must be an identifier (letters, digits, '_'; not starting with a digit)")
  .refine((key) => !RESERVED_KEYS.has(key), "is a reserved name (collides with Object.prototype)");

export const TextSchema = z.string().max(LIMITS.maxTextLength);
export const ExpressionSchema = z.string().min(1).max(LIMITS.maxExpressionLength);
export const list = <T extends z.ZodType>(item: T) => z.array(item).max(LIMITS.maxListLength);

export const JsonObjectSchema = z.record(z.string(), z.unknown());

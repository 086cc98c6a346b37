/** Durations as an operator types them (`30d`, `12h`, `90m`), for retention (graph/retention.ts). */
import { PlanManagerError } from "../errors.js";

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};

/**
 * Milliseconds for a whole number and a unit (`ms`, `s`, `m`, `h`, `d`, `w`), or
 * `invalid_options` naming the text and `path`. A duration too long to count in milliseconds
 * exactly is refused rather than rounded.
 */
export function parseDuration(text: string, path = "olderThan"): number {
  const match = typeof text === "string" ? /^(\d+)(ms|s|m|h|d|w)$/.exec(text.trim()) : null;
  const ms = match ? Number(match[1]) * UNIT_MS[match[2]!]! : Number.NaN;
  if (!Number.isSafeInteger(ms))
    throw new PlanManagerError(
      "invalid_options",
      `${path} must be a whole number and a unit — ms, s, m, h, d or w (e.g. 30d, 12h, 90m) — ` +
        `of at most ${Number.MAX_SAFE_INTEGER} ms, got ${JSON.stringify(String(text))}`,
      { path },
    );
  return ms;
}

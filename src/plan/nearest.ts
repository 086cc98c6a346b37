/** "Did you mean …?" for names from a closed set: the nearest candidate by edit distance, if close. */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  const allowed = Math.max(1, Math.floor(word.length / 3));
  // Bounded: a word or candidate whose length alone rules it out is never compared.
  if (word.length > 64) return undefined;
  for (const candidate of candidates) {
    if (Math.abs(candidate.length - word.length) > allowed) continue;
    const d = distance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  // Close means at most a third of the word wrong (at least one edit allowed).
  return bestDistance <= allowed ? best : undefined;
}

/** Edit distance counting a swap of neighbours as one edit (optimal string alignment): "tolo" → "tool" is 1. */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 0; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]!;
}

/** How a received value is named in a message: `the string "yes"`, `the number 42`, `null`, `an array`. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  switch (typeof value) {
    case "string":
      return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 37)}...` : value)}`;
    case "number":
    case "boolean":
    case "bigint":
      return `the ${typeof value} ${String(value)}`;
    case "undefined":
      return "nothing (undefined)";
    case "object":
      return "an object";
    default:
      return `a ${typeof value}`;
  }
}

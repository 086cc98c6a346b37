/** Small helpers for the benchmarks: medians, percentiles, tables. */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

export interface Table {
  title: string;
  note?: string;
  head: string[];
  rows: (string | number)[][];
}

export function fmt(n: number, digits = 2): string {
  if (!Number.isFinite(n)) return String(n);
  return n.toFixed(digits);
}

export function printTable(t: Table): void {
  const cells = [t.head, ...t.rows.map((r) => r.map(String))];
  const widths = t.head.map((_, i) => Math.max(...cells.map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ");
  console.log(`\n${t.title}`);
  console.log(line(t.head));
  console.log(widths.map((w) => "-".repeat(w)).join("  "));
  for (const r of cells.slice(1)) console.log(line(r));
  if (t.note) console.log(t.note);
}

export function markdownTable(t: Table): string {
  const row = (r: (string | number)[]) => `| ${r.map(String).join(" | ")} |`;
  return [
    `### ${t.title}`,
    "",
    row(t.head),
    row(t.head.map(() => "---")),
    ...t.rows.map(row),
    "",
    t.note ?? "",
    "",
  ].join("\n");
}

/** Runs `fn` once to warm up, then `runs` times; returns each run's result. */
export async function repeat<T>(runs: number, fn: () => Promise<T>): Promise<T[]> {
  await fn();
  const out: T[] = [];
  for (let i = 0; i < runs; i++) out.push(await fn());
  return out;
}

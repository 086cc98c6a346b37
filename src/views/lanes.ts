/**
 * Timeline lanes: each step record with a start and an end goes to the first lane free at its
 * start, so the number of lanes is the most steps that ran at once (docs/architecture.md "Parallel steps"). Pure.
 */
export interface Span {
  id: string;
  start: number;
  end: number;
}

export interface Laned<T extends Span> {
  lanes: number;
  placed: (T & { lane: number })[];
}

/** Interval partitioning by start time: optimal, so `lanes` is the peak concurrency. */
export function assignLanes<T extends Span>(spans: readonly T[]): Laned<T> {
  const sorted = [...spans].sort((a, b) => a.start - b.start || a.end - b.end);
  const laneEnds: number[] = [];
  const placed = sorted.map((span) => {
    let lane = laneEnds.findIndex((end) => end <= span.start);
    if (lane < 0) lane = laneEnds.push(span.end) - 1;
    else laneEnds[lane] = span.end;
    return { ...span, lane };
  });
  return { lanes: laneEnds.length, placed };
}

/** A stretch of time drawn shorter than it lasted. */
export interface Gap {
  start: number;
  end: number;
  /** Where it is drawn, as fractions of the axis. */
  at: number;
  width: number;
}

export interface TimeAxis {
  /** A time's place on the axis, from 0 to 1. */
  place: (t: number) => number;
  gaps: Gap[];
}

/**
 * The timeline's axis. A run that waits an hour for a person and works for a second would draw
 * its steps as slivers, so when the stretches in which nothing but waits ran (`waits`: spans that
 * do not count as work) last longer than the work, each is drawn a quarter of the work's time
 * long. Otherwise the axis is plain linear time. Pure.
 */
export function timeAxis(spans: readonly Span[], isWait: (span: Span) => boolean): TimeAxis {
  const t0 = Math.min(...spans.map((s) => s.start));
  const t1 = Math.max(...spans.map((s) => s.end));
  const linear = { place: (t: number) => (t - t0) / Math.max(1, t1 - t0), gaps: [] };
  // Stretches of [t0, t1] covered by work, merged.
  const work = spans
    .filter((s) => !isWait(s))
    .map((s) => [s.start, s.end] as [number, number])
    .sort((a, b) => a[0] - b[0]);
  const busy: [number, number][] = [];
  for (const [s, e] of work) {
    const last = busy[busy.length - 1];
    if (last && s <= last[1]) last[1] = Math.max(last[1], e);
    else busy.push([s, e]);
  }
  const busyTime = busy.reduce((sum, [s, e]) => sum + (e - s), 0);
  const quiet: [number, number][] = [];
  let cursor = t0;
  for (const [s, e] of busy) {
    if (s > cursor) quiet.push([cursor, s]);
    cursor = Math.max(cursor, e);
  }
  if (t1 > cursor) quiet.push([cursor, t1]);
  const quietTime = quiet.reduce((sum, [s, e]) => sum + (e - s), 0);
  if (busyTime === 0 || quietTime <= busyTime) return linear;
  const cap = busyTime / 4;
  const drawn = (s: number, e: number) => Math.min(e - s, cap);
  const total = busyTime + quiet.reduce((sum, [s, e]) => sum + drawn(s, e), 0);
  // Breakpoints: each quiet stretch maps linearly onto its drawn width.
  const place = (t: number): number => {
    let shift = 0;
    for (const [s, e] of quiet) {
      if (t <= s) break;
      if (t < e) return (t - t0 - shift - (t - s) + ((t - s) / (e - s)) * drawn(s, e)) / total;
      shift += e - s - drawn(s, e);
    }
    return (t - t0 - shift) / total;
  };
  const gaps = quiet
    .filter(([s, e]) => e - s > cap)
    .map(([s, e]) => ({ start: s, end: e, at: place(s), width: place(e) - place(s) }));
  return { place, gaps };
}

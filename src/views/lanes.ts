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

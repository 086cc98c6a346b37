/**
 * The status of the runs this process drives, kept from the runs' own stream: the state values
 * each superstep ends with (the values a checkpoint of that superstep holds), so that `plan_status`
 * of a running plan reads memory instead of rebuilding the checkpoint's delta channels
 * (docs/decisions/0066-live-status-of-running-plans.md). A plan another process drives, or one
 * whose run has returned, is read from its status row or checkpoint as before.
 */
import type { ValuesTap } from "../runtime/values-tap.js";
import { valuesCore, type StatusCore, type StatusValues } from "./status.js";

/** At most this many running plans are kept (the oldest dropped first: they are then read from the checkpoint). */
export const MAX_LIVE = 1_000;

interface Latest {
  values: StatusValues;
  /** The status of `values`, worked out at the first read after they came. */
  core?: StatusCore;
}

export class LiveStatuses {
  private readonly latest = new Map<string, Latest>();

  constructor(private readonly max = MAX_LIVE) {}

  /**
   * What the plan's run is told of each superstep's values by (runtime/values-tap.ts): once `counts()`
   * (the run holds the plan's thread), they are kept as the plan's latest.
   */
  tap(planId: string, counts: () => boolean): ValuesTap {
    return (chunk) => {
      // An interrupt's chunk holds the question, not the state: the run is about to return.
      if (counts() && chunk && typeof chunk === "object" && !("__interrupt__" in chunk))
        this.keep(planId, chunk as StatusValues);
    };
  }

  private keep(planId: string, values: StatusValues): void {
    if (!this.latest.has(planId))
      for (const oldest of this.latest.keys()) {
        if (this.latest.size < this.max) break;
        this.latest.delete(oldest);
      }
    this.latest.set(planId, { values });
  }

  /** The status of the plan's run as its latest superstep left it, while this process drives it and keeps it. */
  core(planId: string): StatusCore | undefined {
    const latest = this.latest.get(planId);
    if (!latest) return undefined;
    // A run going on in this process, which is what a status row's `running` says too.
    latest.core ??= { ...valuesCore(latest.values), running: true };
    return latest.core;
  }

  /** Drops the plan's run (it returned, paused or threw): its status is its checkpoint's again. */
  forget(planId: string): void {
    this.latest.delete(planId);
  }

  get size(): number {
    return this.latest.size;
  }
}

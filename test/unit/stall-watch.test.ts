/**
 * Stalls (docs/architecture.md "Long goals"): reported while the step runs, from the injected clock; no real waiting.
 */
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { manualClock } from "../../examples/migration/workflow.js";
import { stallDeadline } from "../../src/policy/replan/horizon.js";
import { watchForStall } from "../../src/runtime/stall-watch.js";
import { resolveOptions } from "../../src/runtime/options.js";
import { operatorView } from "../../src/views/operator-view.js";

const step = { id: "copy", goal: "Copying", estimateMs: 1000 };

function watched() {
  const clock = manualClock(0);
  const events: unknown[] = [];
  const config = { writer: (e: unknown) => events.push(e) };
  const stop = watchForStall({ clock, policy: { stallFactor: 2 } as never }, config as never, step, 1, clock.now());
  return { clock, events, stop };
}

describe("stall watch", () => {
  it("puts the deadline at stallFactor × estimateMs after the start, and none without an estimate", () => {
    expect(stallDeadline(5_000, 1000, { stallFactor: 2 })).toBe(7_000);
    expect(stallDeadline(5_000, 333, { stallFactor: 1.5 })).toBe(5_500);
    expect(stallDeadline(5_000, undefined, { stallFactor: 2 })).toBeUndefined();
  });

  it("reports a step still running at the deadline, while it runs", async () => {
    const { clock, events, stop } = watched();
    await clock.advance(1_999);
    expect(events).toEqual([]);
    await clock.advance(1);
    expect(events).toEqual([
      { type: "step_stalled", stepId: "copy", goal: "Copying", attempt: 1, estimateMs: 1000, runningMs: 2000 },
    ]);
    expect(stop()).toBe(true);
  });

  it("says nothing for a step that ends in time, and stops its timer", async () => {
    const { clock, events, stop } = watched();
    await clock.advance(1_500);
    expect(stop()).toBe(false);
    await clock.advance(10_000);
    expect(events).toEqual([]);
  });

  it("marks a running step past its deadline in the operator view", () => {
    const state = {
      plan: { version: 1, steps: [{ ...step, tool: "copy" }], assumptions: [] },
      steps: { copy: { status: "running", attempts: 1, startedAt: "2026-01-01T00:00:00.000Z" } },
      status: "running",
      decisions: [],
      replans: [],
      budget: { spent: 0, replanSpent: 0 },
      pendingHuman: null,
    } as never;
    const at = Date.parse("2026-01-01T00:00:02.500Z");
    expect(operatorView(state, { now: at }).at(-1)).toBe("stalls: copy running 2.5× its estimate (STALLED)");
    expect(operatorView(state, { now: at - 1_000 }).at(-1)).toBe(
      "metrics: decisions 0 · tool attempts 1 · first-replan success n/a · trusted carry n/a · retry exhaustion n/a",
    );
  });
});

describe("stall watch past the longest timer", () => {
  const longStep = { id: "load", goal: "Loading", estimateMs: 86_400_000 };

  it("does not report a step whose deadline is past 2^31 ms at once (Node fires such timers after 1 ms)", async () => {
    vi.useFakeTimers({ now: 0 });
    onTestFinished(() => void vi.useRealTimers());
    const rt = resolveOptions({ tools: [], planner: { plan: async () => ({ steps: [] }) } });
    const events: unknown[] = [];
    const config = { writer: (e: unknown) => events.push(e) };
    const policy = { stallFactor: 1000 } as never;
    const stop = watchForStall({ clock: rt.clock, policy }, config as never, longStep, 1, Date.now());
    await vi.advanceTimersByTimeAsync(60_000);
    expect(events).toEqual([]);
    await vi.advanceTimersByTimeAsync(86_400_000_000 - 60_001);
    expect(events).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(events).toEqual([
      {
        type: "step_stalled",
        stepId: "load",
        goal: "Loading",
        attempt: 1,
        estimateMs: 86_400_000,
        runningMs: 86_400_000_000,
      },
    ]);
    expect(stop()).toBe(true);
  });

  it("waits in timer-sized pieces on any clock", async () => {
    const clock = manualClock(0);
    const asked: number[] = [];
    const sleep = (ms: number, signal?: AbortSignal) => (asked.push(ms), clock.sleep(ms, signal));
    const events: unknown[] = [];
    const config = { writer: (e: unknown) => events.push(e) };
    const policy = { stallFactor: 100 } as never;
    watchForStall({ clock: { now: clock.now, sleep }, policy }, config as never, longStep, 1, 0);
    const MAX = 2 ** 31 - 1;
    for (let i = 0; i < 4; i++) await clock.advance(MAX);
    expect(events).toEqual([]);
    expect(asked).toEqual([MAX, MAX, MAX, MAX, 8_640_000_000 - 4 * MAX]);
    await clock.advance(8_640_000_000 - 4 * MAX);
    expect(events).toHaveLength(1);
  });

  it("the default clock's sleep chains timers past 2^31 ms", async () => {
    vi.useFakeTimers({ now: 0 });
    onTestFinished(() => void vi.useRealTimers());
    const rt = resolveOptions({ tools: [], planner: { plan: async () => ({ steps: [] }) } });
    let woke = false;
    void rt.clock.sleep(3_000_000_000).then(() => (woke = true));
    await vi.advanceTimersByTimeAsync(2_999_999_999);
    expect(woke).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(woke).toBe(true);
  });
});

/**
 * How a worker hears an operator's stop without pausing the run: the announcement, the poll behind
 * it, and what the executor then reads from memory. The table is replaced by a map here; the worker
 * tests run the same watch over PostgreSQL.
 */
import { describe, expect, it } from "vitest";
import { openStopWatch } from "../../src/worker/stop-watch.js";
import { STOP_CHANNEL, type PendingStop } from "../../src/worker/thread-locks.js";

function fakes() {
  const rows = new Map<string, PendingStop>();
  const noticed: string[] = [];
  const handlers = new Map<string, (payload: string) => void>();
  const reads: string[][] = [];
  const locks = {
    stopRequests: async (ids: string[]) => {
      reads.push(ids);
      return new Map([...rows].filter(([id]) => ids.includes(id)));
    },
    noticeStop: async (id: string) => {
      noticed.push(id);
      rows.set(id, { ...rows.get(id)!, noticed: true });
    },
  };
  const listener = { on: (channel: string, handler: (payload: string) => void) => handlers.set(channel, handler) };
  return { rows, noticed, handlers, reads, locks, listener };
}

const flush = () => new Promise((r) => setTimeout(r, 0));
const at = () => Date.parse("2026-01-01T00:00:00Z");

describe("the stop watch", () => {
  it("an announced stop for a followed thread is in memory at once, marked noticed; others are not read", async () => {
    const f = fakes();
    const watch = openStopWatch(f.listener, f.locks, { pollMs: 60_000, now: at });
    const control = await watch.follow("t1");
    expect(control.wanted()).toBeUndefined();
    control.pause();
    expect(control.wanted()).toEqual({ kind: "pause" });

    f.rows.set("other", { noticed: false });
    f.handlers.get(STOP_CHANNEL)!("other");
    f.rows.set("t1", { reason: "deploy", noticed: false });
    f.handlers.get(STOP_CHANNEL)!("t1");
    await flush();
    // A stop wins over a pause: the run ends `stopped`, not handed back to the queue.
    expect(control.wanted()).toEqual({
      kind: "stop",
      stop: { requestedAt: "2026-01-01T00:00:00.000Z", reason: "deploy" },
    });
    expect(f.noticed).toEqual(["t1"]);
    expect(f.reads).toEqual([["t1"], ["t1"]]);
    watch.close();
  });

  it("a stop that was never announced (the listening connection dropped) is heard by the poll", async () => {
    const f = fakes();
    const watch = openStopWatch(f.listener, f.locks, { pollMs: 5, now: at });
    const control = await watch.follow("t2");
    f.rows.set("t2", { noticed: false });
    while (!control.stop) await new Promise((r) => setTimeout(r, 5));
    expect(control.stop).toEqual({ requestedAt: "2026-01-01T00:00:00.000Z" });
    expect(f.noticed).toEqual(["t2"]);
    control.release();
    const before = f.reads.length;
    await new Promise((r) => setTimeout(r, 30));
    // Nothing followed: the poll reads nothing.
    expect(f.reads.slice(before)).toEqual([]);
    watch.close();
  });
});

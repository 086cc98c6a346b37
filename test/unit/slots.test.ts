import { describe, expect, it } from "vitest";
import { openSlots } from "../../src/worker/slots.js";

describe("a worker's slots", () => {
  it("hands out `size` slots, gives a freed one to the first waiter, and times a waiter out", async () => {
    const slots = openSlots(2);
    const a = await slots.acquire(1_000);
    const b = await slots.acquire(1_000);
    const order: string[] = [];
    const c = slots.acquire(60_000).then((slot) => (order.push("c"), slot));
    const d = slots.acquire(60_000).then((slot) => (order.push("d"), slot));
    // No slot frees up within 5 ms: the job goes back to the queue.
    expect(await slots.acquire(5)).toBeUndefined();
    a!();
    a!(); // releasing twice frees one slot, not two
    const gotC = await c;
    expect(order).toEqual(["c"]);
    b!();
    const gotD = await d;
    expect(order).toEqual(["c", "d"]);
    gotC!();
    gotD!();
    // Both free again: two at once, not three.
    const [x, y] = [await slots.acquire(1_000), await slots.acquire(1_000)];
    expect([typeof x, typeof y, await slots.acquire(5)]).toEqual(["function", "function", undefined]);
  });
});

/**
 * An empty channel of the state throws one shared `EmptyChannelError` (runtime/checked-channel.ts
 * `EMPTY`): LangGraph catches it by name on every read of an empty channel, and a run reads its
 * empty channels at every step.
 */
import { EmptyChannelError } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { CheckedChannel, EMPTY } from "../../src/runtime/checked-channel.js";
import { CheckedDeltaChannel } from "../../src/runtime/delta-channel.js";

const thrown = (read: () => unknown) => {
  try {
    read();
  } catch (error) {
    return error;
  }
  return "nothing thrown";
};

describe("an empty channel", () => {
  it("a replacing channel: get and checkpoint throw the one EmptyChannelError until written", () => {
    const channel = new CheckedChannel<number>("n", z.number(), (_, b) => b);
    const [first, second, stored] = [
      thrown(() => channel.get()),
      thrown(() => channel.get()),
      thrown(() => channel.checkpoint()),
    ];
    expect(first).toBeInstanceOf(EmptyChannelError);
    expect((first as Error).name).toBe("EmptyChannelError");
    expect([first === EMPTY, second === EMPTY, stored === EMPTY, channel.isAvailable()]).toEqual([
      true,
      true,
      true,
      false,
    ]);
    channel.update([7]);
    expect([channel.get(), channel.checkpoint(), channel.isAvailable()]).toEqual([7, 7, true]);
    expect(thrown(() => channel.fromCheckpoint(undefined).get())).toBe(EMPTY);
  });

  it("a delta channel: get throws the one EmptyChannelError until written", () => {
    const channel = new CheckedDeltaChannel<number[], number>(
      "xs",
      z.number(),
      (a, w) => [...a, ...w],
      () => [],
    );
    expect(thrown(() => channel.get())).toBe(EMPTY);
    channel.update([1, 2]);
    expect(channel.get()).toEqual([1, 2]);
  });
});

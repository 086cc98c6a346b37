/**
 * The signal LangGraph is given for a run (graph/run-config.ts `langGraphSignal`): one that never
 * aborts where the caller's or a parent runnable's signal could reach LangGraph (which would end the
 * run at once, not at a step boundary), none for a run with neither.
 */
import "@langchain/langgraph";
import { AsyncLocalStorageProviderSingleton } from "@langchain/core/singletons";
import { describe, expect, it } from "vitest";
import { langGraphSignal } from "../../src/graph/run-config.js";

describe("langGraphSignal", () => {
  it("a top-level run without a signal: none", () => {
    expect(langGraphSignal(undefined)).toBeUndefined();
    expect(langGraphSignal({ configurable: { thread_id: "t" } })).toBeUndefined();
  });

  it("the caller's signal: a signal of its own, which the caller's abort does not abort", () => {
    const caller = new AbortController();
    const given = langGraphSignal({ signal: caller.signal });
    caller.abort();
    expect([given === undefined, given === caller.signal, given?.aborted]).toEqual([false, false, false]);
  });

  it("inside a parent runnable with a signal: a signal of its own, which the parent's abort does not abort", async () => {
    const parent = new AbortController();
    const given = await new Promise<AbortSignal | undefined>((resolve) =>
      AsyncLocalStorageProviderSingleton.runWithConfig({ signal: parent.signal }, () => resolve(langGraphSignal({}))),
    );
    parent.abort();
    expect([given === undefined, given === parent.signal, given?.aborted]).toEqual([false, false, false]);
  });
});

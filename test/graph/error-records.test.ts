/**
 * What a tool throws is stored as a record (docs/architecture.md "State and channels"): whatever
 * the thrown value holds — a NaN Retry-After, a BigInt, a cycle, a megabyte of text — the record
 * is JSON within the limits, and the thread stays readable and resumable.
 */
import { describe, expect, it } from "vitest";
import { AssumptionBrokenError, TransientError, type PlanDraft } from "../../src/index.js";
import { LIMITS } from "../../src/plan/schema/primitives.js";
import { brief, harness, scriptedTool } from "../helpers/graph.js";

const oneStep: PlanDraft = {
  steps: [{ id: "a", goal: "A", tool: "t", retry: { maxAttempts: 3, backoff: "fixed", initialDelayMs: 250 } }],
};

describe("error records", () => {
  it.each([
    ["NaN (a Retry-After given as an HTTP date)", Number.NaN],
    ["Infinity", Number.POSITIVE_INFINITY],
    ["negative", -5_000],
  ])("ignores a retryAfterMs that is %s and waits the policy's backoff", async (_, retryAfterMs) => {
    const t = scriptedTool("t", [new TransientError("slow down", { retryAfterMs }), { ok: true }]);
    const h = harness(oneStep, [t]);
    const out = await h.run();
    expect(out.status).toBe("completed");
    expect(brief(out.decisions)).toEqual(["a: transient → retry [transient.retry]"]);
    expect(h.clock.sleeps).toEqual([250]);
    expect((await h.state()).status).toBe("completed");
  });

  it("honours a finite retryAfterMs, up to a day", async () => {
    const t = scriptedTool("t", [
      new TransientError("later", { retryAfterMs: 1_500 }),
      new TransientError("much later", { retryAfterMs: 10 * 86_400_000 }),
      { ok: true },
    ]);
    const h = harness(oneStep, [t]);
    expect((await h.run()).status).toBe("completed");
    expect(h.clock.sleeps).toEqual([1_500, 86_400_000]);
  });

  it("ignores a NaN retryAfterMs on a thrown plain object too", async () => {
    const t = scriptedTool("t", [
      () => {
        throw { name: "TransientError", message: "busy", retryAfterMs: Number.NaN };
      },
      { ok: true },
    ]);
    const h = harness(oneStep, [t]);
    expect((await h.run()).status).toBe("completed");
    expect(h.clock.sleeps).toEqual([250]);
  });

  it("stores BigInt evidence as a string and keeps the thread readable", async () => {
    const t = scriptedTool("t", [new AssumptionBrokenError("stock", "out of stock", { evidence: { units: 10n } })]);
    const h = harness({ ...oneStep, assumptions: [{ id: "stock", statement: "in stock" }] }, [t]);
    const out = await h.run();
    expect(out.status).toBe("awaiting_human");
    const state = await h.state();
    expect(state.steps.a.error).toEqual({
      name: "AssumptionBrokenError",
      message: "out of stock",
      assumptionId: "stock",
      evidence: { units: "10" },
    });
    // The thread carries on: a person's answer is taken.
    const { Command } = await import("@langchain/langgraph");
    const after = (await h.graph.invoke(new Command({ resume: { action: "abort" } }), h.config)) as { status: string };
    expect(after.status).toBe("aborted");
  });

  it("stores circular evidence with the cycle named, in the same invoke", async () => {
    const evidence: Record<string, unknown> = { order: "A-1" };
    evidence.self = evidence;
    const t = scriptedTool("t", [new AssumptionBrokenError("stock", "out of stock", { evidence })]);
    const h = harness({ ...oneStep, assumptions: [{ id: "stock", statement: "in stock" }] }, [t]);
    const out = await h.run();
    expect(out.status).toBe("awaiting_human");
    expect(out.steps.a.error.evidence).toEqual({ order: "A-1", self: "[Circular]" });
  });

  it("caps a huge error message and evidence at the documented limits", async () => {
    const huge = "x".repeat(1_200_000);
    const t = scriptedTool("t", [new AssumptionBrokenError("stock", huge, { evidence: { body: huge } })]);
    const h = harness({ ...oneStep, assumptions: [{ id: "stock", statement: "in stock" }] }, [t]);
    const out = await h.run();
    expect(out.status).toBe("awaiting_human");
    const error = out.steps.a.error;
    expect(error.message).toBe(`${"x".repeat(LIMITS.maxErrorMessageLength)}… [1,200,000 characters, cut]`);
    expect(typeof error.evidence).toBe("string");
    expect(error.evidence.startsWith('{"body":"xxx')).toBe(true);
    expect(error.evidence).toBe(
      `{"body":"${"x".repeat(LIMITS.maxErrorMessageLength - 9)}… [evidence over 64,000 bytes of JSON, cut]`,
    );
    expect(Buffer.byteLength(JSON.stringify(error.evidence))).toBeLessThanOrEqual(LIMITS.maxJsonBytes);
    // Every copy of the message in state is bounded: the whole state stays far below the 1.2 MB thrown.
    expect(JSON.stringify(await h.state()).length).toBeLessThan(200_000);
  });
});

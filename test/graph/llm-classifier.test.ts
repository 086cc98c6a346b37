/**
 * `llmClassifier`: consulted for failures the rules call `unknown`. When it cannot answer — auth,
 * quota, retries spent, an answer outside its schema — the rule's verdict stands, the decision's
 * reason says why, and every model call is in `usage` (failed ones with an error id).
 */
import { Command } from "@langchain/langgraph";
import { describe, expect, it, onTestFinished } from "vitest";
import { llmClassifier } from "../../src/planners/llm-classifier.js";
import { instantBackoff, ScriptedChatModel } from "../helpers/fake-model.js";
import { brief, harness, httpError, scriptedTool } from "../helpers/graph.js";

const plan = { steps: [{ id: "w", goal: "W", tool: "work" }] };
const broken = () => scriptedTool("work", [new Error("stream ended unexpectedly"), { ok: true }]);
const RULE_REASON = "w: Error: stream ended unexpectedly; no rule recognised this failure";
const FAILED = `${RULE_REASON}; the LLM classifier failed:`;
const AT = "2026-01-01T00:00:00.000Z";
const ERROR_ID = /^err_[0-9a-f]{8}$/;
const deviation = { kind: "error" as const, stepId: "w", attempt: 1, message: "w: Error: stream ended unexpectedly" };
const quotaError = () =>
  Object.assign(httpError(429, "You exceeded your current quota"), { code: "insufficient_quota" });
const retryVerdict = { failureClass: "transient", action: "retry", reason: "blip" };

/** A usage entry as the graph records it: an answered call by default, a failed one with `errorId`. */
const used = (extra: Record<string, unknown> = {}) => ({
  purpose: "classify",
  model: "fake-planner-1",
  inputTokens: 1000,
  outputTokens: 200,
  latencyMs: 5,
  cost: 0.0036,
  at: AT,
  ...extra,
});
const failedCall = () => used({ inputTokens: 0, outputTokens: 0, cost: 0, errorId: expect.stringMatching(ERROR_ID) });

function classifier(model: ScriptedChatModel, maxRetries?: number) {
  let now = Date.parse(AT);
  // Each read of the clock moves it 5 ms, so latencies are exact and not zero.
  const calls = { now: () => (now += 5), ...(maxRetries !== undefined ? { maxRetries } : {}) };
  return llmClassifier({ model, prices: { "fake-planner-1": { input: 2, output: 8 } }, calls });
}

describe("llmClassifier", () => {
  it("reclassifies an unknown failure, logged with rule llm.classifier and the model's reason", async () => {
    const reason = "socket closed mid-response; safe to retry";
    const model = new ScriptedChatModel([{ failureClass: "transient", action: "retry", reason }]);
    const out = await harness(plan, [broken()], { classifier: classifier(model) }).run();
    expect(out.status).toBe("completed");
    expect(out.decisions[0]).toMatchObject({
      failureClass: "transient",
      action: "retry",
      rule: "llm.classifier",
      by: "llm",
      reason: `LLM classifier: ${reason}`,
    });
    expect(out.usage).toEqual([used()]);
  });

  it("is not consulted for failures the rules recognise", async () => {
    const model = new ScriptedChatModel([{ failureClass: "unknown", action: "abort", reason: "x" }]);
    await harness(plan, [scriptedTool("work", [httpError(404)])], { classifier: classifier(model) }).run();
    expect(model.received).toHaveLength(0);
  });

  it("an authentication error is not retried: the rule's escalation stands; reason and usage say why", async () => {
    const model = new ScriptedChatModel([httpError(401, "invalid api key")]);
    const h = harness(plan, [broken()], { classifier: classifier(model) });
    const out = await h.run();
    expect(model.received).toHaveLength(1);
    expect(out.usage).toEqual([failedCall()]);
    expect(brief(out.decisions)).toEqual(["w: unknown → escalate [unknown.escalate]"]);
    expect(out.decisions[0].by).toBeUndefined();
    const errorId = out.usage[0].errorId;
    expect(out.decisions[0].reason).toBe(
      `${FAILED} model call authentication failed (401): invalid api key [${errorId}]`,
    );
    expect(out.status).toBe("awaiting_human");
    const after = await h.run(new Command({ resume: { action: "abort" } }));
    expect(after.status).toBe("aborted");
  });

  it("an exhausted quota is not retried and is named in the decision", async () => {
    const model = new ScriptedChatModel([quotaError()]);
    const out = await harness(plan, [broken()], { classifier: classifier(model) }).run();
    expect(model.received).toHaveLength(1);
    const errorId = out.usage[0].errorId;
    expect(out.decisions[0].reason).toBe(
      `${FAILED} model call quota exhausted (429): You exceeded your current quota [${errorId}]`,
    );
    expect(out.usage).toEqual([failedCall()]);
  });

  it("a transient model error is retried; every attempt is in usage", async () => {
    const backoff = instantBackoff();
    onTestFinished(backoff.restore);
    const model = new ScriptedChatModel([httpError(503, "overloaded"), retryVerdict]);
    const out = await harness(plan, [broken()], { classifier: classifier(model) }).run();
    expect(model.received).toHaveLength(2);
    expect(backoff.delays).toEqual([1000]);
    expect(brief(out.decisions)).toEqual(["w: transient → retry [llm.classifier]"]);
    expect(out.usage).toEqual([failedCall(), used()]);
  });

  it("when the retries are spent, the reason says after how many attempts", async () => {
    const backoff = instantBackoff();
    onTestFinished(backoff.restore);
    const model = new ScriptedChatModel([httpError(503, "overloaded")]);
    const out = await harness(plan, [broken()], { classifier: classifier(model, 1) }).run();
    expect(model.received).toHaveLength(2);
    expect(out.usage).toEqual([failedCall(), failedCall()]);
    const errorId = out.usage[1].errorId;
    expect(out.decisions[0].reason).toBe(`${FAILED} model call failed after 2 attempts (503): overloaded [${errorId}]`);
  });

  it("cannot choose an action outside the ladder: the rule's escalation stands, the reason says why", async () => {
    const model = new ScriptedChatModel([{ failureClass: "unknown", action: "delete_database", reason: "x" }]);
    const work = scriptedTool("work", [new Error("stream ended unexpectedly")]);
    const h = harness(plan, [work], { classifier: classifier(model) });
    const out = await h.run();
    expect(brief(out.decisions)).toEqual(["w: unknown → escalate [unknown.escalate]"]);
    const ladder = '"retry"|"fallback"|"replan_local"|"replan_global"|"skip"|"escalate"|"abort"';
    expect(out.decisions[0].reason).toBe(
      `${FAILED} its answer does not fit the schema (action: Invalid option: expected one of ${ladder})`,
    );
    // The call was answered and paid for: it is in usage even though its answer was unusable.
    expect(out.usage).toEqual([used()]);
    const after = await h.run(new Command({ resume: { action: "abort" } }));
    expect(after.status).toBe("aborted");
  });

  it("answers with the failure and every call, for the classifier node to record", async () => {
    const auth = classifier(new ScriptedChatModel([httpError(403, "forbidden")]));
    const answer = await auth.classify({ deviation, allowed: ["retry", "escalate"] });
    const { purpose: _p, at: _a, ...call } = failedCall();
    expect(answer).toEqual({
      failure: {
        message: expect.stringMatching(/^model call authentication failed \(403\): forbidden \[err_[0-9a-f]{8}\]$/),
        errorId: expect.stringMatching(ERROR_ID),
      },
      usage: [call],
    });
    if (!("failure" in answer)) throw new Error("expected a failure");
    expect(answer.failure.message.endsWith(`[${answer.failure.errorId}]`)).toBe(true);
    expect(answer.usage[0]!.errorId).toBe(answer.failure.errorId);

    const fine = classifier(new ScriptedChatModel([retryVerdict]));
    const { purpose: _q, at: _b, ...answered } = used();
    expect(await fine.classify({ deviation, allowed: ["retry", "escalate"] })).toEqual({
      verdict: { failureClass: "transient", action: "retry", reason: "LLM classifier: blip" },
      usage: [answered],
    });
  });
});

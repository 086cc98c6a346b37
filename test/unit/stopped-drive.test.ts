import { describe, expect, it } from "vitest";
import { carriedDrive, graphsOf, keepStopped, stoppedDrive } from "../../src/middleware/stopped-drive.js";
import { memoryJournal } from "../../src/storage/journal.js";
import { decide } from "../../src/policy/ladder/decide.js";

const retry = decide("transient.retry", {
  after: -1,
  stepId: "rate",
  attempt: 1,
  failureClass: "transient",
  action: "retry",
  delayMs: 200,
  reason: "rate service busy; attempt 2/3 in 200 ms",
  planVersion: 1,
  at: "1970-01-01T00:00:00.000Z",
});
const failed = {
  status: "pending" as const,
  attempts: 1,
  cost: 2,
  error: { name: "TransientError", message: "rate service busy" },
};
const plan = (version: number) => ({ version, steps: [], assumptions: [] });
const call = { tool: "fetch_rate", args: {}, at: "1970-01-01T00:00:00.000Z" };
/** The model's tool call `call_1` of step `rate`, in an agent of the root graph. */
const of = { stepId: "rate", callId: "call_1", graphs: "tools" };

describe("a stopped drive kept in the run's journal", () => {
  it("names the graphs a call runs in without their task ids", () => {
    expect(graphsOf("weather:1f0e-aa|tools:77b2")).toBe("weather|tools");
    expect(graphsOf("")).toBe("");
    expect(graphsOf(undefined)).toBe("");
  });

  it("is carried on only from the checkpoint it began from: same plan version, same attempts", async () => {
    const journal = memoryJournal();
    const drive = stoppedDrive(
      { planVersion: 1, from: 0, carried: undefined },
      { run: failed, decisions: [retry], charged: 2 },
    );
    expect(drive.run).toEqual({ ...failed, nextDelayMs: 200 });
    await keepStopped(journal, "t", of, call, drive);
    expect(await carriedDrive(journal, "t", { plan: plan(1), steps: {} }, of)).toEqual(drive);
    // The step's attempts moved on (the resumed call landed): the entry is inert.
    const moved = { rate: { ...failed, status: "failed" as const, attempts: 2 } };
    expect(await carriedDrive(journal, "t", { plan: plan(1), steps: moved }, of)).toBeUndefined();
    expect(await carriedDrive(journal, "t", { plan: plan(2), steps: {} }, of)).toBeUndefined();
    expect(await carriedDrive(journal, "other", { plan: plan(1), steps: {} }, of)).toBeUndefined();
    // Another call of the step (another tool call of the model, or the same step of another agent on the
    // thread) carries nothing on.
    const fresh = { plan: plan(1), steps: {} };
    expect(await carriedDrive(journal, "t", fresh, { ...of, callId: "call_2" })).toBeUndefined();
    expect(await carriedDrive(journal, "t", fresh, { ...of, graphs: "weather|tools" })).toBeUndefined();
    // Kept with a result, it is not a call in doubt.
    expect(await journal.unsettled("t")).toEqual([]);
  });

  it("a second stop adds its attempts' decisions and charge to the first's", () => {
    const first = stoppedDrive(
      { planVersion: 1, from: 0, carried: undefined },
      { run: failed, decisions: [retry], charged: 2 },
    );
    const again = { ...retry, attempt: 2, delayMs: 400 };
    const second = stoppedDrive(
      { planVersion: 1, from: 0, carried: first },
      { run: { ...failed, attempts: 2, cost: 4 }, decisions: [again], charged: 2 },
    );
    expect(second).toEqual({
      planVersion: 1,
      from: 0,
      run: { ...failed, attempts: 2, cost: 4, nextDelayMs: 400 },
      decisions: [retry, again],
      charged: 4,
    });
  });

  it("an entry that does not parse, or a journal that cannot answer, carries nothing on", async () => {
    const journal = memoryJournal();
    const key = "stopped-drive:rate:tools:call_1";
    await journal.intent("t", { ...call, stepId: "rate", key, attempt: 1 });
    await journal.result("t", key, { ok: true, output: { run: "not a record" } });
    expect(await carriedDrive(journal, "t", { plan: plan(1), steps: {} }, of)).toBeUndefined();
    journal.lookup = () => Promise.reject(new Error("SQLITE_BUSY: database is locked"));
    expect(await carriedDrive(journal, "t", { plan: plan(1), steps: {} }, of)).toBeUndefined();
  });
});

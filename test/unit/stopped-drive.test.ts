import { describe, expect, it } from "vitest";
import { carriedDrive, keepStopped, stoppedDrive } from "../../src/middleware/stopped-drive.js";
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
const call = { stepId: "rate", tool: "fetch_rate", args: {}, at: "1970-01-01T00:00:00.000Z" };

describe("a stopped drive kept in the run's journal", () => {
  it("is carried on only from the checkpoint it began from: same plan version, same attempts", async () => {
    const journal = memoryJournal();
    const drive = stoppedDrive(
      { planVersion: 1, from: 0, carried: undefined },
      { run: failed, decisions: [retry], charged: 2 },
    );
    expect(drive.run).toEqual({ ...failed, nextDelayMs: 200 });
    await keepStopped(journal, "t", call, drive);
    expect(await carriedDrive(journal, "t", { plan: plan(1), steps: {} }, "rate")).toEqual(drive);
    // The step's attempts moved on (the resumed call landed): the entry is inert.
    const moved = { rate: { ...failed, status: "failed" as const, attempts: 2 } };
    expect(await carriedDrive(journal, "t", { plan: plan(1), steps: moved }, "rate")).toBeUndefined();
    expect(await carriedDrive(journal, "t", { plan: plan(2), steps: {} }, "rate")).toBeUndefined();
    expect(await carriedDrive(journal, "other", { plan: plan(1), steps: {} }, "rate")).toBeUndefined();
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
    await journal.intent("t", { ...call, key: "stopped-drive:rate", attempt: 1 });
    await journal.result("t", "stopped-drive:rate", { ok: true, output: { run: "not a record" } });
    expect(await carriedDrive(journal, "t", { plan: plan(1), steps: {} }, "rate")).toBeUndefined();
    journal.lookup = () => Promise.reject(new Error("SQLITE_BUSY: database is locked"));
    expect(await carriedDrive(journal, "t", { plan: plan(1), steps: {} }, "rate")).toBeUndefined();
  });
});

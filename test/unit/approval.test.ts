import { describe, expect, it } from "vitest";
import {
  approvalOf,
  approvedKeyFor,
  approvedNumbering,
  undoApprovalOf,
  withoutApproval,
} from "../../src/policy/attempt/approval.js";

describe("a person's approval, one record", () => {
  it("is read from its one field, or from the two fields a checkpoint written before it holds", () => {
    expect(approvalOf({ approval: { key: "k", attempt: 2 } })).toEqual({ key: "k", attempt: 2 });
    expect(approvalOf({ approvedKey: "k", approvedAttempt: 2 })).toEqual({ key: "k", attempt: 2 });
    expect(approvalOf({ approvedKey: "k" })).toEqual({ key: "k" });
    // The one field wins over loose fields a record may still carry.
    expect(approvalOf({ approval: { key: "new" }, approvedKey: "old" })).toEqual({ key: "new" });
    expect([approvalOf({}), approvalOf(undefined), approvalOf({ approvedAttempt: 2 })]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("of an undo numbers its round with or without a key, in either shape", () => {
    expect(undoApprovalOf({ approval: { attempt: 3 } })).toEqual({ attempt: 3 });
    expect(undoApprovalOf({ approvedAttempt: 3 })).toEqual({ attempt: 3 });
    expect(undoApprovalOf({ approvedKey: "k:compensate", approvedAttempt: 3 })).toEqual({
      key: "k:compensate",
      attempt: 3,
    });
    expect(undoApprovalOf({ approvedKey: "k:compensate" })).toEqual({ key: "k:compensate", attempt: 0 });
    expect(undoApprovalOf({})).toBeUndefined();
  });

  it("is cleared in both shapes", () => {
    const run = { status: "pending", approval: { key: "k" }, approvedKey: "k", approvedAttempt: 1 };
    expect(withoutApproval(run)).toEqual({ status: "pending" });
  });

  it("numbers the approved call above the intent asked about, which a fork may have numbered above its own count", () => {
    expect(approvedNumbering({ key: "k", attempt: 2 }, 2)).toBe(3);
    expect(approvedNumbering({ key: "k", attempt: 1 }, 2)).toBe(2);
    expect(approvedNumbering({ key: "k" }, 2)).toBe(2);
    expect(approvedNumbering(undefined, 2)).toBe(2);
  });

  it("covers the intent asked about and those before it, not the approved call itself cut too", () => {
    expect(approvedKeyFor({ key: "k", attempt: 2 }, 2, 3)).toBe("k");
    expect(approvedKeyFor({ key: "k", attempt: 2 }, 3, 3)).toBeUndefined();
    // Without a number: an intent of an earlier attempt than the call's.
    expect(approvedKeyFor({ key: "k" }, 1, 2)).toBe("k");
    expect(approvedKeyFor({ key: "k" }, 2, 2)).toBeUndefined();
    expect(approvedKeyFor({ attempt: 2 }, 1, 3)).toBeUndefined();
    expect(approvedKeyFor(undefined, 1, 2)).toBeUndefined();
  });
});

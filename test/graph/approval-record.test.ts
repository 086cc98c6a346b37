/**
 * A person's approval of a call in doubt is one record on the step's run (`approval: { key, attempt }`),
 * and a checkpoint written before it — the run's `approvedKey` and `approvedAttempt` fields, in
 * test/fixtures/approval/main-approval.sqlite — still loads and resumes the same: exactly one more call
 * under the approved key.
 */
import { Command, MemorySaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { copyFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { approvalCharge, approvalDraft } from "../fixtures/approval/plan.js";
import { harness, type Loose } from "../helpers/graph.js";

const rules = (out: Loose) => out.decisions.map((d: Loose) => d.rule);

const dir = mkdtempSync(join(tmpdir(), "approval-record-"));
const opened: SqliteSaver[] = [];
afterAll(() => {
  for (const saver of opened) if (saver.db.open) saver.db.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A thread of the fixture, in a copy of its database, resumed by this release with a charge that answers. */
function fromFixture(threadId: "plain" | "fork") {
  const file = join(dir, `${threadId}.sqlite`);
  copyFileSync(fileURLToPath(new URL("../fixtures/approval/main-approval.sqlite", import.meta.url)), file);
  const saver = SqliteSaver.fromConnString(file);
  opened.push(saver);
  // The lease of the process that wrote it: on another host it would have run out.
  saver.db.prepare("DELETE FROM langgraph_replan_thread_claims").run();
  const charge = approvalCharge(0);
  return { charge, h: harness(approvalDraft, [charge], { checkpointer: saver, threadId }) };
}

describe("a person's approval of a call in doubt", () => {
  it("is one record on the step's run: the key and the journal attempt asked about, no loose fields", async () => {
    const charge = approvalCharge(1);
    const h = harness(approvalDraft, [charge], { checkpointer: new MemorySaver() });
    expect((await h.run()).status).toBe("awaiting_human");
    await h.graph.invoke(new Command({ resume: { action: "retry" } }), { ...h.config, interruptBefore: ["executor"] });
    const run = (await h.state()).steps.pay as Loose;
    expect(run.approval).toEqual({ key: charge.calls[0]!.key, attempt: 1 });
    expect(["approvedKey" in run, "approvedAttempt" in run]).toEqual([false, false]);
    const done = (await h.graph.invoke(null, h.config)) as Loose;
    expect([done.status, rules(done), charge.calls.length]).toEqual([
      "completed",
      ["effect.in-doubt", "human.effect-retry"],
      2,
    ]);
    expect("approval" in (await h.state()).steps.pay).toBe(false);
  });

  it("written the old way (approvedKey, approvedAttempt) still lets exactly one more call go out under the key", async () => {
    const { h, charge } = fromFixture("plain");
    const before = (await h.state()).steps.pay as Loose;
    expect([before.approvedKey, before.approvedAttempt, "approval" in before]).toEqual([
      "plain:e517a5b73f977c0f",
      1,
      false,
    ]);
    const done = (await h.graph.invoke(null, h.config)) as Loose;
    expect(done.status).toBe("completed");
    expect(charge.calls.map((c) => c.key)).toEqual(["plain:e517a5b73f977c0f"]);
    expect(done.facts.receipt.value).toBe("r-1");
    expect(rules(done)).toEqual(["effect.in-doubt", "human.effect-retry"]);
    const after = (await h.state()).steps.pay as Loose;
    expect(["approvedKey" in after, "approvedAttempt" in after, "approval" in after]).toEqual([false, false, false]);
  });

  it("written the old way on a fork, whose call in doubt another branch numbered higher, lets one call go out", async () => {
    const { h, charge } = fromFixture("fork");
    expect((await h.state()).steps.pay.approvedAttempt).toBe(2);
    const done = (await h.graph.invoke(null, h.config)) as Loose;
    expect(done.status).toBe("completed");
    expect(charge.calls.map((c) => c.key)).toEqual(["fork:e517a5b73f977c0f"]);
    expect(rules(done)).toEqual(["effect.in-doubt", "human.effect-retry"]);
  });
});

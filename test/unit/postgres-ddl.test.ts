/**
 * Side tables created on first use: two worker processes starting at once race on PostgreSQL's
 * catalog (`CREATE TABLE IF NOT EXISTS` fails in one of them with 23505 or 42P07 though the table is
 * there). The effect journal failed a side-effecting call on that race (the call escalated as an
 * unknown error); archive marks and status rows already took it as created.
 */
import { describe, expect, it } from "vitest";
import { postgresJournal } from "../../src/storage/journal-postgres.js";
import { createOnFirstUse } from "../../src/storage/postgres-ddl.js";

function fakeQuery(createFailsWith?: string) {
  const sql: string[] = [];
  let creates = 0;
  const query = async (text: string) => {
    sql.push(text.split(" ").slice(0, 2).join(" "));
    if (text.startsWith("CREATE") && createFailsWith && creates++ === 0)
      throw Object.assign(new Error("duplicate key value violates unique constraint"), { code: createFailsWith });
    return { rows: [] };
  };
  return { query, sql };
}

describe("a side table created on first use", () => {
  it.each(["23505", "42P07"])(
    "takes a race lost with %s as the table made beside it: the journal's intent is written",
    async (code) => {
      const db = fakeQuery(code);
      const journal = postgresJournal(db.query as never, "public");
      await journal.intent("t1", {
        key: "k",
        stepId: "pay",
        tool: "charge",
        args: {},
        attempt: 1,
        at: "2026-01-01T00:00:00Z",
      });
      await journal.lookup("t1", "k");
      expect(db.sql).toEqual(["CREATE TABLE", "INSERT INTO", "SELECT step_id,"]);
    },
  );

  it("throws any other error, and tries again on the next use", async () => {
    let calls = 0;
    const ensure = createOnFirstUse(async () => {
      calls += 1;
      if (calls === 1) throw Object.assign(new Error("permission denied"), { code: "42501" });
    }, "CREATE TABLE IF NOT EXISTS x (a int)");
    await expect(ensure()).rejects.toThrow("permission denied");
    await ensure();
    await ensure();
    expect(calls).toBe(2);
  });
});

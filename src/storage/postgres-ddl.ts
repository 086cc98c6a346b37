/**
 * A side table in PostgreSQL created on first use. Two processes running `CREATE TABLE IF NOT
 * EXISTS` at the same moment race on the catalog: one of them fails with a unique violation
 * (23505) or "already exists" (42P07) although the table is there. That failure is the table
 * created beside us, not an error; any other is thrown, and the next use tries again.
 */
const CREATED_BESIDE = new Set(["23505", "42P07"]);

export function createOnFirstUse(query: (sql: string) => Promise<unknown>, ddl: string): () => Promise<void> {
  let ready: Promise<void> | undefined;
  return () =>
    (ready ??= query(ddl).then(
      () => undefined,
      (error: { code?: string }) => {
        if (CREATED_BESIDE.has(String(error?.code))) return;
        ready = undefined;
        throw error;
      },
    ));
}

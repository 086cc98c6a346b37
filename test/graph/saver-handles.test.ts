/**
 * Pins what graph/saver-handles.ts reads off LangGraph's savers to hold a thread across
 * processes: if a checkpointer upgrade renames `SqliteSaver.db` or `PostgresSaver.pool`, runs on
 * those savers would silently fall back to the in-process hold; this test fails instead.
 */
import { MemorySaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { Pool } from "pg";
import { describe, expect, it } from "vitest";
import { saverStorage } from "../../src/graph/saver-handles.js";

describe("storage handles read off LangGraph's savers", () => {
  it("SqliteSaver: its better-sqlite3 database", () => {
    const saver = SqliteSaver.fromConnString(":memory:");
    const storage = saverStorage(saver);
    expect(storage?.kind).toBe("sqlite");
    expect(storage?.kind === "sqlite" && storage.db).toBe(saver.db);
    saver.db.close();
  });

  it("PostgresSaver: a lock pool with its pool's settings, one per saver pool (no connection opened)", async () => {
    const url = "postgresql://someone@127.0.0.1:1/db";
    const saver = PostgresSaver.fromConnString(url);
    const storage = saverStorage(saver);
    expect(storage?.kind).toBe("postgres");
    const pool = storage?.kind === "postgres" ? (storage.pool as unknown as { options: Record<string, unknown> }) : {};
    expect(pool).toMatchObject({ options: { connectionString: url, max: 100, allowExitOnIdle: true } });
    const again = saverStorage(saver);
    expect(again?.kind === "postgres" && again.pool).toBe(storage?.kind === "postgres" && storage.pool);
    await saver.end();
  });

  it("PostgresSaver: ending the saver's pool ends its lock pool, once, by promise or callback", async () => {
    const url = "postgresql://someone@127.0.0.1:1/db";
    const saver = PostgresSaver.fromConnString(url);
    const storage = saverStorage(saver);
    const lockPool = (storage?.kind === "postgres" ? storage.pool : {}) as { ending?: boolean };
    expect(lockPool.ending).toBe(false);
    await saver.end();
    expect(lockPool.ending).toBe(true);
    await expect(saver.end()).rejects.toThrow("Called end on pool more than once");

    const pool = new Pool({ connectionString: url });
    const other = saverStorage(new PostgresSaver(pool));
    expect(Object.keys(pool)).not.toContain("end");
    await new Promise<void>((done) => pool.end(() => done()));
    expect(other?.kind === "postgres" && (other.pool as unknown as { ending: boolean }).ending).toBe(true);
  });

  it("PostgresSaver on a pool already ended: no lock pool is made, its own connect refuses", async () => {
    const pool = new Pool({ connectionString: "postgresql://someone@127.0.0.1:1/db" });
    await pool.end();
    const storage = saverStorage(new PostgresSaver(pool));
    expect(storage?.kind === "postgres" && storage.pool).toBe(pool);
    await expect(pool.connect()).rejects.toThrow("Cannot use a pool after calling end on the pool");
  });

  it("other savers (MemorySaver): none, so the in-process hold is all there is", () => {
    expect(saverStorage(new MemorySaver())).toBe(undefined);
  });
});

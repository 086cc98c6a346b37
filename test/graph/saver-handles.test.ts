/**
 * Pins what graph/saver-handles.ts reads off LangGraph's savers to hold a thread across
 * processes: if a checkpointer upgrade renames `SqliteSaver.db` or `PostgresSaver.pool`, runs on
 * those savers would silently fall back to the in-process hold; this test fails instead.
 */
import { MemorySaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
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

  it("other savers (MemorySaver): none, so the in-process hold is all there is", () => {
    expect(saverStorage(new MemorySaver())).toBe(undefined);
  });
});

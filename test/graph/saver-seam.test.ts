/**
 * Pins src/storage/langgraph-savers.ts, the one file that reads LangGraph's SQL savers past their
 * public methods: every member it reads has, in the installed @langchain/langgraph-checkpoint-*
 * packages, the shape it assumes (an upgrade that renames or reshapes one fails here by name,
 * instead of runs silently falling back to the in-process hold or writing rows the saver cannot
 * read), savers are told apart by shape, and no other file in src reads those members.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { RunnableConfig } from "@langchain/core/runnables";
import { MemorySaver } from "@langchain/langgraph";
import { PostgresSaver } from "@langchain/langgraph-checkpoint-postgres";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { Pool } from "pg";
import { describe, expect, it } from "vitest";
import { postgresSaverHandle, sqliteSaverHandle } from "../../src/storage/langgraph-savers.js";
import { saverAdapter } from "../../src/storage/index.js";
import { KeyValueSaver } from "../helpers/key-value-saver.js";

const SEAM = "src/storage/langgraph-savers.ts";
const url = "postgresql://someone@127.0.0.1:1/db";

describe("what the seam reads off LangGraph's savers", () => {
  it("SqliteSaver: its better-sqlite3 database, and its own tables", () => {
    const saver = SqliteSaver.fromConnString(":memory:");
    const handle = sqliteSaverHandle(saver);
    expect(handle?.database).toBe(saver.db);
    expect(handle?.ownTables).toBe(true);
    handle?.setup();
    const tables = saver.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all();
    expect(tables).toEqual([{ name: "checkpoints" }, { name: "writes" }]);
    expect(postgresSaverHandle(saver)).toBe(undefined);
    saver.db.close();
  });

  it("PostgresSaver: a lock pool with its pool's settings, one per saver pool (no connection opened)", async () => {
    const saver = PostgresSaver.fromConnString(url, { schema: "other" });
    const handle = postgresSaverHandle(saver)!;
    expect([handle.schema, handle.ownTables, sqliteSaverHandle(saver)]).toEqual(["other", true, undefined]);
    const lockPool = handle.lockPool() as unknown as { options: Record<string, unknown> };
    expect(lockPool).toMatchObject({ options: { connectionString: url, max: 100, allowExitOnIdle: true } });
    expect(postgresSaverHandle(saver)!.lockPool()).toBe(lockPool);
    await saver.end();
  });

  it("PostgresSaver: ending the saver's pool ends its lock pool, once, by promise or callback", async () => {
    const saver = PostgresSaver.fromConnString(url);
    const lockPool = postgresSaverHandle(saver)!.lockPool() as unknown as { ending?: boolean };
    expect(lockPool.ending).toBe(false);
    await saver.end();
    expect(lockPool.ending).toBe(true);
    await expect(saver.end()).rejects.toThrow("Called end on pool more than once");

    const pool = new Pool({ connectionString: url });
    const other = postgresSaverHandle(new PostgresSaver(pool))!.lockPool() as unknown as { ending: boolean };
    expect(Object.keys(pool)).not.toContain("end");
    await new Promise<void>((done) => pool.end(() => done()));
    expect(other.ending).toBe(true);
  });

  it("PostgresSaver on a pool already ended: no lock pool is made, its own connect refuses", async () => {
    const pool = new Pool({ connectionString: url });
    await pool.end();
    expect(postgresSaverHandle(new PostgresSaver(pool))!.lockPool()).toBe(pool);
    await expect(pool.connect()).rejects.toThrow("Cannot use a pool after calling end on the pool");
  });

  it("PostgresSaver's serialisers build the rows the direct writes insert, column for column", async () => {
    const saver = PostgresSaver.fromConnString(url);
    const h = postgresSaverHandle(saver)!;
    const blobs = await h.dumpBlobs("t", "", { a: { n: 1 } }, { a: "2.x", b: "3.y" });
    expect(blobs.map((r) => r.map((v) => (v instanceof Uint8Array ? new TextDecoder().decode(v) : v)))).toEqual([
      ["t", "", "a", "2.x", "json", '{"n":1}'],
      ["t", "", "b", "3.y", "empty", undefined],
    ]);
    const writes = await h.dumpWrites("t", "", "c1", "task", [
      ["x", 1],
      ["__error__", "boom"],
    ]);
    expect(writes.map((r) => r.slice(0, 7))).toEqual([
      ["t", "", "c1", "task", 0, "x", "json"],
      ["t", "", "c1", "task", -1, "__error__", "json"],
    ]);
    const checkpoint = { v: 4, id: "c1", ts: "now", channel_values: { a: 1 }, channel_versions: {}, versions_seen: {} };
    expect(h.dumpCheckpoint(checkpoint)).toEqual({
      v: 4,
      id: "c1",
      ts: "now",
      channel_versions: {},
      versions_seen: {},
    });
    const metadata = { source: "loop", step: 3, parents: {} };
    expect(await h.dumpMetadata(metadata)).toEqual(metadata);
    expect(await h.loadMetadata(metadata)).toEqual(metadata);
    await saver.end();
  });
});

describe("savers are told apart by shape", () => {
  it("other savers have neither handle and get the adapter for any saver", () => {
    for (const saver of [new MemorySaver(), new KeyValueSaver()]) {
      expect([sqliteSaverHandle(saver), postgresSaverHandle(saver), saverAdapter(saver).name]).toEqual([
        undefined,
        undefined,
        "any saver",
      ]);
    }
  });

  it("a subclass that replaced the storage keeps the database claims, not the direct reads and writes", async () => {
    class OwnStorage extends SqliteSaver {
      override async getTuple(config: RunnableConfig) {
        return super.getTuple(config);
      }
    }
    const own = new OwnStorage(SqliteSaver.fromConnString(":memory:").db);
    expect(sqliteSaverHandle(own)?.ownTables).toBe(false);
    expect([saverAdapter(own).claims, saverAdapter(own).direct]).toEqual(["database", {}]);
    class Renamed extends SqliteSaver {}
    const renamed = new Renamed(own.db);
    expect(Object.keys(saverAdapter(renamed).direct)).toEqual(["getDeltaChannelHistory"]);
    const withHistory = Object.create(renamed) as SqliteSaver;
    Object.defineProperty(withHistory, "getDeltaChannelHistory", { value: async () => ({}) });
    expect(sqliteSaverHandle(withHistory)?.ownTables).toBe(false);
    own.db.close();

    class Elsewhere extends PostgresSaver {
      override async putWrites(...args: Parameters<PostgresSaver["putWrites"]>) {
        return super.putWrites(...args);
      }
    }
    const pg = new Elsewhere(new Pool({ connectionString: url }));
    expect([postgresSaverHandle(pg)?.ownTables, Object.keys(saverAdapter(pg).direct)]).toEqual([false, []]);
    await pg.end();
    const plain = PostgresSaver.fromConnString(url);
    expect(Object.keys(saverAdapter(plain).direct)).toEqual(["getDeltaChannelHistory", "put", "putWrites"]);
    await plain.end();
  });
});

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? sources(path) : path.endsWith(".ts") ? [path] : [];
  });
}

describe("the seam is the only reader", () => {
  it("no file in src but the seam reads a LangGraph saver's db, pool, SQL or private methods", () => {
    const members =
      /\b(_dumpBlobs|_dumpWrites|_dumpCheckpoint|_dumpMetadata|_loadMetadata|_loadBlobs|_loadWrites|_loadCheckpoint|_searchWhere|SQL_STATEMENTS|migratePendingSends|isSetup)\b|\.(db|pool)\b/;
    const readers = sources("src").filter((file) => members.test(readFileSync(file, "utf8")));
    expect(readers).toEqual([SEAM]);
  });

  it("no saver, model or pool is recognised by its class name in the storage and graph code", () => {
    const byName = [...sources("src/storage"), ...sources("src/graph")].filter((file) =>
      /constructor\??\.name/.test(readFileSync(file, "utf8")),
    );
    expect(byName).toEqual([]);
  });
});

/**
 * Replan memory across processes: two workers share one PostgreSQL database (PostgresStore for
 * memory, PostgresSaver for checkpoints). The first pays for the replan; the second, a separate
 * process with the same fault, reuses the first one's fix without calling the planner.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPostgres, type PgServer } from "./helpers/postgres.js";

const worker = resolve(import.meta.dirname, "memory-worker.ts");
let pg: PgServer;

beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);
afterAll(() => pg?.stop());

function run(args: string[]) {
  return new Promise<{ code: number | null; out: string; err: string }>((ok) => {
    const child = spawn(process.execPath, ["--import", "tsx", worker, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += String(d)));
    child.stderr.on("data", (d) => (err += String(d)));
    child.on("exit", (code) => ok({ code, out, err }));
  });
}

describe("replan memory on PostgresStore across processes", () => {
  it("the second process reuses the replacement the first one saved: one planner call in all", async () => {
    const first = await run([pg.url, "A", "A-100"]);
    expect(first.err).toBe("");
    const a = JSON.parse(first.out.trim().split("\n").pop()!);
    expect(a.status).toBe("completed");
    expect(a.replanCalls).toBe(1);
    const key = a.replans[0].memoryKey;
    expect(key).toMatch(/^primary_up:[0-9a-f]{16}$/);
    expect(a.replans).toEqual([{ source: "planner", memoryKey: key, newSteps: ["mirror"] }]);
    expect(a.entries).toHaveLength(1);
    expect(a.entries[0]).toMatchObject({ key, uses: 0, successes: 0 });
    expect(JSON.stringify(a.entries)).not.toContain("A-100");

    const second = await run([pg.url, "B", "B-200"]);
    expect(second.err).toBe("");
    const b = JSON.parse(second.out.trim().split("\n").pop()!);
    expect(b.status).toBe("completed");
    expect(b.replanCalls).toBe(0);
    expect(b.mirrorCalls).toEqual([{ applicant_id: "B-200" }]);
    const revision = a.entries[0].revision;
    expect(b.replans).toEqual([{ source: "memory", memoryKey: key, memoryRevision: revision, newSteps: ["s1"] }]);
    expect(b.entries).toHaveLength(1);
    expect(b.entries[0]).toMatchObject({ key, revision, uses: 1, successes: 1 });

    // Two more processes reuse it at the same time: each outcome is its own row, none is lost.
    const [c, d] = await Promise.all([run([pg.url, "C", "C-300"]), run([pg.url, "D", "D-400"])]);
    expect([c.err, d.err]).toEqual(["", ""]);
    const last = [c, d].map((x) => JSON.parse(x.out.trim().split("\n").pop()!));
    expect(last.map((x) => [x.status, x.replanCalls])).toEqual([
      ["completed", 0],
      ["completed", 0],
    ]);
    const settled = (await run([pg.url, "E", "E-500"])).out.trim().split("\n").pop()!;
    expect(JSON.parse(settled).entries).toEqual([expect.objectContaining({ key, revision, uses: 4, successes: 4 })]);
  }, 180_000);
});

/**
 * PostgreSQL across processes: two workers share one PostgresSaver database. The first is
 * killed mid-run; the second, a separate process, resumes the same thread and finishes it.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startPostgres, type PgServer } from "./helpers/postgres.js";

const worker = resolve(import.meta.dirname, "chaos-worker.ts");
let pg: PgServer;
const dir = mkdtempSync(join(tmpdir(), "pg-workers-"));

beforeAll(async () => {
  pg = await startPostgres();
}, 120_000);
afterAll(() => {
  pg?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function run(args: string[], env: Record<string, string> = {}) {
  return new Promise<{ signal: string | null; out: string; err: string }>((ok) => {
    const child = spawn(process.execPath, ["--import", "tsx", worker, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += String(d)));
    child.stderr.on("data", (d) => (err += String(d)));
    child.on("exit", (_code, signal) => ok({ signal, out, err }));
  });
}

describe("PostgresSaver across processes", () => {
  it("a second worker resumes the thread the first one was killed in, and finishes it", async () => {
    const effects = join(dir, "effects.sqlite");
    const first = await run(["chain", pg.url, effects], { CHAOS_KILL: "tool:15" });
    expect(first.signal).toBe("SIGKILL");
    const second = await run(["chain", pg.url, effects]);
    const summary = JSON.parse(second.out.trim().split("\n").pop()!);
    expect(summary.status).toBe("completed");
    expect(Object.values(summary.steps).every((s) => s === "succeeded")).toBe(true);
    expect(Object.keys(summary.steps)).toHaveLength(24);
    expect(summary.facts.v23).toEqual({ value: 46, label: "trusted" });
    expect(summary.effects).toEqual([{ key: "chaos-chain:3680ebe5fc30cb3f", what: "notify:12", commits: 1 }]);
    // The second worker did not redo what the first had checkpointed.
    expect(summary.calls).toEqual([{ key: "chaos-chain:3680ebe5fc30cb3f", n: 1 }]);
  }, 180_000);
});

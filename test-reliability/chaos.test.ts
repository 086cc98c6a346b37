/**
 * Kill and resume: every scenario is SIGKILLed at seeded points — inside tool calls, inside
 * checkpoint writes, and at random times — then resumed in a fresh process. Each must end with
 * the same status, facts, labels, decisions and step records as an uninterrupted run, and the
 * side-effecting tools (which honour idempotencyKey in their own SQLite table) commit once.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const worker = resolve(import.meta.dirname, "chaos-worker.ts");
const dir = mkdtempSync(join(tmpdir(), "chaos-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Summary {
  status: string;
  facts: Record<string, { value: unknown; label: string }>;
  decisions: string[];
  steps: Record<string, string>;
  planVersion: number;
  usage: string[];
  effects: { key: string; what: string; commits: number }[];
  calls: { key: string; n: number }[];
}

function run(
  args: string[],
  env: Record<string, string> = {},
  killAfterMs?: number,
): Promise<{ code: number | null; signal: string | null; out: string }> {
  return new Promise((ok) => {
    const child = spawn(process.execPath, ["--import", "tsx", worker, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += String(d)));
    child.stderr.on("data", () => undefined);
    const timer = killAfterMs === undefined ? undefined : setTimeout(() => child.kill("SIGKILL"), killAfterMs);
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      ok({ code, signal, out });
    });
  });
}

const parse = (out: string) => JSON.parse(out.trim().split("\n").pop()!) as Summary;

function seeded(seed: number) {
  let x = seed;
  return () => (x = (x * 48271) % 2147483647) / 2147483647;
}

const SCENARIOS = ["loan", "fraud", "coding", "research", "scope", "chain", "parallel", "agent"];
const counts = {
  kills: 0,
  resumes: 0,
  duplicates: 0,
  toolKills: 0,
  checkpointKills: 0,
  timedKills: 0,
  finishedBeforeKill: 0,
  parallelKills: 0,
};

async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<void>) {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
    }),
  );
}

describe("kill and resume", () => {
  it("every killed run resumes to the same end, with each side effect committed once", async () => {
    const random = seeded(20261122);
    const references = new Map<string, Summary>();
    await pool(SCENARIOS, 2, async (name) => {
      const r = await run([name, join(dir, `${name}-ref.sqlite`), join(dir, `${name}-ref-fx.sqlite`)]);
      references.set(name, parse(r.out));
    });
    const trials: { name: string; kill: string; delay?: number; id: number }[] = [];
    let id = 0;
    for (const name of SCENARIOS) {
      const ref = references.get(name)!;
      const toolCalls = Math.max(2, ref.decisions.length + Object.keys(ref.steps).length);
      // Steps running side by side get more kills: most land while several of them run.
      const more = name === "parallel" ? 2 : 1;
      for (let k = 0; k < 5 * more; k++)
        trials.push({ name, kill: `tool:${1 + Math.floor(random() * toolCalls)}`, id: id++ });
      for (let k = 0; k < 5 * more; k++)
        trials.push({ name, kill: `checkpoint:${1 + Math.floor(random() * (toolCalls + 4))}`, id: id++ });
      for (let k = 0; k < 2 * more; k++)
        trials.push({ name, kill: "time", delay: 1200 + Math.floor(random() * 1500), id: id++ });
    }
    const failures: string[] = [];
    await pool(trials, 2, async (t) => {
      const db = join(dir, `${t.name}-${t.id}.sqlite`);
      const fx = join(dir, `${t.name}-${t.id}-fx.sqlite`);
      const first = await run([t.name, db, fx], t.kill === "time" ? {} : { CHAOS_KILL: t.kill }, t.delay);
      if (first.signal === "SIGKILL") {
        counts.kills += 1;
        if (t.name === "parallel") counts.parallelKills += 1;
        if (t.kill.startsWith("tool")) counts.toolKills += 1;
        else if (t.kill.startsWith("checkpoint")) counts.checkpointKills += 1;
        else counts.timedKills += 1;
      } else counts.finishedBeforeKill += 1;
      const resumed = await run([t.name, db, fx]);
      counts.resumes += 1;
      const got = parse(resumed.out);
      const ref = references.get(t.name)!;
      counts.duplicates += got.effects.filter((e) => e.commits !== 1).length;
      const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
      // A kill after a call's result reached the effect journal, before the checkpoint held it, leaves one
      // trace: the journaled result is reused, not called again, and a decision says so; a kill inside the
      // call leaves another: the call in doubt goes out again under its key, which these tools honour
      // (docs/decisions/0038-effect-journal.md). Its effect is still counted once below.
      const journaled = (s: Summary) =>
        s.decisions.filter((d) => !d.endsWith(":reuse:effect.reused") && !d.endsWith(":retry:effect.recalled"));
      const what = (s: Summary) => s.effects.map((e) => e.what).sort();
      if (
        !same(got.status, ref.status) ||
        !same(got.facts, ref.facts) ||
        !same(journaled(got), journaled(ref)) ||
        !same(got.steps, ref.steps) ||
        !same(got.planVersion, ref.planVersion) ||
        !same(got.usage, ref.usage) ||
        !same(what(got), what(ref))
      ) {
        failures.push(
          `${t.name} ${t.kill}${t.delay ? `@${t.delay}ms` : ""}: ${JSON.stringify({ status: got.status, decisions: got.decisions, steps: got.steps, effects: got.effects })}`,
        );
      }
    });
    console.log(
      `chaos: ${counts.kills} kills (${counts.toolKills} in tool calls, ${counts.checkpointKills} in checkpoint writes, ${counts.timedKills} at random times), ${counts.finishedBeforeKill} runs finished before their kill point, ${counts.resumes} resumes, ${counts.duplicates} duplicate side effects, across ${SCENARIOS.length} scenarios (${counts.parallelKills} kills in "parallel")`,
    );
    expect(failures).toEqual([]);
    expect(counts.duplicates).toBe(0);
    expect(counts.kills).toBeGreaterThanOrEqual(50);
    expect(counts.toolKills).toBeGreaterThan(0);
    expect(counts.parallelKills).toBeGreaterThanOrEqual(20);
    expect(counts.checkpointKills).toBeGreaterThan(0);
  }, 900_000);
});

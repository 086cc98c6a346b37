/**
 * Checkpoint storage grows with the change, not with the state
 * (docs/decisions/0011-checkpoint-storage-delta-channels.md),
 * and nothing a user reads changes: getState, getStateHistory, time travel, updateState while
 * paused and resume after a crash, on SqliteSaver.
 */
import { Command, MemorySaver } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { staticPlanner, type PlanDraft } from "../../src/index.js";
import { isPlanManagerError } from "../../src/errors.js";
import { codingPlan, codingReplan, createCodingTools } from "../fixtures/coding-agent.js";
import { harness, scriptedTool, type Loose } from "../helpers/graph.js";

/** Every database a test opens is closed at the end: better-sqlite3 statements finalized at process exit crash Node 24. */
const opened: SqliteSaver[] = [];
const openSaver = (conn: string) => {
  const saver = SqliteSaver.fromConnString(conn);
  opened.push(saver);
  return saver;
};
afterAll(() => {
  for (const saver of opened) saver.db.close();
});

const dir = mkdtempSync(join(tmpdir(), "storage-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 100 characters that differ per step, as a tool's fact would. */
const fact = (i: number) => `${i}:`.padEnd(100, String.fromCharCode(97 + (i % 26)));

function chain(n: number): PlanDraft {
  return {
    steps: Array.from({ length: n }, (_, i) => ({
      id: `s${i}`,
      goal: `Step ${i} of the chain`,
      tool: "work",
      args: { index: i },
      produces: [`f${i}`],
      ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}),
    })),
  };
}

const work = () =>
  scriptedTool("work", [(args: Record<string, unknown>) => ({ [`f${args.index}`]: fact(Number(args.index)) })]);

/** Bytes the saver stored for the thread: checkpoint and metadata blobs, and every write. */
function storedBytes(saver: SqliteSaver, thread: string) {
  const rows = saver.db
    .prepare(
      "SELECT length(checkpoint) + length(metadata) AS b FROM checkpoints WHERE thread_id = ? ORDER BY checkpoint_id",
    )
    .all(thread) as { b: number }[];
  const writes = saver.db
    .prepare("SELECT COALESCE(SUM(length(value)), 0) AS w FROM writes WHERE thread_id = ?")
    .get(thread) as { w: number };
  return { checkpoints: rows.map((r) => r.b), total: rows.reduce((s, r) => s + r.b, 0) + writes.w };
}

describe("per-step storage", () => {
  it("a step adds the same bytes at step 10 as at step 120, and no checkpoint re-stores the plan or facts", async () => {
    const saver = openSaver(":memory:");
    const sizes: Record<number, number> = {};
    for (const n of [20, 40, 140]) {
      const h = harness(chain(n), [work()], { checkpointer: saver, threadId: `chain-${n}` });
      expect((await h.run()).status).toBe("completed");
      sizes[n] = storedBytes(saver, `chain-${n}`).total;
    }
    // Deterministic (fake clock, fixed-length ids and timestamps); only version digits vary by step.
    const early = (sizes[40]! - sizes[20]!) / 20;
    const late = (sizes[140]! - sizes[40]!) / 100;
    // Each fact's `observedAt` (docs/decisions/0041-evidence-freshness-and-drift.md) adds 57 bytes a step.
    // Each step's fact is read by no step: a quality.structure finding per step (at most 50 per version), written
    // once with the plan, and the quality channel's version in each later checkpoint
    // (docs/decisions/0040-plan-quality-gate.md): the early steps carry the findings, every step ~50 bytes.
    expect([Math.round(early), Math.round(late)]).toEqual([2158, 2024]);
    // Before decision 0011 the last checkpoint held the plan, every step record and every fact.
    const last = saver.db
      .prepare("SELECT checkpoint FROM checkpoints WHERE thread_id = 'chain-140' ORDER BY checkpoint_id DESC LIMIT 1")
      .get() as { checkpoint: Buffer };
    const blob = String(last.checkpoint);
    expect(blob).not.toContain(fact(0));
    expect(blob).not.toContain("Step 0 of the chain");
    // 1100 before outcome.quality (~120 bytes of counts) and the quality channel's version.
    expect(blob.length).toBeLessThan(1200);
    // 1400 before the final checkpoint's metadata carried outcome.quality.
    expect(storedBytes(saver, "chain-140").checkpoints.every((b) => b < 1500)).toBe(true);
  });
});

/** The coding agent's run: a failed test, a local replan, a second fix; facts relabelled. */
function codingRun(checkpointer: MemorySaver | SqliteSaver, threadId = "bug-1") {
  const { tools } = createCodingTools("session.ts");
  return harness(staticPlanner({ plan: codingPlan, replan: codingReplan }), tools, { checkpointer, threadId });
}

describe("what users read is what the run wrote", () => {
  it("getState on SQLite equals getState on MemorySaver and the run's own output", async () => {
    const sqlite = codingRun(openSaver(join(dir, "coding.sqlite")));
    const out = await sqlite.run();
    const memory = codingRun(new MemorySaver());
    await memory.run();
    const a = await sqlite.state();
    expect(out.status).toBe("completed");
    expect(a.replans).toHaveLength(1);
    expect(a.planHistory).toHaveLength(1);
    expect(a).toEqual(await memory.state());
    for (const key of ["plan", "steps", "facts", "decisions", "replans", "planHistory", "status", "outcome"])
      expect(a[key]).toEqual(out[key]);
  });

  it("every checkpoint in getStateHistory holds the values the run streamed at that step", async () => {
    const h = codingRun(openSaver(join(dir, "stream.sqlite")));
    const live: Loose[] = [];
    for await (const v of await h.graph.stream({ goal: "test goal", context: {} } as never, {
      ...h.config,
      streamMode: "values",
    }))
      live.push(v as Loose);
    const history: Loose[] = [];
    for await (const s of h.graph.getStateHistory(h.config)) history.unshift(s.values as Loose);
    const replayed = history.slice(-live.length).map((v) => pick(v, Object.keys(live[live.length - 1]!)));
    expect(live.length).toBeGreaterThan(8);
    expect(replayed).toEqual(live.map((v) => pick(v, Object.keys(live[live.length - 1]!))));
  });

  it("time travel: re-running from the checkpoint after planning ends as the first run did", async () => {
    const h = codingRun(openSaver(join(dir, "travel.sqlite")));
    const first = await h.run();
    let planned;
    for await (const s of h.graph.getStateHistory(h.config))
      if (s.values.plan && Object.keys(s.values.steps).length === 0) planned = s;
    expect(planned!.values.plan.version).toBe(1);
    expect(planned!.values.decisions).toEqual([]);
    const again = (await h.graph.invoke(null, planned!.config)) as Loose;
    for (const key of ["status", "plan", "steps", "facts", "decisions", "replans", "planHistory"])
      expect(again[key]).toEqual(first[key]);
    // The fork is the thread's latest state; the first run's checkpoints are still there.
    expect((await h.state()).facts).toEqual(first.facts);
  });
});

describe("paused, crashed, resumed", () => {
  const withHuman: PlanDraft = {
    steps: [
      ...chain(4).steps,
      { id: "ask", goal: "Ask", human: { prompt: "Go?" }, produces: ["ok"], dependsOn: ["s3"] },
      { id: "act", goal: "Act", tool: "work", args: { index: 9 }, produces: ["f9"], dependsOn: ["ask"] },
    ],
  };

  it("updateState while paused sees and keeps the whole state; a bad update writes nothing", async () => {
    const h = harness(withHuman, [work()], { checkpointer: openSaver(join(dir, "paused.sqlite")) });
    const paused = await h.run();
    expect(paused.status).toBe("awaiting_human");
    const before = await h.graph.getState(h.config);
    const rejected = await h.graph.updateState(h.config, { facts: { f0: 5 } }).catch((e: unknown) => e);
    expect(isPlanManagerError(rejected) && rejected.code).toBe("invalid_update");
    expect((await h.graph.getState(h.config)).config).toEqual(before.config);

    await h.graph.updateState(h.config, { scopeChanges: ["also notify"] });
    const after = (await h.graph.getState(h.config)).values as Loose;
    expect(after.scopeChanges).toEqual(["also notify"]);
    for (const key of ["plan", "steps", "facts", "decisions", "status", "pendingHuman"])
      expect(after[key]).toEqual(before.values[key]);
    expect(Object.keys(after.facts)).toEqual(["f0", "f1", "f2", "f3"]);
  });

  it("a fresh graph on the same file resumes a run stopped mid-way and ends as an uninterrupted run", async () => {
    const file = join(dir, "crash.sqlite");
    const plan = chain(30);
    const stopped = harness(plan, [work()], { checkpointer: openSaver(file) });
    const error = await stopped.graph
      .invoke({ goal: "test goal", context: {} } as never, { ...stopped.config, recursionLimit: 12 })
      .catch((e: unknown) => e);
    expect((error as Error).name).toBe("GraphRecursionError");

    const tool = work();
    const fresh = harness(plan, [tool], { checkpointer: openSaver(file) });
    const resumed = (await fresh.graph.invoke(null, fresh.config)) as Loose;
    const whole = await harness(plan, [work()], { checkpointer: new MemorySaver() }).run();
    expect(tool.calls.map((c) => c.index)).toEqual(Array.from({ length: 19 }, (_, i) => i + 11));
    for (const key of ["status", "plan", "steps", "facts", "decisions"]) expect(resumed[key]).toEqual(whole[key]);
  });

  it("a paused human step answered from a fresh graph completes with every earlier fact", async () => {
    const file = join(dir, "answer.sqlite");
    await harness(withHuman, [work()], { checkpointer: openSaver(file) }).run();
    const fresh = harness(withHuman, [work()], { checkpointer: openSaver(file) });
    const done = await fresh.run(new Command({ resume: { action: "complete", output: { ok: true } } }));
    expect(done.status).toBe("completed");
    expect(Object.keys(done.facts)).toEqual(["f0", "f1", "f2", "f3", "ok", "f9"]);
    expect(done.facts.f2.value).toBe(fact(2));
  });
});

function pick(values: Loose, keys: string[]): Loose {
  return Object.fromEntries(keys.map((k) => [k, values[k]]));
}

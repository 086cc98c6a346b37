/**
 * The effects chaos scenario (docs/decisions/0038-effect-journal.md): side-effecting tools that do
 * NOT honour idempotency keys. `send` records every real call in its own SQLite table (`sends`), so a
 * duplicate is a second row for one message; `find_sent` is the read-only probe some steps name as
 * their `verify`; `unsend` is the undo of a booking (`undos`). KILL tells a tool where to SIGKILL its
 * process: `before:N` (the N-th call, before its effect), `after:N` (after its effect, before it
 * returns), `return:N` (a moment after it returned, between its return and the checkpoint),
 * `undo-before:N` / `undo-after:N` (the same inside the N-th undo).
 */
import { tool } from "@langchain/core/tools";
import Database from "better-sqlite3";
import { z } from "zod";
import type { PlanDraft } from "../src/index.js";

/** The planned messages: every one must be sent exactly once by the end. */
export const MESSAGES = ["m1", "m2", "m3", "m4", "m5", "m6"];
/** Steps whose message has a verify probe (the others are asked about when in doubt). */
export const VERIFIED = new Set(["m1", "m3", "m5"]);

export function sendPlan(): PlanDraft {
  return {
    steps: MESSAGES.map((msg, i) => ({
      id: `send_${msg}`,
      goal: `Send message ${msg}`,
      tool: "send",
      args: { msg },
      produces: [`sent_${msg}`],
      sideEffects: [`sends ${msg}`],
      idempotent: false,
      retry: { maxAttempts: 2, backoff: "none" as const },
      ...(VERIFIED.has(msg) ? { verify: { tool: "find_sent", args: { msg } } } : {}),
      ...(i > 0 ? { dependsOn: [`send_${MESSAGES[i - 1]}`] } : {}),
    })),
  };
}

/** A booking, then a person who aborts: the booking is abandoned and its undo runs. */
export function bookingPlan(): PlanDraft {
  return {
    steps: [
      {
        id: "book",
        goal: "Book the room",
        tool: "send",
        args: { msg: "booking" },
        produces: ["sent_booking"],
        sideEffects: ["books the room"],
        idempotent: false,
        compensate: { tool: "unsend", args: { msg: "booking" } },
      },
      { id: "confirm", goal: "A person confirms", human: { prompt: "keep the booking?" }, dependsOn: ["book"] },
    ],
  };
}

export function effectsDb(file: string): Database.Database {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.pragma("busy_timeout = 30000");
  db.exec(
    "CREATE TABLE IF NOT EXISTS sends (id INTEGER PRIMARY KEY AUTOINCREMENT, thread TEXT NOT NULL, msg TEXT NOT NULL, key TEXT, pid INTEGER NOT NULL);" +
      "CREATE TABLE IF NOT EXISTS probes (id INTEGER PRIMARY KEY AUTOINCREMENT, thread TEXT NOT NULL, key TEXT, happened INTEGER NOT NULL);" +
      "CREATE TABLE IF NOT EXISTS undos (id INTEGER PRIMARY KEY AUTOINCREMENT, thread TEXT NOT NULL, msg TEXT NOT NULL, key TEXT, pid INTEGER NOT NULL);" +
      "CREATE TABLE IF NOT EXISTS questions (id INTEGER PRIMARY KEY AUTOINCREMENT, thread TEXT NOT NULL, kind TEXT NOT NULL, rule TEXT, step TEXT, key TEXT, answer TEXT NOT NULL)",
  );
  return db;
}

/** What `send` answers: the fact its step produces. */
export const sentOutput = (msg: string) => ({ [`sent_${msg}`]: msg });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const die = () => process.kill(process.pid, "SIGKILL");

/** The tools, with the kill point `kill` (e.g. "after:2") counted over this process's calls. */
export function effectTools(db: Database.Database, kill: string, slowMs = 10) {
  const [where = "", nth = "0"] = kill.split(":");
  const at = Number(nth);
  const counts = { send: 0, undo: 0 };
  const insertSend = db.prepare("INSERT INTO sends (thread, msg, key, pid) VALUES (?, ?, ?, ?)");
  const insertUndo = db.prepare("INSERT INTO undos (thread, msg, key, pid) VALUES (?, ?, ?, ?)");
  const insertProbe = db.prepare("INSERT INTO probes (thread, key, happened) VALUES (?, ?, ?)");
  const findSend = db.prepare("SELECT msg FROM sends WHERE thread = ? AND key = ? LIMIT 1");
  const ctx = (config: { configurable?: Record<string, unknown> } | undefined) => ({
    thread: String(config?.configurable?.thread_id),
    key: (config?.configurable?.idempotencyKey as string | undefined) ?? null,
  });
  const send = tool(
    async (args: { msg: string }, config) => {
      const n = ++counts.send;
      const { thread, key } = ctx(config);
      if (where === "before" && n === at) die();
      await sleep(slowMs);
      insertSend.run(thread, args.msg, key, process.pid);
      if (where === "after" && n === at) die();
      await sleep(slowMs);
      if (where === "return" && n === at) setTimeout(die, n % 3);
      return sentOutput(args.msg);
    },
    {
      name: "send",
      description: "sends a message (does not honour idempotency keys)",
      schema: z.object({ msg: z.string() }),
      metadata: { sideEffects: ["sends a message"] },
    },
  );
  const findSent = tool(
    async (_args: { msg: string }, config) => {
      const { thread, key } = ctx(config);
      const row = findSend.get(thread, key) as { msg: string } | undefined;
      insertProbe.run(thread, key, row ? 1 : 0);
      return row ? { happened: true, output: sentOutput(row.msg) } : { happened: false };
    },
    { name: "find_sent", description: "looks a message up by key (read-only)", schema: z.object({ msg: z.string() }) },
  );
  const unsend = tool(
    async (args: { msg: string }, config) => {
      const n = ++counts.undo;
      const { thread, key } = ctx(config);
      if (where === "undo-before" && n === at) die();
      await sleep(slowMs);
      insertUndo.run(thread, args.msg, key, process.pid);
      if (where === "undo-after" && n === at) die();
      await sleep(slowMs);
      return { unsent: args.msg };
    },
    {
      name: "unsend",
      description: "cancels a booking (does not honour idempotency keys)",
      schema: z.object({ msg: z.string() }),
      metadata: { sideEffects: ["cancels a booking"] },
    },
  );
  return [send, findSent, unsend];
}

/** A question the test answers: what it asks about and the key of the call in doubt. */
export interface Question {
  id?: string;
  kind: string;
  rule?: string;
  stepId?: string;
  key?: string;
  reason?: string;
}

export function questionOf(value: Record<string, any> | undefined, id?: string): Question | undefined {
  if (!value) return undefined;
  return {
    ...(id ? { id } : {}),
    kind: String(value.kind),
    rule: value.context?.rule,
    stepId: value.stepId,
    key: value.context?.inDoubt?.key,
    reason: value.reason,
  };
}

/**
 * How the test answers, from the tools' own tables: a call in doubt that the table shows happened is
 * `happened` with its output; one it does not show is `retry`. An undo in doubt: `retry` when it did not
 * happen, `skip` (leave it) when it did. A person's step in the booking plan: `abort`.
 */
export function answerFor(db: Database.Database, thread: string, q: Question): Record<string, unknown> {
  if (q.rule === "effect.in-doubt" && q.key) {
    const row = db.prepare("SELECT msg FROM sends WHERE thread = ? AND key = ? LIMIT 1").get(thread, q.key) as
      { msg: string } | undefined;
    return row ? { action: "happened", output: sentOutput(row.msg) } : { action: "retry" };
  }
  if (q.rule === "compensate.failed") {
    const key = /under key (\S+) is unknown/.exec(q.reason ?? "")?.[1];
    const done = key ? db.prepare("SELECT 1 FROM undos WHERE thread = ? AND key = ?").get(thread, key) : undefined;
    return done ? { action: "skip" } : { action: "retry" };
  }
  if (q.kind === "human_step") return { action: "abort", reason: "the dates are wrong" };
  throw new Error(`no answer for ${JSON.stringify(q)}`);
}

/** Answers `q` (answerFor) and records question and answer in the `questions` table, for the test to count. */
export function answerAndRecord(db: Database.Database, thread: string, q: Question): Record<string, unknown> {
  const answer = answerFor(db, thread, q);
  db.prepare("INSERT INTO questions (thread, kind, rule, step, key, answer) VALUES (?, ?, ?, ?, ?, ?)").run(
    thread,
    q.kind,
    q.rule ?? null,
    q.stepId ?? null,
    q.key ?? null,
    String(answer.action),
  );
  return answer;
}

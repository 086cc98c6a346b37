/** Child processes running a payment thread (test/helpers/payment-process.ts), for the cross-process tests. */
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const script = join(import.meta.dirname, "payment-process.ts");

export interface Child {
  pid: number;
  kill(): void;
  done: Promise<{ line: string; exit: number | null }>;
}

export function start(db: string, thread: string, mode: string, dir: string, env?: Record<string, string>): Child {
  const options = { stdio: "pipe" as const, ...(env ? { env: { ...process.env, ...env } } : {}) };
  const child = spawn(process.execPath, ["--import", "tsx", script, db, thread, mode, dir], options);
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr.on("data", (d: Buffer) => (err += d.toString()));
  const done = new Promise<{ line: string; exit: number | null }>((resolve) =>
    child.on("exit", (exit) => resolve({ line: out.trim() || err.trim(), exit })),
  );
  return { pid: child.pid!, kill: () => child.kill("SIGKILL"), done };
}

/** Waits for a file the child writes (the test's own step, not a time limit on the code under test). */
export async function until(path: string): Promise<void> {
  for (let i = 0; i < 3000 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 10));
  if (!existsSync(path)) throw new Error(`${path} never appeared`);
}

export const calls = (dir: string) => readFileSync(join(dir, "calls.log"), "utf8").trim().split("\n");

/**
 * Two processes on one paused thread: the first answers and holds the tool; the second sends its
 * own answer meanwhile. It either gives up or reaches the tool itself; then the first may finish.
 */
export async function answerTwice(where: string, thread: string, dir: string) {
  const first = start(where, thread, "resume", dir);
  await until(join(dir, "started"));
  const second = start(where, thread, "answer", dir);
  const seen = { ended: false };
  void second.done.then(() => (seen.ended = true));
  for (let i = 0; i < 3000 && !seen.ended && calls(dir).length < 2; i++) await new Promise((r) => setTimeout(r, 10));
  writeFileSync(join(dir, "go"), "");
  return { first: { pid: first.pid, ...(await first.done) }, second: await second.done };
}

#!/usr/bin/env node
/** The `langgraph-replan` command (package.json `bin`): see `USAGE` in commands.ts and docs/guides/operations.md. */
import { runCli } from "./commands.js";

const argv = process.argv.slice(2);
// A reader that stops early (`threads … | head`) closes the pipe: the output is no longer wanted, so
// it is dropped and the command ends as it would have, without a stack trace. Not for `mcp`, whose
// stdout is its transport and whose server handles its own end.
let stdoutClosed = false;
if (argv[0] !== "mcp")
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    // Writes already under way when the pipe closed fail too, once it is destroyed.
    if (error.code !== "EPIPE" && !stdoutClosed) throw error;
    stdoutClosed = true;
  });

const code = await runCli(argv, {
  out: (line) => {
    if (!stdoutClosed) process.stdout.write(`${line}\n`);
  },
  err: (line) => process.stderr.write(`${line}\n`),
  now: Date.now,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
});
process.exitCode = code;

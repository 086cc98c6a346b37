#!/usr/bin/env node
/** The `langgraph-replan` command (package.json `bin`): see `USAGE` in commands.ts and README "Scaling out". */
import { runCli } from "./commands.js";

const code = await runCli(process.argv.slice(2), {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  now: Date.now,
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
});
process.exitCode = code;

/**
 * Evaluates one CEL expression in a child process, so a test can bound an evaluation that
 * would otherwise block the test run (the child is killed at the timeout).
 * Usage: node --import tsx test/helpers/cel-in-child.ts '<json: [source, kind, facts, output]>'
 */
import { evaluateExpression } from "../../src/policy/index.js";

const [source, kind, facts, output] = JSON.parse(process.argv[2] ?? "[]") as [
  string,
  "precondition" | "successSignal" | "when" | "check",
  Record<string, unknown>,
  unknown,
];
process.stdout.write(JSON.stringify(evaluateExpression(source, kind, facts, output)));

/**
 * `npm run demo`: the loan-approval workflow, offline, on the embedded SQLite checkpointer.
 * Prints the user's view live, answers the human review itself unless `--interactive`, then
 * lists the decisions taken and the final status.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, relative, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { Command } from "@langchain/langgraph";
import ora from "ora";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import {
  createPlanManager,
  requestScopeChange,
  staticPlanner,
  type InterruptPayload,
  type PlanEvent,
} from "langgraph-replan";
import { decisionLine, htmlReport } from "langgraph-replan/views";
import { defaultPlanner } from "../default-planner.js";
import { createLoanTools, loanPlan, loanReplan } from "./workflow.js";
import { runMigrationDemo } from "../migration/demo.js";
import { runCodingDemo } from "../coding/demo.js";

export const USAGE = `usage: npm run demo -- [--interactive] [--llm] [--db FILE] [--applicant ID] [--scope "REQUEST"] [--report FILE.html] | --migration | --coding`;

/** Flags that take a value; the others are switches. A missing value or an unknown flag is a usage error. */
const VALUED = new Set(["--db", "--applicant", "--scope", "--report"]);
const SWITCHES = new Set(["--interactive", "--llm", "--migration", "--coding"]);

function parseArgs(argv: readonly string[]): Map<string, string | true> {
  const flags = new Map<string, string | true>();
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i]!;
    if (SWITCHES.has(flag)) flags.set(flag, true);
    else if (VALUED.has(flag)) {
      const value = argv[i + 1];
      if (value === undefined || value.startsWith("--") || value.trim() === "") usage(`${flag} needs a value`);
      flags.set(flag, value!);
      i++;
    } else usage(`unknown argument ${JSON.stringify(flag)}`);
  }
  return flags;
}

function usage(problem: string): never {
  console.error(`demo: ${problem}\n${USAGE}`);
  process.exit(2);
}

const flags = parseArgs(process.argv.slice(2));
const valueOf = (flag: string) => (typeof flags.get(flag) === "string" ? (flags.get(flag) as string) : undefined);
const interactive = flags.has("--interactive");
const useLlm = flags.has("--llm");
const dbPath = resolve(valueOf("--db") ?? ".demo/loan.sqlite");
const applicant = valueOf("--applicant") ?? "A-7291";
const reportPath = valueOf("--report");
let scopeChange = valueOf("--scope");

async function main() {
  mkdirSync(dirname(dbPath), { recursive: true });
  rmSync(dbPath, { force: true });
  const checkpointer = SqliteSaver.fromConnString(dbPath);
  const { tools } = createLoanTools();
  const chosen = useLlm
    ? defaultPlanner({ plan: loanPlan, replan: loanReplan })
    : { planner: staticPlanner({ plan: loanPlan, replan: loanReplan }), description: "static" };
  // Real backoff would wait 500 ms before the retry; the demo keeps it but caps waits at 50 ms.
  const graph = createPlanManager({
    tools,
    planner: chosen.planner,
    policy: { budget: { maxCost: 0.25 } },
    clock: { sleep: (ms) => new Promise((r) => setTimeout(r, Math.min(ms, 50))) },
  }).compile({ checkpointer });
  const config = { configurable: { thread_id: `loan-${applicant}` } };

  console.log(`langgraph-replan demo — loan application ${applicant}`);
  const plannerName = !useLlm
    ? "static"
    : "description" in chosen && chosen.description.startsWith("LLM")
      ? chosen.description
      : `static (${chosen.description})`;
  console.log(
    `planner: ${plannerName} · checkpointer: SQLite (${relative(process.cwd(), dbPath) || dbPath})${interactive ? " · interactive" : ""}\n`,
  );

  let input: unknown = { goal: `Process loan application ${applicant}`, context: { applicant_id: applicant } };
  for (;;) {
    const stream = await graph.stream(input as never, { ...config, streamMode: ["custom", "updates"] });
    let pending: InterruptPayload | undefined;
    for await (const [mode, chunk] of stream as AsyncIterable<[string, unknown]>) {
      if (mode === "custom") render(chunk as PlanEvent);
      if (mode === "updates" && chunk && typeof chunk === "object" && "__interrupt__" in chunk) {
        pending = (chunk as { __interrupt__: { value: InterruptPayload }[] }).__interrupt__[0]?.value;
      }
    }
    if (!pending) break;
    if (scopeChange) {
      // A scope change may arrive while the run waits for a person; it is planned for at the next step boundary.
      await requestScopeChange(graph, config, scopeChange);
      console.log(`+ scope change while paused: "${scopeChange}"`);
      scopeChange = undefined;
    }
    input = new Command({ resume: await answer(pending) });
  }

  const state = (await graph.getState(config)).values;
  console.log("\nDecisions:");
  if (state.decisions.length === 0) console.log("  (none)");
  for (const d of state.decisions) {
    console.log(`  #${d.seq} ${d.stepId ?? "-"} (attempt ${d.attempt}): ${decisionLine(d)}`);
  }
  console.log(
    `\nSide effects committed: ${state.sideEffects.map((s: { idempotencyKey: string }) => s.idempotencyKey).join(", ") || "none"}`,
  );
  console.log(`Final status: ${state.status} — ${state.outcome?.summary ?? ""}`);
  if (reportPath) {
    // Mermaid's bundle (megabytes) goes beside the report, which loads it by name.
    const require = createRequire(import.meta.url);
    const mermaidScript = readFileSync(require.resolve("mermaid/dist/mermaid.min.js"), "utf8");
    writeFileSync(resolve(dirname(reportPath), "mermaid.min.js"), mermaidScript);
    writeFileSync(reportPath, htmlReport(state as never, { mermaidSrc: "mermaid.min.js" }));
    console.log(`Report written to ${resolve(reportPath)} (Mermaid beside it: mermaid.min.js)`);
  }
  checkpointer.db.close();
}

// Live progress, the user's view: a spinner per step on a terminal (ora), plain lines
// otherwise. Retries, fallbacks and routing stay hidden.
const live = process.stdout.isTTY ? ora({ stream: process.stdout }) : undefined;

function render(event: PlanEvent) {
  switch (event.type) {
    case "step_started": {
      // Steps run side by side (policy.maxConcurrency): say so when this one starts beside others.
      const others = event.running - 1;
      const beside = others > 0 ? ` (beside ${others} other running step${others > 1 ? "s" : ""})` : "";
      if (live && !live.isSpinning) live.start(event.goal + beside);
      else if (live) live.text = event.goal + beside;
      else if (others > 0) console.log(`… ${event.goal}${beside}`);
      break;
    }
    case "step_finished":
      if (event.status === "succeeded") {
        if (live) live.succeed(event.goal);
        else console.log(`✓ ${event.goal}`);
      } else if (event.status === "skipped" && event.note && !event.note.startsWith("when")) {
        if (live) live.info(`– ${event.goal} (skipped)`);
        else console.log(`– ${event.goal} (skipped)`);
      }
      break;
    default:
      break;
  }
}

async function answer(payload: InterruptPayload): Promise<unknown> {
  live?.stop();
  console.log(`? ${payload.reason}`);
  if (payload.error) console.log(`  (${payload.error})`);
  if (!interactive) {
    const value =
      payload.kind === "human_step"
        ? { action: "complete", output: { human_override: "approved" } }
        : { action: "abort", reason: "demo: no person available" };
    console.log(`  answered automatically: ${JSON.stringify(value)}`);
    return value;
  }
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  try {
    if (payload.kind === "human_step") {
      const text = (await rl.question("  approved / denied / skip / abort > ")).trim();
      if (text === "skip" || text === "abort") return { action: text };
      return { action: "complete", output: { human_override: text } };
    }
    const text = (await rl.question(`  ${payload.options.join(" / ")} > `)).trim();
    return { action: text };
  } finally {
    rl.close();
  }
}

// `--migration`: the long-goal demo instead (40 tables on a rolling horizon; examples/migration).
// `--coding`: steps done by models on three tiers, with the validation loop (examples/coding).
(flags.has("--migration") ? runMigrationDemo() : flags.has("--coding") ? runCodingDemo() : main()).catch((error) => {
  console.error(error);
  process.exit(1);
});

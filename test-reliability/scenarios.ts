/**
 * Chaos scenarios: deterministic workflows whose tools behave as a function of (step, attempt),
 * so a run killed and resumed in a fresh process must end exactly like an uninterrupted one.
 * The side-effecting tool honours `idempotencyKey` by recording keys in its own SQLite table.
 */
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool, type StructuredToolInterface } from "@langchain/core/tools";
import { createAgent } from "langchain";
import Database from "better-sqlite3";
import { z } from "zod";
import {
  AssumptionBrokenError,
  PermanentError,
  TransientError,
  staticPlanner,
  type PlanDraft,
  type Planner,
  type ReplanRequest,
  type ResumeValue,
  type StepAgent,
} from "../src/index.js";

export interface Scenario {
  name: string;
  goal: string;
  context: Record<string, unknown>;
  planner: Planner;
  /** How the automated person answers an interrupt. */
  answer: (payload: { kind: string; stepId?: string }) => ResumeValue;
  /** A scope change injected at the first interrupt, if any. */
  scopeChange?: string;
  /** Agents for steps that name one, built on the (instrumented) chaos tools. */
  agents?: (tools: StructuredToolInterface[]) => Record<string, StepAgent>;
}

export interface EffectStore {
  db: Database.Database;
  commit(key: string, what: string): void;
}

export function effectStore(file: string): EffectStore {
  const db = new Database(file);
  db.pragma("journal_mode = WAL");
  db.exec(
    "CREATE TABLE IF NOT EXISTS effects (key TEXT PRIMARY KEY, what TEXT NOT NULL, commits INTEGER NOT NULL DEFAULT 1)",
  );
  db.exec("CREATE TABLE IF NOT EXISTS calls (key TEXT NOT NULL)");
  const insert = db.prepare("INSERT INTO effects (key, what) VALUES (?, ?) ON CONFLICT(key) DO NOTHING");
  const call = db.prepare("INSERT INTO calls (key) VALUES (?)");
  return {
    db,
    commit(key, what) {
      call.run(key);
      insert.run(key, what);
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Tools shared by the scenarios; `slow` makes kills land inside tool calls. */
export function chaosTools(effects: EffectStore, slowMs: number) {
  const make = (
    name: string,
    fn: (args: Record<string, unknown>, cfg: { stepId: string; attempt: number; key?: string }) => unknown,
  ) =>
    tool(
      async (args: Record<string, unknown>, config) => {
        const c = config?.configurable ?? {};
        await sleep(slowMs);
        return fn(args, {
          stepId: String(c.stepId),
          attempt: Number(c.attempt),
          key: c.idempotencyKey as string | undefined,
        });
      },
      { name, description: name, schema: z.object({}).passthrough() },
    );
  const commit = (args: Record<string, unknown>, cfg: { key?: string }, what: string) => {
    if (!cfg.key) throw new PermanentError("no idempotency key");
    effects.commit(cfg.key, what);
  };
  return [
    make("verify_identity", () => ({ identity_verified: true })),
    make("pull_credit", (_a, c) => {
      if (c.attempt === 1) throw new TransientError("bureau 503");
      return { credit_score: 720 };
    }),
    make("compliance_check", () => ({ compliance_flag: "review" })),
    make("underwrite", () => ({ recommendation: "approve", employment_start: 2015, employer_founded: 2019 })),
    make("deep_verify", () => ({ fraud_signal: "employment predates employer" })),
    make("business_credit", () => ({ business_score: 81 })),
    tool(
      async (args: Record<string, unknown>, config) => {
        await sleep(slowMs);
        commit(
          args,
          { key: config?.configurable?.idempotencyKey as string | undefined },
          `decision:${String(args.human_override ?? args.human_decision ?? "auto")}`,
        );
        return { decision: String(args.human_override ?? args.human_decision ?? "auto") };
      },
      {
        name: "issue_decision",
        description: "writes the decision (side effect)",
        schema: z.object({}).passthrough(),
        metadata: { sideEffects: ["write decision"] },
      },
    ),
    tool(
      async (args: Record<string, unknown>, config) => {
        await sleep(slowMs);
        const key = config?.configurable?.idempotencyKey as string | undefined;
        // One step, several effects: each push is keyed by the step's key and what it pushes.
        commit(args, { key: key && `${key}:${String(args.patch)}` }, `push:${String(args.patch)}`);
        return `pushed ${String(args.patch)}`;
      },
      {
        name: "push_patch",
        description: "pushes a patch (side effect)",
        schema: z.object({ patch: z.string() }),
        metadata: { sideEffects: ["push"] },
      },
    ),
    make("check_patch", (a) => {
      if (a.patch !== "v2") throw new PermanentError(`test_parse failed on ${String(a.patch)}`);
      return { passed: 12 };
    }),
    make("search", () => ({ candidates: ["a.ts", "b.ts"] })),
    make("diagnose", (a) => ({
      suspect_file: (a.exclude as string[] | undefined)?.includes("a.ts") ? "b.ts" : "a.ts",
    })),
    make("fix", (a) => ({ patched: a.suspect_file })),
    make("run_tests", (a) => ({ passed: a.patched === "b.ts" })),
    make("portal", () => {
      throw Object.assign(new PermanentError("portal 404"), { status: 404 });
    }),
    make("third_party", () => ({ report: "from auditors" })),
    make("work", (a) => ({ [`v${String(a.i)}`]: Number(a.i) * 2 })),
    tool(
      async (args: Record<string, unknown>, config) => {
        await sleep(slowMs);
        commit(args, { key: config?.configurable?.idempotencyKey as string | undefined }, `notify:${String(args.i)}`);
        return { notified: true };
      },
      {
        name: "notify",
        description: "sends a notification (side effect)",
        schema: z.object({}).passthrough(),
        metadata: { sideEffects: ["send email"] },
      },
    ),
  ];
}

const loanSteps: PlanDraft["steps"] = [
  {
    id: "verify_identity",
    goal: "Verify identity",
    tool: "verify_identity",
    inputs: ["applicant_id"],
    produces: ["identity_verified"],
  },
  {
    id: "pull_credit",
    goal: "Pull credit",
    tool: "pull_credit",
    dependsOn: ["verify_identity"],
    produces: ["credit_score"],
    retry: { maxAttempts: 3, backoff: "fixed", initialDelayMs: 5 },
  },
  {
    id: "compliance_check",
    goal: "Compliance",
    tool: "compliance_check",
    dependsOn: ["pull_credit"],
    produces: ["compliance_flag"],
  },
  {
    id: "human_review",
    goal: "Review",
    human: { prompt: "approve?" },
    dependsOn: ["compliance_check"],
    when: 'facts.compliance_flag == "review"',
    produces: ["human_override"],
  },
  {
    id: "issue_decision",
    goal: "Decide",
    tool: "issue_decision",
    dependsOn: ["human_review"],
    inputs: ["human_override"],
    produces: ["decision"],
  },
];

/**
 * A coding agent as a function of its messages (so a resumed process answers as the killed one
 * would): it pushes a patch, then answers with it; told why its last patch failed, it pushes v2.
 */
function codingAgent(tools: StructuredToolInterface[]) {
  const answer = (messages: BaseMessage[]) => {
    const patch = messages.some((m) => String(m.content).includes("was rejected")) ? "v2" : "v1";
    if (messages.at(-1) instanceof ToolMessage) return new AIMessage(JSON.stringify({ patch }));
    return new AIMessage({ content: "", tool_calls: [{ name: "push_patch", args: { patch }, id: `push-${patch}` }] });
  };
  const model = fakeModel();
  for (let i = 0; i < 100; i++) model.respond(answer);
  return createAgent({ model, tools: tools.filter((t) => t.name === "push_patch") });
}

export const SCENARIOS: Record<string, () => Scenario> = {
  /** An agent step whose first patch fails its tests: the retry, told why, lands v2; each push committed once. */
  agent: () => ({
    name: "agent",
    goal: "fix the parser",
    context: { issue: "parse() drops the last token" },
    agents: (tools) => ({ coder: codingAgent(tools) }),
    planner: staticPlanner({
      plan: {
        steps: [
          {
            id: "fix",
            goal: "Fix the parser",
            agent: "coder",
            inputs: ["issue"],
            produces: ["patch"],
            validate: { tool: "check_patch" },
            sideEffects: ["repo"],
            idempotent: false,
            retry: { maxAttempts: 3, backoff: "none" },
          },
          { id: "after", goal: "Work after", tool: "work", args: { i: 1 }, dependsOn: ["fix"], produces: ["v1"] },
        ],
      },
    }),
    answer: () => ({ action: "abort" }),
  }),
  loan: () => ({
    name: "loan",
    goal: "loan A-1",
    context: { applicant_id: "A-1" },
    planner: staticPlanner({ plan: { steps: loanSteps } }),
    answer: () => ({ action: "complete", output: { human_override: "approved" } }),
  }),
  fraud: () => ({
    name: "fraud",
    goal: "loan with fraud evidence",
    context: { applicant_id: "A-2" },
    planner: staticPlanner({
      plan: {
        assumptions: [
          {
            id: "employment_valid",
            statement: "employment genuine",
            check: "facts.employment_start >= facts.employer_founded",
          },
        ],
        steps: [
          loanSteps[0]!,
          loanSteps[1]!,
          { ...loanSteps[2]!, assumptions: ["employment_valid"] },
          {
            id: "underwrite",
            goal: "Underwrite",
            tool: "underwrite",
            dependsOn: ["compliance_check"],
            produces: ["recommendation", "employment_start", "employer_founded"],
            assumptions: ["employment_valid"],
          },
          {
            id: "issue_decision",
            goal: "Decide",
            tool: "issue_decision",
            dependsOn: ["underwrite"],
            inputs: ["recommendation"],
            produces: ["decision"],
            assumptions: ["employment_valid"],
          },
        ],
      },
      replan: () => ({
        steps: [
          { id: "deep_verification", goal: "Deep verify", tool: "deep_verify", produces: ["fraud_signal"] },
          {
            id: "fraud_review",
            goal: "Fraud review",
            human: { prompt: "decide" },
            dependsOn: ["deep_verification"],
            produces: ["human_decision"],
          },
          {
            id: "issue_decision",
            goal: "Decide",
            tool: "issue_decision",
            dependsOn: ["fraud_review"],
            inputs: ["human_decision"],
            produces: ["decision"],
          },
        ],
      }),
    }),
    answer: () => ({ action: "complete", output: { human_decision: "denied" } }),
  }),
  coding: () => ({
    name: "coding",
    goal: "fix the bug",
    context: {},
    planner: staticPlanner({
      plan: {
        assumptions: [{ id: "root", statement: "diagnosis right" }],
        steps: [
          { id: "search", goal: "Search", tool: "search", produces: ["candidates"] },
          {
            id: "diagnose",
            goal: "Diagnose",
            tool: "diagnose",
            dependsOn: ["search"],
            inputs: ["candidates"],
            produces: ["suspect_file"],
            assumptions: ["root"],
          },
          {
            id: "fix",
            goal: "Fix",
            tool: "fix",
            dependsOn: ["diagnose"],
            inputs: ["suspect_file"],
            produces: ["patched"],
            assumptions: ["root"],
          },
          {
            id: "test",
            goal: "Test",
            tool: "run_tests",
            dependsOn: ["fix"],
            inputs: ["patched"],
            successSignal: "output.passed == true",
            produces: ["passed"],
            assumptions: ["root"],
          },
        ],
      },
      replan: (r: ReplanRequest) => ({
        steps: [
          {
            id: "diagnose2",
            goal: "Re-diagnose",
            tool: "diagnose",
            dependsOn: ["search"],
            inputs: ["candidates"],
            args: { exclude: [String(r.facts.suspect.suspect_file)] },
            produces: ["suspect_file"],
          },
          {
            id: "fix2",
            goal: "Fix",
            tool: "fix",
            dependsOn: ["diagnose2"],
            inputs: ["suspect_file"],
            produces: ["patched"],
          },
          {
            id: "test2",
            goal: "Test",
            tool: "run_tests",
            dependsOn: ["fix2"],
            inputs: ["patched"],
            successSignal: "output.passed == true",
            produces: ["passed"],
          },
        ],
      }),
    }),
    answer: () => ({ action: "abort" }),
  }),
  research: () => ({
    name: "research",
    goal: "SOC 2 status",
    context: {},
    planner: staticPlanner({
      plan: {
        assumptions: [{ id: "portal_public", statement: "portal has the report" }],
        steps: [
          { id: "portal", goal: "Portal", tool: "portal", produces: ["report"], assumptions: ["portal_public"] },
          { id: "notify", goal: "Notify", tool: "notify", dependsOn: ["portal"], args: { i: 1 } },
        ],
      },
      replan: () => ({
        steps: [
          { id: "third", goal: "Third party", tool: "third_party", produces: ["report"] },
          { id: "notify", goal: "Notify", tool: "notify", dependsOn: ["third"], args: { i: 1 } },
        ],
      }),
    }),
    answer: () => ({ action: "abort" }),
  }),
  scope: () => ({
    name: "scope",
    goal: "loan with scope change",
    context: { applicant_id: "A-3" },
    planner: staticPlanner({
      plan: { steps: loanSteps },
      replan: (r: ReplanRequest) => ({
        steps: [
          { id: "business_credit", goal: "Business credit", tool: "business_credit", produces: ["business_score"] },
          ...r.affectedSteps.map((s) => ({ ...s, dependsOn: [...(s.dependsOn ?? []), "business_credit"] })),
        ],
      }),
    }),
    answer: () => ({ action: "complete", output: { human_override: "approved" } }),
    scopeChange: "also check business credit",
  }),
  chain: () => ({
    name: "chain",
    goal: "long chain with a side effect in the middle",
    context: {},
    planner: staticPlanner({
      plan: {
        steps: Array.from({ length: 24 }, (_, i) =>
          i === 12
            ? { id: `s${i}`, goal: `Notify ${i}`, tool: "notify", args: { i }, dependsOn: [`s${i - 1}`] }
            : {
                id: `s${i}`,
                goal: `Work ${i}`,
                tool: "work",
                args: { i },
                produces: [`v${i}`],
                ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}),
              },
        ),
      },
    }),
    answer: () => ({ action: "abort" }),
  }),
  /**
   * A DAG of 14 steps run side by side (maxConcurrency 4 by default): four side-effecting steps
   * on two resources ("ledger", "mail"), so kills land while several steps run.
   */
  parallel: () => {
    const work = (i: number, deps: string[]) => ({
      id: `w${i}`,
      goal: `Work ${i}`,
      tool: "work",
      args: { i },
      produces: [`v${i}`],
      ...(deps.length > 0 ? { dependsOn: deps } : {}),
    });
    const notify = (i: number, resource: string, deps: string[]) => ({
      id: `n${i}`,
      goal: `Notify ${i}`,
      tool: "notify",
      args: { i },
      sideEffects: [resource],
      dependsOn: deps,
    });
    return {
      name: "parallel",
      goal: "a DAG run side by side",
      context: {},
      planner: staticPlanner({
        plan: {
          steps: [
            work(0, []),
            work(1, []),
            work(2, []),
            work(3, []),
            notify(4, "ledger", ["w0"]),
            notify(5, "ledger", ["w1"]),
            notify(6, "mail", ["w2"]),
            work(7, ["w0", "w1"]),
            work(8, ["w2", "w3"]),
            notify(9, "mail", ["w7"]),
            work(10, ["w7", "w8"]),
            work(11, ["w8"]),
            work(12, ["n4", "n5", "n6"]),
            work(13, ["w10", "w11", "w12", "n9"]),
          ],
        },
      }),
      answer: () => ({ action: "abort" }),
    };
  },
};

export { AssumptionBrokenError };

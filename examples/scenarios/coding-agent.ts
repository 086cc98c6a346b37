/**
 * The coding agent from the design: search → diagnose → fix → test. The first diagnosis blames
 * the wrong file; the test still fails, so the root-cause assumption is broken. A local replan
 * re-diagnoses excluding the file already tried; the search is not re-run.
 */
import { tool } from "@langchain/core/tools";
import { z } from "zod";
import type { PlanDraft, ReplanRequest } from "../../src/index.js";

export function createCodingTools(buggyFile = "session.ts") {
  const calls: { tool: string; args: Record<string, unknown> }[] = [];
  const record = (name: string, args: Record<string, unknown>) => calls.push({ tool: name, args });
  const search = tool(
    async (args) => {
      record("search_code", args);
      return { candidates: ["auth.ts", "session.ts", "token.ts"] };
    },
    {
      name: "search_code",
      description: "Search the repository for files related to a failing test.",
      schema: z.object({ query: z.string() }),
    },
  );
  const diagnose = tool(
    async (args) => {
      record("diagnose", args);
      const next = args.candidates.find((f) => !(args.exclude ?? []).includes(f));
      return { suspect_file: next ?? "none" };
    },
    {
      name: "diagnose",
      description: "Pick the most likely root-cause file among candidates.",
      schema: z.object({ candidates: z.array(z.string()), exclude: z.array(z.string()).optional() }),
    },
  );
  const fix = tool(
    async (args) => {
      record("apply_fix", args);
      return { patched_file: args.suspect_file };
    },
    {
      name: "apply_fix",
      description: "Edit the suspect file to fix the bug.",
      schema: z.object({ suspect_file: z.string() }),
    },
  );
  const runTests = tool(
    async (args) => {
      record("run_tests", args);
      return { passed: args.patched_file === buggyFile, failing: args.patched_file === buggyFile ? 0 : 1 };
    },
    { name: "run_tests", description: "Run the failing test suite.", schema: z.object({ patched_file: z.string() }) },
  );
  return { tools: [search, diagnose, fix, runTests], calls };
}

export const codingPlan: PlanDraft = {
  assumptions: [{ id: "root_cause", statement: "the bug is in the file the diagnosis picks" }],
  steps: [
    {
      id: "search",
      goal: "Searching the code",
      tool: "search_code",
      args: { query: "login test fails" },
      produces: ["candidates"],
    },
    {
      id: "diagnose",
      goal: "Diagnosing the root cause",
      tool: "diagnose",
      dependsOn: ["search"],
      inputs: ["candidates"],
      produces: ["suspect_file"],
      assumptions: ["root_cause"],
    },
    {
      id: "fix",
      goal: "Applying the fix",
      tool: "apply_fix",
      dependsOn: ["diagnose"],
      inputs: ["suspect_file"],
      produces: ["patched_file"],
      assumptions: ["root_cause"],
    },
    {
      id: "test",
      goal: "Running the tests",
      tool: "run_tests",
      dependsOn: ["fix"],
      inputs: ["patched_file"],
      successSignal: "output.passed == true",
      produces: ["passed"],
      assumptions: ["root_cause"],
    },
  ],
};

/** Re-diagnose, excluding every file already patched (read from the suspect facts). */
export function codingReplan(req: ReplanRequest): PlanDraft {
  const tried = Object.entries(req.facts.suspect)
    .filter(([k]) => k === "suspect_file" || k === "patched_file")
    .map(([, v]) => String(v));
  const n = req.plan.version + 1;
  const assumption = `root_cause_v${n}`;
  return {
    assumptions: [{ id: assumption, statement: `the bug is not in ${tried.join(", ")}` }],
    steps: [
      {
        id: `diagnose_v${n}`,
        goal: "Re-diagnosing the root cause",
        tool: "diagnose",
        dependsOn: ["search"],
        inputs: ["candidates"],
        args: { exclude: [...new Set(tried)] },
        produces: ["suspect_file"],
        assumptions: [assumption],
      },
      {
        id: `fix_v${n}`,
        goal: "Applying the fix",
        tool: "apply_fix",
        dependsOn: [`diagnose_v${n}`],
        inputs: ["suspect_file"],
        produces: ["patched_file"],
        assumptions: [assumption],
      },
      {
        id: `test_v${n}`,
        goal: "Running the tests",
        tool: "run_tests",
        dependsOn: [`fix_v${n}`],
        inputs: ["patched_file"],
        successSignal: "output.passed == true",
        produces: ["passed"],
        assumptions: [assumption],
      },
    ],
  };
}

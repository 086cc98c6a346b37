/**
 * A step done by an agent: LangChain's `createAgent` (a compiled LangGraph graph with its own
 * tools) is registered under `agents` and named by a step (`agent: "coder"`). The manager gives
 * it the goal, the whole plan and the step's trusted inputs as messages, reads its final message
 * (or `structuredResponse`), checks the answer against the step's success signal and
 * validation tool, and lends the step's idempotency key to the tools the agent calls.
 *
 * The model here is LangChain's scripted `fakeModel()`, so the example runs offline; pass any
 * chat model that can call tools (`new ChatOpenAI({ model: "gpt-5-mini" })`) instead.
 */
import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createAgent } from "langchain";
import { z } from "zod";
import { createPlanManager, PermanentError, staticPlanner, type PlanDraft } from "langgraph-replan";

/** Pushes a branch; the key makes a second push of the same step a no-op (the remote remembers it). */
export function createRemote() {
  const pushed = new Map<string, string>();
  const pushBranch = tool(
    async ({ branch }, config) => {
      const key = String(config.configurable?.idempotencyKey);
      if (!pushed.has(key)) pushed.set(key, branch);
      return `pushed ${pushed.get(key)}`;
    },
    { name: "push_branch", description: "Push the fixed branch", schema: z.object({ branch: z.string() }) },
  );
  return { pushed, pushBranch };
}

/** The validation between steps: the test suite, run on the agent's answer. */
export const runTests = tool(
  async ({ branch }) => {
    if (branch !== "fix/parse-off-by-one") throw new PermanentError(`no such branch: ${branch}`);
    return { passed: 12, failed: 0 };
  },
  { name: "run_tests", description: "Run the test suite on a branch", schema: z.object({ branch: z.string() }) },
);

export const codingPlan: PlanDraft = {
  steps: [
    {
      id: "fix",
      goal: "Fix the off-by-one in parse() and push a branch",
      agent: "coder",
      inputs: ["issue"],
      produces: ["branch"],
      successSignal: 'output.branch.startsWith("fix/")',
      validate: { tool: "run_tests", successSignal: "output.failed == 0" },
      sideEffects: ["pushes a git branch"],
      idempotent: false,
    },
  ],
};

export function createCodingManager() {
  const remote = createRemote();
  const model = fakeModel()
    .respondWithTools([{ name: "push_branch", args: { branch: "fix/parse-off-by-one" } }])
    .respond(new AIMessage('{"branch": "fix/parse-off-by-one"}'));
  const coder = createAgent({ model, tools: [remote.pushBranch] });
  const graph = createPlanManager({
    tools: [runTests],
    agents: { coder },
    planner: staticPlanner({ plan: codingPlan }),
  }).compile({ checkpointer: new MemorySaver() });
  return { graph, model, remote };
}

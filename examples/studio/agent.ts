/**
 * The agent served as `plan_agent` by `langgraph dev` (see langgraph.json): LangChain's
 * `createAgent` with `planMiddleware` and the loan workflow's tools. The model is scripted, so
 * the graph runs offline: it writes a plan, then calls each step's tool in turn, reading the
 * results, and revises the plan when a tool message asks it to. The server supplies the checkpointer.
 */
import { AIMessage, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { createAgent } from "langchain";
import { planMiddleware } from "langgraph-replan/agent";
import { createLoanTools } from "../loan/workflow.js";

const loanSteps = [
  { id: "identity", goal: "Verifying identity", tool: "verify_identity", produces: ["identity_verified"] },
  { id: "credit", goal: "Checking credit history", tool: "pull_credit", produces: ["credit_score"] },
  {
    id: "decision",
    goal: "Issuing the decision",
    tool: "issue_decision",
    dependsOn: ["identity", "credit"],
    produces: ["decision"],
  },
];

/** One turn of the scripted agent: plan first, then the next step whose tool has not answered yet. */
function turn(messages: BaseMessage[]): AIMessage {
  const answered = new Set(
    messages.filter((m) => ToolMessage.isInstance(m) && m.status !== "error").map((m) => (m as ToolMessage).name),
  );
  const call = (name: string, args: Record<string, unknown>) =>
    new AIMessage({ content: "", tool_calls: [{ name, args, id: `call-${messages.length}`, type: "tool_call" }] });
  if (!answered.has("write_plan")) return call("write_plan", { steps: loanSteps });
  const next = loanSteps.find((s) => !answered.has(s.tool));
  const args =
    next?.id === "decision" ? { applicant_id: "A-7291", human_override: "approved" } : { applicant_id: "A-7291" };
  return next ? call(next.tool, args) : new AIMessage("The loan application is decided.");
}

const model = fakeModel();
for (let i = 0; i < 10_000; i++) model.respond(turn);

export const agent = createAgent({
  model,
  tools: createLoanTools().tools,
  middleware: [
    planMiddleware({ sideEffectTools: ["issue_decision"], policy: { defaultRetry: { initialDelayMs: 50 } } }),
  ],
});
agent.graph.name = "plan_agent";

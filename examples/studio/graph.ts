/**
 * The graph served by `langgraph dev` (see langgraph.json): the loan workflow's tools and the
 * static planner. The LangGraph API server supplies the checkpointer.
 */
import { createPlanManager, staticPlanner } from "../../src/index.js";
import { createLoanTools, loanPlan } from "../loan/workflow.js";

export const graph = createPlanManager({
  tools: createLoanTools().tools,
  planner: staticPlanner({ plan: loanPlan }),
}).compile();
graph.name = "plan_manager";

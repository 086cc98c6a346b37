/**
 * The graph served by `langgraph dev` (see langgraph.json): the loan workflow's tools and the
 * static planner. The LangGraph API server supplies the checkpointer.
 */
import { createPlanManager } from "langgraph-replan";
import { defaultPlanner } from "../default-planner.js";
import { createLoanTools, loanPlan, loanReplan } from "../loan/workflow.js";

/** The LLM planner when OPENAI_API_KEY is set, else the static loan plan. */
const chosen = defaultPlanner({ plan: loanPlan, replan: loanReplan });
export const plannerDescription = chosen.description;

export const graph = createPlanManager({ tools: createLoanTools().tools, planner: chosen.planner }).compile();
graph.name = "plan_manager";

/**
 * `langgraph-replan/views`: what people read of a run — the user, operator and debug views, one
 * line per decision, Mermaid drawings of a plan and of a replan's diff, metrics, the HTML report,
 * and a plan as it stood at an earlier version. Pure functions of a run's state.
 *
 * @module langgraph-replan/views
 */
export { userView } from "./user-view.js";
export { operatorView } from "./operator-view.js";
export type { OperatorViewOptions } from "./operator-view.js";
export { debugView } from "./debug-view.js";
export { decisionLine } from "./decision-line.js";
export { planMermaid, planDiffMermaid } from "./mermaid.js";
export { planMetrics } from "./metrics.js";
export type { PlanMetrics } from "./metrics.js";
export { htmlReport } from "./report.js";
export type { ReportOptions } from "./report.js";
export { planDiff } from "../plan/diff.js";
export type { PlanDiff } from "../plan/schema/decision.js";
export { planAtVersion, runsAtVersion } from "../plan/history.js";
export type { PlanVersionEntry } from "../plan/history.js";
export { replanRecords } from "../plan/replan-records.js";
export type { FullReplanRecord } from "../plan/replan-records.js";

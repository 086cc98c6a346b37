/**
 * The span, event, attribute and metric names this library emits through OpenTelemetry, in the
 * GenAI semantic conventions where they name the thing (`gen_ai.*`, `error.type`) and under
 * `langgraph_replan.*` where they do not. docs/guides/operations.md "OpenTelemetry" lists them in a
 * table; a test keeps the two equal (docs/decisions/0052-opentelemetry.md).
 */

/** The instrumentation scope: the tracer's and the meter's name. */
export const SCOPE = "langgraph-replan";

/** Span names; each is followed by a space and what it runs (graph or agent, plan version, tool, model). */
export const SPANS = {
  workflow: "invoke_workflow",
  agent: "invoke_agent",
  planVersion: "plan_version",
  tool: "execute_tool",
  /** A step attempt without a tool of its own (a human, agent or external step). */
  step: "execute_step",
  model: "chat",
} as const;

export const ATTRS = {
  operation: "gen_ai.operation.name",
  conversation: "gen_ai.conversation.id",
  agentName: "gen_ai.agent.name",
  toolName: "gen_ai.tool.name",
  requestModel: "gen_ai.request.model",
  inputTokens: "gen_ai.usage.input_tokens",
  outputTokens: "gen_ai.usage.output_tokens",
  errorType: "error.type",
  graphName: "langgraph_replan.graph.name",
  goal: "langgraph_replan.goal",
  runStatus: "langgraph_replan.run.status",
  planVersion: "langgraph_replan.plan.version",
  planKind: "langgraph_replan.plan.kind",
  planSteps: "langgraph_replan.plan.steps",
  replanTrigger: "langgraph_replan.replan.trigger",
  replanScope: "langgraph_replan.replan.scope",
  brokenAssumption: "langgraph_replan.replan.broken_assumption",
  fromVersion: "langgraph_replan.replan.from_version",
  stepId: "langgraph_replan.step.id",
  attempt: "langgraph_replan.attempt",
  attemptOutcome: "langgraph_replan.attempt.outcome",
  idempotencyKey: "langgraph_replan.idempotency_key",
  rule: "langgraph_replan.rule",
  action: "langgraph_replan.action",
  failureClass: "langgraph_replan.failure_class",
  reason: "langgraph_replan.reason",
  purpose: "langgraph_replan.purpose",
  effectOutcome: "langgraph_replan.effect.outcome",
} as const;

/** Span events. Every decision is one, named by what it is about (`decisionEvent`). */
export const EVENTS = {
  decision: "langgraph_replan.decision",
  inDoubt: "langgraph_replan.effect.in_doubt",
  settled: "langgraph_replan.effect.settled",
  compensation: "langgraph_replan.compensation",
  quality: "langgraph_replan.quality.finding",
  humanWait: "langgraph_replan.human.wait",
  humanAnswer: "langgraph_replan.human.answer",
  stalled: "langgraph_replan.step.stalled",
} as const;

/** Counters (monotonic sums). */
export const METRICS = {
  decisions: "langgraph_replan.decisions",
  attempts: "langgraph_replan.attempts",
  effects: "langgraph_replan.effects",
  planVersions: "langgraph_replan.plan_versions",
} as const;

/** The longest goal a run span carries; an operator's backend is no place for a whole prompt. */
export const GOAL_CHARS = 200;

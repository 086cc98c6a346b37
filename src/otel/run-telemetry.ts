/**
 * One run's telemetry, built from the events the run sends anyway (docs/decisions/0052-opentelemetry.md):
 * the run span, a span per plan version below it, a span per step attempt below its version, every
 * decision an event on the span it is about, and the counters. The graph and the agent middleware
 * send the same events, so both are traced by this one consumer; they only say when a run starts
 * and how it ended.
 */
import type { Context, Span, Tracer } from "@opentelemetry/api";
import type { TelemetryScope } from "./api.js";
import { AttemptSpans } from "./attempt-spans.js";
import { countersOf, type Counters } from "./counters.js";
import { decisionAttributes, decisionEventName, effectOutcome } from "./decision-event.js";
import { ATTRS, EVENTS, GOAL_CHARS, SCOPE, SPANS } from "./names.js";
import type { ReplanRecord } from "../plan/schema/decision.js";
import type { Decision } from "../policy/ladder/decision.js";
import type { EventObserver, PlanEvent } from "../contracts/run-events.js";

export interface RunStart {
  face: "graph" | "agent";
  /** The graph's or the agent's name. */
  name: string;
  threadId?: string;
  goal?: string;
}

/** How a run ended: its `finished` event, a wait for a person (an interrupt), a stop, or an error. */
export type RunEnd =
  { kind: "returned" } | { kind: "waiting" } | { kind: "stopped" } | { kind: "failed"; error: unknown };

const NO_COUNTERS = undefined;

export class RunTelemetry implements EventObserver {
  private readonly run: Span;
  private readonly runContext: Context;
  private version: { number: number; span: Span; context: Context } | undefined;
  private readonly attempts: AttemptSpans;
  /** The scope's tracer, or one that records nothing when only a meter provider is registered. */
  private readonly tracer: Tracer;
  private readonly counters: Counters | undefined;
  private finished: string | undefined;
  private ended = false;

  constructor(
    private readonly scope: TelemetryScope,
    start: RunStart,
  ) {
    const { api } = scope;
    this.tracer = scope.tracer ?? api.trace.getTracer(SCOPE);
    const operation = start.face === "graph" ? SPANS.workflow : SPANS.agent;
    this.run = this.tracer.startSpan(`${operation} ${start.name}`, {
      kind: api.SpanKind.INTERNAL,
      attributes: runAttributes(operation, start),
    });
    this.runContext = api.trace.setSpan(api.context.active(), this.run);
    this.counters = scope.meter ? countersOf(scope.meter) : NO_COUNTERS;
    this.attempts = new AttemptSpans(api, this.tracer, (outcome, tool) =>
      this.counters?.attempts.add(1, { [ATTRS.attemptOutcome]: outcome, ...(tool ? { [ATTRS.toolName]: tool } : {}) }),
    );
  }

  observe(event: PlanEvent): void {
    if (this.ended) return;
    switch (event.type) {
      case "plan":
        return this.planVersion(event.version, undefined, event.steps.length);
      case "replan":
        // An extension's event may carry its records as a list.
        for (const record of ([] as ReplanRecord[]).concat(event.record)) this.planVersion(record.toVersion, record);
        return;
      case "step_started":
        return this.attempts.start(event, this.current(), event.planVersion ?? this.version?.number);
      case "step_finished":
        return this.attemptEnded(event);
      case "decision":
        return this.decision(event.decision);
      case "step_stalled":
        this.currentSpan().addEvent(EVENTS.stalled, { [ATTRS.stepId]: event.stepId, [ATTRS.attempt]: event.attempt });
        return;
      case "finished":
        this.finished = event.status;
        return;
    }
  }

  /** The context a call made now belongs under: its step's attempt, else the plan version, else the run. */
  contextFor(stepId: string | undefined): Context {
    const span = stepId === undefined ? undefined : this.attempts.spanOf(stepId);
    return span ? this.scope.api.trace.setSpan(this.runContext, span) : this.current();
  }

  end(how: RunEnd): void {
    if (this.ended) return;
    this.ended = true;
    const { api } = this.scope;
    this.attempts.endAll();
    this.version?.span.end();
    const status = this.finished ?? (how.kind === "returned" ? "waiting" : how.kind);
    this.run.setAttribute(ATTRS.runStatus, status);
    if (status === "waiting") this.run.addEvent(EVENTS.humanWait);
    if (how.kind === "failed") {
      this.run.recordException(how.error as Error);
      const type = (how.error as { name?: unknown } | null)?.name;
      this.run.setAttribute(ATTRS.errorType, typeof type === "string" ? type : "Error");
      this.run.setStatus({
        code: api.SpanStatusCode.ERROR,
        message: String((how.error as Error)?.message ?? how.error),
      });
    } else if (this.finished === "failed" || this.finished === "aborted")
      this.run.setStatus({ code: api.SpanStatusCode.ERROR, message: `run ${this.finished}` });
    this.run.end();
  }

  private planVersion(number: number, record: ReplanRecord | undefined, steps?: number): void {
    if (this.version?.number === number) {
      if (steps !== undefined) this.version.span.setAttribute(ATTRS.planSteps, steps);
      return;
    }
    const { api } = this.scope;
    const kind = planKind(number, record);
    this.counters?.planVersions.add(1, { [ATTRS.planKind]: kind });
    this.version?.span.end();
    const span = this.tracer.startSpan(
      `${SPANS.planVersion} ${number}`,
      { attributes: { [ATTRS.planVersion]: number, [ATTRS.planKind]: kind, ...replanAttributes(record, steps) } },
      this.runContext,
    );
    this.version = { number, span, context: api.trace.setSpan(this.runContext, span) };
  }

  private attemptEnded(event: Extract<PlanEvent, { type: "step_finished" }>): void {
    this.attempts.finish(event, Date.now());
    if (event.status === "succeeded" && event.key !== undefined)
      this.counters?.effects.add(1, { [ATTRS.effectOutcome]: "committed" });
  }

  private decision(decision: Decision): void {
    const { counters } = this;
    counters?.decisions.add(1, {
      [ATTRS.rule]: decision.rule,
      [ATTRS.action]: decision.action,
      [ATTRS.failureClass]: decision.failureClass,
    });
    const effect = effectOutcome(decision);
    if (effect) counters?.effects.add(1, { [ATTRS.effectOutcome]: effect });
    const name = decisionEventName(decision);
    const attributes = decisionAttributes(decision);
    const mark = (span: Span) => span.addEvent(name, attributes);
    if (!this.attempts.judge(decision, mark)) mark(this.currentSpan());
  }

  private current(): Context {
    return this.version?.context ?? this.runContext;
  }

  private currentSpan(): Span {
    return this.version?.span ?? this.run;
  }
}

function runAttributes(operation: string, start: RunStart) {
  return {
    [ATTRS.operation]: operation,
    [start.face === "graph" ? ATTRS.graphName : ATTRS.agentName]: start.name,
    ...(start.threadId !== undefined ? { [ATTRS.conversation]: start.threadId } : {}),
    ...(start.goal !== undefined ? { [ATTRS.goal]: cut(start.goal) } : {}),
  };
}

function cut(goal: string): string {
  return goal.length <= GOAL_CHARS ? goal : `${goal.slice(0, GOAL_CHARS - 1)}…`;
}

/** Why a plan version was made: the first plan, a local or global replan, a rolling horizon's extension, or a rewrite. */
function planKind(version: number, record: ReplanRecord | undefined): string {
  if (record) return record.scope === "extend" ? "extension" : `replan_${record.scope}`;
  return version === 1 ? "initial" : "revision";
}

function replanAttributes(record: ReplanRecord | undefined, steps: number | undefined) {
  return {
    ...(steps !== undefined ? { [ATTRS.planSteps]: steps } : {}),
    ...(record
      ? {
          [ATTRS.replanScope]: record.scope,
          [ATTRS.replanTrigger]: record.trigger,
          [ATTRS.fromVersion]: record.fromVersion,
          ...(record.brokenAssumption !== undefined ? { [ATTRS.brokenAssumption]: record.brokenAssumption } : {}),
        }
      : {}),
  };
}

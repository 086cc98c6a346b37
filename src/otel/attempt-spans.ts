/**
 * The spans of a run's step attempts: one per attempt, opened at `step_started`, ended at
 * `step_finished` — a failed attempt's span waits for the decision that judges it, which names its
 * failure class (the graph's classifier sends it after the attempt; the agent's driver before), and
 * ends at the time the attempt did. The agent's driver retries without a `step_finished` between
 * attempts: an attempt judged by a decision and followed by another ended failed. Every attempt
 * span that ends is counted once, by outcome (`ended`).
 */
import type { Context, Span, Tracer } from "@opentelemetry/api";
import type { OtelApi } from "./api.js";
import type { Decision } from "../policy/ladder/decision.js";
import type { PlanEvent } from "../contracts/run-events.js";
import { ATTRS, SPANS } from "./names.js";

type Started = Extract<PlanEvent, { type: "step_started" }>;
type Finished = Extract<PlanEvent, { type: "step_finished" }>;

interface OpenAttempt {
  span: Span;
  attempt: number;
  tool?: string;
  failureClass?: string;
  /** Set once the attempt ended as failed, while its span waits for its decision. */
  endedAt?: number;
}

/** Told of every attempt span that ends: its outcome (a step status, or `unfinished`) and its tool. */
export type AttemptEnded = (outcome: string, tool: string | undefined) => void;

export class AttemptSpans {
  private readonly open = new Map<string, OpenAttempt>();

  constructor(
    private readonly api: OtelApi,
    private readonly tracer: Tracer,
    private readonly ended: AttemptEnded,
  ) {}

  start(event: Started, parent: Context, planVersion: number | undefined): void {
    this.supersede(event.stepId);
    const name = event.tool === undefined ? `${SPANS.step} ${event.stepId}` : `${SPANS.tool} ${event.tool}`;
    const attributes = {
      [ATTRS.operation]: SPANS.tool,
      [ATTRS.stepId]: event.stepId,
      [ATTRS.attempt]: event.attempt,
      ...(event.tool !== undefined ? { [ATTRS.toolName]: event.tool } : {}),
      ...(planVersion !== undefined ? { [ATTRS.planVersion]: planVersion } : {}),
      ...(event.key !== undefined ? { [ATTRS.idempotencyKey]: event.key } : {}),
    };
    const span = this.tracer.startSpan(name, { kind: this.api.SpanKind.INTERNAL, attributes }, parent);
    this.open.set(event.stepId, { span, attempt: event.attempt, ...(event.tool ? { tool: event.tool } : {}) });
  }

  /** Ends the attempt's span, or leaves a failed one waiting for its decision. */
  finish(event: Finished, now: number): void {
    const open = this.open.get(event.stepId);
    if (!open) return;
    if (event.key !== undefined) open.span.setAttribute(ATTRS.idempotencyKey, event.key);
    if (event.status !== "failed") return this.end(event.stepId, open, event.status);
    if (event.note !== undefined) open.span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: event.note });
    open.endedAt = now;
    if (open.failureClass !== undefined) this.fail(event.stepId, open);
  }

  /**
   * Puts a decision on the span of the attempt it judges (`mark`), and ends that span if the attempt
   * had ended failed. False when no attempt of the decision's step and number is open.
   */
  judge(decision: Decision, mark: (span: Span) => void): boolean {
    const id = decision.stepId;
    const open = id === undefined ? undefined : this.open.get(id);
    if (id === undefined || !open || open.attempt !== decision.attempt) return false;
    open.failureClass ??= decision.failureClass;
    mark(open.span);
    if (open.endedAt !== undefined) this.fail(id, open);
    return true;
  }

  /** The open span of `stepId`'s attempt, for a model call the attempt makes. */
  spanOf(stepId: string): Span | undefined {
    return this.open.get(stepId)?.span;
  }

  /** Ends every span still open: the run is ending (finished, waiting, stopped or failed). */
  endAll(): void {
    for (const id of [...this.open.keys()]) this.supersede(id, "unfinished");
  }

  /** Ends the open span of `stepId`, if any: failed if it was judged or ended so, else as `otherwise`. */
  private supersede(stepId: string, otherwise = "unfinished"): void {
    const open = this.open.get(stepId);
    if (!open) return;
    if (open.endedAt !== undefined || open.failureClass !== undefined) this.fail(stepId, open);
    else this.end(stepId, open, otherwise);
  }

  private fail(stepId: string, open: OpenAttempt): void {
    open.span.setAttribute(ATTRS.errorType, open.failureClass ?? "unknown");
    open.span.setStatus({ code: this.api.SpanStatusCode.ERROR });
    this.end(stepId, open, "failed", open.endedAt);
  }

  private end(stepId: string, open: OpenAttempt, outcome: string, at?: number): void {
    this.open.delete(stepId);
    open.span.setAttribute(ATTRS.attemptOutcome, outcome);
    open.span.end(at);
    this.ended(outcome, open.tool);
  }
}

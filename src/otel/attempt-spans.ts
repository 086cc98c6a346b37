/**
 * The spans of a run's step attempts: one per attempt, opened at `step_started`, ended at
 * `step_finished` — a failed attempt's span waits for the decision that judges it, which names its
 * failure class (the graph's classifier sends it after the attempt; the agent's driver before), and
 * ends at the time the attempt did.
 */
import type { Context, Span, Tracer } from "@opentelemetry/api";
import type { OtelApi } from "./api.js";
import type { Decision } from "../policy/ladder/decision.js";
import type { PlanEvent } from "../runtime/events.js";
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

/** Statuses an attempt span reports as an error. */
const FAILED: ReadonlySet<string> = new Set(["failed"]);

export class AttemptSpans {
  private readonly open = new Map<string, OpenAttempt>();

  constructor(
    private readonly api: OtelApi,
    private readonly tracer: Tracer,
  ) {}

  start(event: Started, parent: Context, planVersion: number | undefined): void {
    this.close(event.stepId);
    const name = event.tool === undefined ? `${SPANS.step} ${event.stepId}` : `${SPANS.tool} ${event.tool}`;
    const span = this.tracer.startSpan(
      name,
      {
        kind: this.api.SpanKind.INTERNAL,
        attributes: {
          [ATTRS.operation]: SPANS.tool,
          [ATTRS.stepId]: event.stepId,
          [ATTRS.attempt]: event.attempt,
          ...(event.tool !== undefined ? { [ATTRS.toolName]: event.tool } : {}),
          ...(planVersion !== undefined ? { [ATTRS.planVersion]: planVersion } : {}),
          ...(event.key !== undefined ? { [ATTRS.idempotencyKey]: event.key } : {}),
        },
      },
      parent,
    );
    this.open.set(event.stepId, { span, attempt: event.attempt, ...(event.tool ? { tool: event.tool } : {}) });
  }

  /** Ends the attempt's span, or leaves a failed one waiting for its decision. Returns the tool it ran. */
  finish(event: Finished, now: number): { tool?: string } | undefined {
    const open = this.open.get(event.stepId);
    if (!open) return undefined;
    const { span } = open;
    span.setAttribute(ATTRS.attemptOutcome, event.status);
    if (event.key !== undefined) span.setAttribute(ATTRS.idempotencyKey, event.key);
    if (!FAILED.has(event.status)) this.close(event.stepId);
    else if (open.failureClass !== undefined) this.fail(event.stepId, open, now, event.note);
    else {
      open.endedAt = now;
      if (event.note !== undefined) span.setStatus({ code: this.api.SpanStatusCode.ERROR, message: event.note });
    }
    return open.tool === undefined ? {} : { tool: open.tool };
  }

  /**
   * Puts a decision on the span of the attempt it judges (`mark`), and ends that span if the attempt
   * had ended failed. False when no attempt of the decision's step and number is open.
   */
  judge(decision: Decision, now: number, mark: (span: Span) => void): boolean {
    const id = decision.stepId;
    const open = id === undefined ? undefined : this.open.get(id);
    if (!open || open.attempt !== decision.attempt) return false;
    open.failureClass ??= decision.failureClass;
    mark(open.span);
    if (open.endedAt !== undefined) this.fail(id!, open, now);
    return true;
  }

  /** The open span of `stepId`'s attempt, for a model call the attempt makes. */
  spanOf(stepId: string): Span | undefined {
    return this.open.get(stepId)?.span;
  }

  /** Ends every span still open: the run is ending (finished, waiting, stopped or failed). */
  endAll(): void {
    for (const [id, open] of [...this.open]) {
      if (open.endedAt !== undefined) this.fail(id, open, open.endedAt);
      else {
        open.span.setAttribute(ATTRS.attemptOutcome, "unfinished");
        this.close(id);
      }
    }
  }

  private fail(stepId: string, open: OpenAttempt, now: number, note?: string): void {
    if (this.open.get(stepId) !== open) return;
    open.span.setAttribute(ATTRS.errorType, open.failureClass ?? "unknown");
    open.span.setStatus({ code: this.api.SpanStatusCode.ERROR, ...(note ? { message: note } : {}) });
    this.open.delete(stepId);
    open.span.end(open.endedAt ?? now);
  }

  private close(stepId: string): void {
    const open = this.open.get(stepId);
    if (!open) return;
    this.open.delete(stepId);
    if (open.endedAt !== undefined) return this.fail(stepId, open, open.endedAt);
    open.span.end();
  }
}

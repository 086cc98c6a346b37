/**
 * A reducer channel that validates every write before applying it, so a bad
 * `graph.updateState(config, …)` fails at once with a typed error naming the field and changes
 * nothing (the update is rejected before any channel is written), instead of breaking the next
 * `invoke` with a raw TypeError. LangGraph's own `BinaryOperatorAggregate` skips the reducer for
 * the first write of a channel without a default, so the check runs in `update`, not in the reducer.
 */
import { BinaryOperatorAggregate, EmptyChannelError } from "@langchain/langgraph";
import type { z } from "zod";
import { PlanManagerError } from "../errors.js";

type Operator<V, U> = (current: V, update: U) => V;

export class CheckedChannel<V, U = V> extends BinaryOperatorAggregate<V, U> {
  private checks: WriteChecks;

  constructor(
    readonly key: string,
    readonly schema: z.ZodType,
    operator: Operator<V, U>,
    initialValueFactory?: () => V,
  ) {
    super(operator, initialValueFactory);
    this.checks = new WriteChecks(key, schema);
  }

  override fromCheckpoint(checkpoint?: V): this {
    const restored = super.fromCheckpoint(checkpoint);
    const channel = new CheckedChannel<V, U>(this.key, this.schema, this.operator, this.initialValueFactory);
    channel.value = restored.value;
    channel.checks = this.checks.copy();
    return channel as this;
  }

  override update(values: U[]): boolean {
    // LangGraph offers every available channel an empty update at each step: nothing to check.
    if (values.length === 0) return false;
    this.checks.check(values);
    return super.update(values);
  }

  override get(): V {
    if (this.value === undefined) throw EMPTY;
    return this.value;
  }

  override checkpoint(): V {
    if (this.value === undefined) throw EMPTY;
    return this.value;
  }
}

/**
 * What an empty channel of ours throws: one error, made once. LangGraph reads every channel of the
 * state for a node's input, each values chunk and each checkpoint, and catches the error of each
 * empty one by its name; a new error (and its stack) per read was a measurable part of a step's
 * cost (docs/decisions/0059-short-path.md).
 */
export const EMPTY = new EmptyChannelError();

/**
 * The write checks of one channel instance, each write checked once per superstep. Behind a
 * conditional edge LangGraph applies a node's writes twice: first to copies of the channels it
 * restores from the live ones (`fromCheckpoint`), so that the route reads the state the writes
 * make, then to the live channels. A copy records each object it validated on the checks of the
 * channel it was restored from, and that channel skips exactly that object once, the next time it
 * is written there. A primitive is always checked (it is cheap, and cannot be recorded). Without
 * that LangGraph behaviour nothing is recorded and every write is checked, as before
 * (docs/decisions/0024-fixed-cost-per-run.md has the measurements; test/graph/write-checks.test.ts pins it).
 */
export class WriteChecks {
  private readonly validated = new WeakSet<object>();

  constructor(
    private readonly key: string,
    private readonly schema: z.ZodType,
    private readonly source?: WriteChecks,
  ) {}

  /** The checks of a channel restored from this one. */
  copy(): WriteChecks {
    return new WriteChecks(this.key, this.schema, this);
  }

  check(values: readonly unknown[]): void {
    for (const value of values) {
      const recordable = typeof value === "object" && value !== null;
      if (recordable && this.validated.delete(value)) continue;
      if (!recordable || !trustedOnce(this.key, value)) checkWrite(this.key, this.schema, value);
      if (recordable) this.source?.validated.add(value);
    }
  }
}

/** Writes a node built from checked values, each with the channels that have taken it unparsed. */
const built = new WeakMap<object, Set<string>>();

/**
 * Marks a write its node built from values that were checked when they were written (a step's
 * record from the previous record, the clock and the plan): the channel takes it without parsing
 * it again, once. The zod parse of the executor's records was a step's largest check
 * (docs/decisions/0059-short-path.md). Once per channel, so an object a caller later changes and
 * writes again (`updateState`) is checked like any other write.
 */
export function builtWrite<T extends object>(value: T): T {
  built.set(value, new Set());
  return value;
}

function trustedOnce(key: string, value: object): boolean {
  const taken = built.get(value);
  if (taken === undefined || taken.has(key)) return false;
  taken.add(key);
  return true;
}

/**
 * Throws `PlanManagerError("invalid_update")` naming the field when `value` (unwrapped from an
 * `Overwrite`) does not match `schema`. Shared by every channel kind of the state, so a write is
 * checked the same way whatever its channel stores in a checkpoint.
 */
export function checkWrite(key: string, schema: z.ZodType, value: unknown): void {
  const result = schema.safeParse(overwritten(value));
  if (result.success) return;
  const issue = result.error.issues[0]!;
  const path = [key, ...issue.path.map(String)].join(".");
  throw new PlanManagerError("invalid_update", `state update rejected: ${path}: ${issue.message}`, {
    path,
    issues: result.error.issues,
  });
}

/** LangGraph's `Overwrite` wrapper bypasses reducers; its value is checked like any other. */
function overwritten(value: unknown): unknown {
  if (!isOverwrite(value)) return value;
  const record = value as Record<string, unknown>;
  return "__overwrite__" in record ? record.__overwrite__ : record.value;
}

/** LangGraph's `Overwrite`, as the class or its wire form. */
export function isOverwrite(value: unknown): boolean {
  if (value === null || typeof value !== "object") return false;
  const record = value as Record<string, unknown>;
  return "__overwrite__" in record || (record.type === "__overwrite__" && "value" in record);
}

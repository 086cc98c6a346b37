/**
 * Idempotency keys name the operation, not the step (docs/decisions/0006-idempotency-keys-name-the-operation.md).
 * A payment API rejects a key reused with other parameters, and a tool that honours keys returns the
 * old result for a reused one: so the same thread and operation (tool and resolved arguments, inputs
 * included, plus the step's optional `operation` label) always get the same key — across retries,
 * crashes, resumes, replans that hand the operation back under another step id — and a changed
 * operation never gets an old key.
 */
import { createHash } from "node:crypto";
import { canonical } from "./diff.js";
import type { Step } from "./schema/step.js";

/**
 * A step's calls commit side effects when it declares them and is not idempotent. Tools known to
 * have side effects (a tool's metadata, the middleware's `sideEffectTools`) are marked on the step
 * when the plan is recorded, so this marking is the only one read here.
 */
export function sideEffecting(step: Step): boolean {
  return (step.sideEffects?.length ?? 0) > 0 && step.idempotent === false;
}

/**
 * Digests already taken, by arguments object, then by tool and label. Every policy pass of one
 * attempt (the visit's, and each replay of its driver) asks for the key of the same snapshot's
 * arguments, which nothing writes to (docs/decisions/0059-short-path.md).
 */
const digests = new WeakMap<object, Map<string, string>>();

/** `thread:<16 hex digits of sha-256 over the canonical tool, arguments and label>`. */
export function operationKey(
  threadId: string,
  tool: string,
  args: Readonly<Record<string, unknown>>,
  operation?: string,
): string {
  const named = JSON.stringify(operation === undefined ? [tool] : [tool, operation]);
  let byName = digests.get(args);
  if (byName === undefined) digests.set(args, (byName = new Map()));
  let hex = byName.get(named);
  if (hex === undefined) {
    // Without a label the hashed value is the one keys had before labels existed.
    hex = digest(operation === undefined ? { tool, args } : { tool, args, operation });
    byName.set(named, hex);
  }
  return `${threadId}:${hex}`;
}

/**
 * The key 0.x gave the same operation (`thread:step:<digest>`): a thread committed under it
 * before keys stopped naming the step still finds its effect committed.
 */
export function stepKey(threadId: string, stepId: string, tool: string, args: Readonly<Record<string, unknown>>) {
  return `${threadId}:${stepId}:${digest({ tool, args })}`;
}

/**
 * What a step would call, as far as the plan alone says: its tool, literal arguments, the fact
 * keys it reads and its label. Two side-effecting steps of one version with the same signature
 * make the same call (docs/decisions/0006-idempotency-keys-name-the-operation.md).
 */
export function staticSignature(step: Step): string {
  const inputs = [...new Set(step.inputs ?? [])].sort();
  return canonical({ tool: step.tool, args: step.args ?? {}, inputs, operation: step.operation });
}

function digest(value: unknown): string {
  return createHash("sha256").update(canonical(value)).digest("hex").slice(0, 16);
}

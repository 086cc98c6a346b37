/**
 * Idempotency keys name the operation, not the attempt (docs/architecture.md "Side effects"). A payment
 * API rejects a key reused with other parameters, and a tool that honours keys returns the old
 * result for a reused one: so the same thread, step and operation (tool and resolved arguments,
 * inputs included) always get the same key — across retries, crashes, resumes and replans that
 * leave the operation unchanged — and a changed operation never gets an old key.
 */
import { createHash } from "node:crypto";
import { canonical } from "./diff.js";

/** `thread:step:<16 hex digits of sha-256 over the canonical tool and arguments>`. */
export function operationKey(
  threadId: string,
  stepId: string,
  tool: string,
  args: Readonly<Record<string, unknown>>,
): string {
  const digest = createHash("sha256").update(canonical({ tool, args })).digest("hex").slice(0, 16);
  return `${threadId}:${stepId}:${digest}`;
}

/** Tools for the agent tests: each counts its calls and records the idempotency keys it was given. */
import { tool } from "@langchain/core/tools";
import { z } from "zod";

export interface Ledger {
  calls: Record<string, number>;
  keys: Record<string, (string | undefined)[]>;
}

export function ledger(): Ledger {
  return { calls: {}, keys: {} };
}

/** A tool named `name` whose body gets its call number (1-based); any object arguments are accepted. */
export function countedTool(l: Ledger, name: string, body: (n: number, args: Record<string, unknown>) => unknown) {
  return tool(
    async (args: Record<string, unknown>, config) => {
      const n = (l.calls[name] ?? 0) + 1;
      l.calls[name] = n;
      (l.keys[name] ??= []).push(config?.configurable?.idempotencyKey as string | undefined);
      return body(n, args);
    },
    { name, description: name, schema: z.object({}).passthrough() },
  );
}

/**
 * A keyed step call inside `createAgent` through the effect journal
 * (docs/decisions/0043-effects-in-the-middleware.md): the graph's order (runtime/journaled-call.ts)
 * with the middleware's way of calling a tool (the rest of the middleware chain). The journal is the
 * one of the saver the agent checkpoints to (storage/, the graph's adapters: a table beside
 * SQLite's and PostgreSQL's checkpoints, this process for any other saver); an agent without a
 * checkpointer has none, as a graph without one has none.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import type { ErrorInfo } from "../plan/schema/run.js";
import type { Step } from "../plan/schema/step.js";
import { cutByTheTool } from "../policy/ladder/in-doubt.js";
import type { RunJournal } from "../runtime/effect-journal.js";
import { journaledCall, type SettledDoubt } from "../runtime/journaled-call.js";
import { lentCheckpointer } from "../runtime/lent-checkpointer.js";
import { saverAdapter } from "../storage/index.js";
import type { AttemptResult, CallEnv } from "./settle.js";

/** The effect journal of the saver a tool call's agent checkpoints to; none without a checkpointer. */
export function journalFor(configurable: Record<string, unknown> | undefined): RunJournal | undefined {
  const saver = lentCheckpointer(configurable ?? {});
  return saver === undefined ? undefined : saverAdapter(saver as BaseCheckpointSaver).journal;
}

/** What the journal made of one attempt: its result for the ladder, the key it went out under, and how it was settled. */
export interface JournaledAttempt {
  result: AttemptResult;
  key: string;
  /** The output came from the journal (a result the checkpoint lost) or from the verify probe, not a new call. */
  effect?: "journaled" | "verified";
  /** Nothing settled a call whose outcome is unknown: the error a person is asked about. */
  inDoubt?: ErrorInfo;
  /** With `inDoubt`: the journal attempt of the intent asked about, which a person's retry approves. */
  inDoubtAttempt?: number;
  /** Calls in doubt the journal settled on the way, in order: each is a decision. */
  settled: SettledDoubt[];
}

export async function journaledAttempt(
  env: CallEnv,
  journal: RunJournal,
  step: Step,
  c: { tool: string; args: Record<string, unknown>; key: string; attempt: number; timeoutMs: number },
  trusted: Readonly<Record<string, unknown>>,
): Promise<JournaledAttempt> {
  let last: AttemptResult | undefined;
  const made = await journaledCall({
    journal,
    threadId: env.threadId,
    key: c.key,
    step,
    tool: c.tool,
    args: c.args,
    attempt: c.attempt,
    trusted,
    honoursKeys: env.options.honoursKeys,
    approvedKey: env.state.steps[step.id]?.approvedKey,
    approvedAttempt: env.state.steps[step.id]?.approvedAttempt,
    approvalByAttempt: true,
    now: env.at,
    call: async (key) => {
      last = await env.invoke(c.tool, c.args, key, c.timeoutMs);
      if (last.ok) return { ok: true, output: last.output };
      return { ok: false, error: last.error, cut: last.timeout === true || cutByTheTool(last.error) };
    },
    probe: async (tool, args, key) => {
      const read = await env.invoke(tool, args, key, c.timeoutMs);
      if (!read.ok) throw Object.assign(new Error(read.error.message), { name: read.error.name });
      return read.output;
    },
  });
  if (made.kind === "in_doubt") {
    const inDoubt = { name: "EffectInDoubt", message: made.reason };
    const result: AttemptResult = { ok: false, error: inDoubt, calls: last?.calls ?? 1 };
    return { result, key: made.key, inDoubt, inDoubtAttempt: made.attempt, settled: made.settled };
  }
  const { outcome } = made;
  // The tool's own answer, as the ladder reads it (its text, its timeout flag), when it gave one.
  const own = last && !made.effect ? last : undefined;
  const result: AttemptResult = outcome.ok
    ? { ok: true, content: own?.ok ? own.content : (JSON.stringify(outcome.output) ?? "null"), output: outcome.output }
    : (own ?? { ok: false, error: outcome.error });
  return { result, key: made.key, ...(made.effect ? { effect: made.effect } : {}), settled: made.settled };
}

/**
 * The effect journal as a run sees it (docs/decisions/0038-effect-journal.md), carried in
 * the run's config like its dispatcher. The graph hands in the journal of the saver the run
 * checkpoints to (`SaverAdapter.journal`, storage/journal.ts, which satisfies this port), so it lives
 * beside the checkpoints. A run without a checkpointer has none: it cannot be resumed, so no call of
 * it can be found in doubt later.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { ErrorInfo } from "../plan/schema/run.js";

/** What was about to be called. */
export interface EffectIntent {
  /** The operation's idempotency key. */
  key: string;
  stepId: string;
  tool: string;
  args: Record<string, unknown>;
  attempt: number;
  /** When the intent was recorded (the run's clock, ISO). */
  at: string;
}

/** How the call ended: its output, or the error the tool threw (a throw is an answer, not a doubt). */
export type EffectResult = { ok: true; output: unknown } | { ok: false; error: ErrorInfo };

/** An intent and, once the call answered, its result; no result: the call is in doubt. */
export interface JournalEntry extends EffectIntent {
  result?: EffectResult;
}

/** What a run asks of the journal. */
export interface RunJournal {
  intent(threadId: string, intent: EffectIntent): Promise<void>;
  result(threadId: string, key: string, result: EffectResult): Promise<void>;
  lookup(threadId: string, key: string): Promise<JournalEntry | undefined>;
}

/** Where a run keeps its journal (the `__` prefix keeps it out of checkpoint and trace metadata). */
const JOURNAL_KEY = "__langgraph_replan_journal";

export function withJournal<C extends { configurable?: Record<string, unknown> }>(
  config: C,
  journal: RunJournal | undefined,
): C {
  if (journal === undefined) return config;
  return { ...config, configurable: { ...config.configurable, [JOURNAL_KEY]: journal } };
}

export function journalOf(config: LangGraphRunnableConfig): RunJournal | undefined {
  return config.configurable?.[JOURNAL_KEY] as RunJournal | undefined;
}

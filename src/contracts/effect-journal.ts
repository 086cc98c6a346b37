/**
 * The effect journal's contract (docs/decisions/0038-effect-journal.md): what a run writes before and
 * after a side-effecting call, and what a backend keeps. storage/journal.ts implements it beside the
 * saver's tables; runtime/effect-journal.ts carries it in a run's config.
 */
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

/** An intent and, once the call answered, its result; no result: the call's outcome is unknown (in doubt). */
export interface JournalEntry extends EffectIntent {
  result?: EffectResult;
}

/** What a run asks of the journal. */
export interface RunJournal {
  /** Records an intent, replacing an earlier entry of the same key (a new attempt after an error result). */
  intent(threadId: string, intent: EffectIntent): Promise<void>;
  /** Records the result of the key's latest intent. */
  result(threadId: string, key: string, result: EffectResult): Promise<void>;
  lookup(threadId: string, key: string): Promise<JournalEntry | undefined>;
}

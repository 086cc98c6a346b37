/**
 * The effect journal as a run sees it (docs/decisions/0038-effect-journal.md), carried in
 * the run's config like its dispatcher. The graph hands in the journal of the saver the run
 * checkpoints to (`SaverAdapter.journal`, storage/journal.ts, which satisfies this port), so it lives
 * beside the checkpoints. A run without a checkpointer has none: it cannot be resumed, so no call of
 * it can be found in doubt later.
 */
import type { LangGraphRunnableConfig } from "@langchain/langgraph";
import type { RunJournal } from "../contracts/effect-journal.js";
import { runPart, withRunPart } from "./run-parts.js";

export type { EffectIntent, EffectResult, JournalEntry, RunJournal } from "../contracts/effect-journal.js";

export function withJournal<C extends { configurable?: Record<string, unknown> }>(
  config: C,
  journal: RunJournal | undefined,
): C {
  if (journal === undefined) return config;
  return withRunPart(config, "journal", journal);
}

export function journalOf(config: LangGraphRunnableConfig): RunJournal | undefined {
  return runPart(config, "journal") as RunJournal | undefined;
}

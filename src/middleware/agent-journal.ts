/**
 * The effect journal a keyed step call inside `createAgent` goes through
 * (docs/decisions/0043-effects-in-the-middleware.md), in the one driver's order (runtime/run-attempt.ts)
 * with the middleware's way of calling a tool (the rest of the middleware chain). The journal is the
 * one of the saver the agent checkpoints to (storage/, the graph's adapters: a table beside
 * SQLite's and PostgreSQL's checkpoints, this process for any other saver); an agent without a
 * checkpointer has none, as a graph without one has none.
 */
import type { BaseCheckpointSaver } from "@langchain/langgraph";
import type { RunJournal } from "../runtime/effect-journal.js";
import { lentCheckpointer } from "../runtime/lent-checkpointer.js";
import { saverAdapter } from "../storage/index.js";

/** The effect journal of the saver a tool call's agent checkpoints to; none without a checkpointer. */
export function journalFor(configurable: Record<string, unknown> | undefined): RunJournal | undefined {
  const saver = lentCheckpointer(configurable ?? {});
  return saver === undefined ? undefined : saverAdapter(saver as BaseCheckpointSaver).journal;
}

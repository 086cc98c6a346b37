/**
 * A step call the run's stop ended during a retry's backoff
 * (docs/decisions/0071-a-stopped-backoff-keeps-its-attempts.md). LangGraph drops the writes of a task
 * its caller stopped, so the failed attempts, their charge and the ladder's retry would be lost, and
 * each `invoke(null)` would begin the step again at attempt 1: past `retry.maxAttempts` and the budget.
 * What the drive did is kept in the run's journal (the saver's, beside its checkpoints), and the call
 * made again goes on from it: at the next attempt, after the backoff the retry scheduled, as the
 * graph's executor does with the classifier's record.
 */
import { z } from "zod";
import type { RunJournal } from "../contracts/effect-journal.js";
import { StepRunSchema, type StepRun } from "../plan/schema/run.js";
import { DecisionSchema, type Decision } from "../policy/ladder/decision.js";
import type { AgentPlanValues } from "./agent-state.js";

export const StoppedDriveSchema = z.object({
  /** The plan version and the step's attempts in the checkpoint the drive began from: it carries on only from there. */
  planVersion: z.number().int(),
  from: z.number().int().min(0),
  /** The step's record at the stop: pending, with the retry's backoff as `nextDelayMs`. */
  run: StepRunSchema,
  /** The decisions the stopped drives took, in order. */
  decisions: z.array(DecisionSchema),
  /** What their attempts charged. */
  charged: z.number().min(0),
});
export type StoppedDrive = z.infer<typeof StoppedDriveSchema>;

/**
 * Which call a stopped drive is of: the step, and the model's tool call that `invoke(null)` makes again
 * (its id, and the names of the graphs it runs in: two agents of one thread keep theirs apart).
 */
export interface DriveOf {
  stepId: string;
  callId: string;
  /** The node names of the call's checkpoint namespace (`agent|tools`), without task ids, which a resume may change. */
  graphs: string;
}

/** Where a call's stopped drive is kept: apart from every operation key (those are hashes). */
const keyOf = (d: DriveOf) => `stopped-drive:${d.stepId}:${d.graphs}:${d.callId}`;

/** The node names of a checkpoint namespace (`a:<task>|b:<task>` → `a|b`). */
export function graphsOf(checkpointNs: unknown): string {
  if (typeof checkpointNs !== "string") return "";
  return checkpointNs
    .split("|")
    .map((part) => part.split(":")[0])
    .join("|");
}

/**
 * The stopped drives this process is still writing, per journal, thread and step: LangGraph hands the
 * caller the stop before the stopped task has written, so a resumed call waits for them.
 */
const writing = new WeakMap<RunJournal, Map<string, Promise<void>>>();
const writingKey = (threadId: string, d: DriveOf) => `${threadId}\u0000${keyOf(d)}`;

/** The stopped drive the call goes on from, when the checkpoint is still the one it began from. */
export async function carriedDrive(
  journal: RunJournal | undefined,
  threadId: string,
  state: Pick<AgentPlanValues, "plan" | "steps">,
  of: DriveOf,
): Promise<StoppedDrive | undefined> {
  if (!journal) return undefined;
  await writing
    .get(journal)
    ?.get(writingKey(threadId, of))
    ?.catch(() => undefined);
  // A journal that cannot answer carries nothing on: the call starts from the checkpoint, as before.
  const entry = await journal.lookup(threadId, keyOf(of)).catch(() => undefined);
  if (!entry?.result?.ok) return undefined;
  const parsed = StoppedDriveSchema.safeParse(entry.result.output);
  if (!parsed.success) return undefined;
  const drive = parsed.data;
  const from = state.steps[of.stepId]?.attempts ?? 0;
  return drive.planVersion === state.plan?.version && drive.from === from ? drive : undefined;
}

/** Keeps a stopped drive (an intent, then its result: the entry is never left looking like a call in doubt for long). */
export async function keepStopped(
  journal: RunJournal,
  threadId: string,
  of: DriveOf,
  call: { tool: string; args: Record<string, unknown>; at: string },
  drive: StoppedDrive,
): Promise<void> {
  const key = keyOf(of);
  const write = async () => {
    await journal.intent(threadId, { ...call, stepId: of.stepId, key, attempt: drive.run.attempts });
    await journal.result(threadId, key, { ok: true, output: drive });
  };
  const kept = write();
  const mine = writing.get(journal) ?? new Map<string, Promise<void>>();
  const at = writingKey(threadId, of);
  writing.set(journal, mine.set(at, kept));
  try {
    await kept;
  } finally {
    if (mine.get(at) === kept) mine.delete(at);
  }
}

/**
 * The drive a stop ended, on top of the one it went on from: the step pending at its attempts so far,
 * the retry's backoff scheduled on the record (as the classifier schedules it for the graph).
 */
export function stoppedDrive(
  base: Pick<StoppedDrive, "planVersion" | "from"> & { carried: StoppedDrive | undefined },
  done: { run: StepRun; decisions: Decision[]; charged: number },
): StoppedDrive {
  const delay = done.decisions.findLast((d) => d.action === "retry")?.delayMs;
  const run: StepRun = { ...done.run, status: "pending", ...(delay === undefined ? {} : { nextDelayMs: delay }) };
  const carried = base.carried;
  return {
    planVersion: base.planVersion,
    from: base.from,
    run,
    decisions: [...(carried?.decisions ?? []), ...done.decisions],
    charged: (carried?.charged ?? 0) + done.charged,
  };
}

/**
 * Side-effecting calls whose outcome was unknown, as the views show them
 * (docs/decisions/0038-effect-journal.md): how each was settled — by the step's verify probe (it happened, or
 * it did not), by a call again under a key the tool honours, or by a person asked about it (it happened, or
 * call it again) — one line per settlement, the call in doubt now, and the steps still in doubt. Pure.
 */
import { inDoubtSettlement, type InDoubtSettlement } from "../policy/ladder/in-doubt.js";
import type { PlanManagerStateType } from "../runtime/state.js";

/** Settlements of calls in doubt, by kind (policy/ladder/in-doubt.ts, `InDoubtSettlement`); 0 when none. */
export type InDoubtCounts = Record<InDoubtSettlement, number>;

type Decisions = PlanManagerStateType["decisions"];

/** Counts per settlement, every kind present (0 for a run with no call in doubt). */
export function inDoubtCounts(decisions: readonly Decisions[number][] | undefined): InDoubtCounts {
  const counts: InDoubtCounts = { verified: 0, notHappened: 0, recalled: 0, asked: 0, happened: 0, retried: 0 };
  for (const d of decisions ?? []) {
    const kind = inDoubtSettlement(d.rule);
    if (kind !== undefined) counts[kind]++;
  }
  return counts;
}

/** Whether any call was in doubt in the run. */
export function anyInDoubt(counts: InDoubtCounts): boolean {
  return Object.values(counts).some((n) => n > 0);
}

const SAID: Record<InDoubtSettlement, string> = {
  verified: "verified by its probe",
  notHappened: "its probe said it did not happen",
  recalled: "called again under the key its tool honours",
  asked: "asked a person",
  happened: "a person said it happened",
  retried: "a person had it called again",
};

/** One line per settlement, e.g. "pay attempt 1 (#2): asked a person". */
export function inDoubtLines(decisions: Decisions | undefined): string[] {
  return (decisions ?? []).flatMap((d) => {
    const kind = inDoubtSettlement(d.rule);
    return kind === undefined ? [] : [`${d.stepId ?? "-"} attempt ${d.attempt} (#${d.seq}): ${SAID[kind]}`];
  });
}

const SUMMED: Record<InDoubtSettlement, string> = {
  verified: "verified by its probe",
  notHappened: "not happened by its probe",
  recalled: "called again under its key",
  asked: "asked a person",
  happened: "said happened by a person",
  retried: "called again by a person",
};

/** The operator's summary, e.g. "effects in doubt: 1 verified by its probe, 1 asked a person"; empty when none. */
export function inDoubtSummary(counts: InDoubtCounts): string[] {
  const parts = (Object.keys(SUMMED) as InDoubtSettlement[]).flatMap((k) =>
    counts[k] > 0 ? [`${counts[k]} ${SUMMED[k]}`] : [],
  );
  return parts.length > 0 ? [`effects in doubt: ${parts.join(", ")}`] : [];
}

/**
 * The steps whose call is still in doubt: the last settlement recorded for the step is a person asked
 * (`effect.in-doubt`), not yet answered (or the run ended without an answer: aborted, stopped).
 */
export function stillInDoubt(decisions: Decisions | undefined): Set<string> {
  const last = new Map<string, InDoubtSettlement>();
  for (const d of decisions ?? []) {
    const kind = inDoubtSettlement(d.rule);
    if (kind !== undefined && d.stepId !== undefined) last.set(d.stepId, kind);
  }
  return new Set([...last].filter(([, kind]) => kind === "asked").map(([id]) => id));
}

/** The call a person is asked about now: its step, tool and key, and the answers. Empty otherwise. */
export function inDoubtNow(pending: PlanManagerStateType["pendingHuman"] | undefined): string[] {
  const doubt = pending?.kind === "escalation" ? pending.context.inDoubt : undefined;
  if (!doubt) return [];
  return [
    `in doubt now: ${pending?.stepId ?? "-"} (${doubt.tool} under key ${doubt.key}): ${pending!.options.join(", ").replace(/, ([^,]*)$/, " or $1")}?`,
  ];
}

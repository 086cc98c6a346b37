/**
 * Side-effecting calls whose outcome was unknown, as the views show them
 * (docs/decisions/0038-effect-journal.md): how many the step's verify probe settled, how many a person
 * was asked about and said happened, one line per settlement, and the call in doubt now. Pure.
 */
import { inDoubtSettlement, type InDoubtSettlement } from "../policy/attempt/in-doubt.js";
import type { PlanManagerStateType } from "../runtime/state.js";

export interface InDoubtCounts {
  /** Settled by the step's verify probe. */
  verified: number;
  /** A person was asked (`effect.in-doubt`). */
  asked: number;
  /** A person said it happened and gave its output. */
  happened: number;
}

type Decisions = PlanManagerStateType["decisions"];

/** Counts per settlement; undefined for a run with no call in doubt. */
export function inDoubtCounts(decisions: Decisions | undefined): InDoubtCounts | undefined {
  const counts: InDoubtCounts = { verified: 0, asked: 0, happened: 0 };
  let any = false;
  for (const d of decisions ?? []) {
    const kind = inDoubtSettlement(d.rule);
    if (kind === undefined) continue;
    counts[kind]++;
    any = true;
  }
  return any ? counts : undefined;
}

const SAID: Record<InDoubtSettlement, string> = {
  verified: "verified by its probe",
  asked: "asked a person",
  happened: "a person said it happened",
};

/** One line per settlement, e.g. "pay attempt 1 (#2): asked a person". */
export function inDoubtLines(decisions: Decisions | undefined): string[] {
  return (decisions ?? []).flatMap((d) => {
    const kind = inDoubtSettlement(d.rule);
    return kind === undefined ? [] : [`${d.stepId ?? "-"} attempt ${d.attempt} (#${d.seq}): ${SAID[kind]}`];
  });
}

/** The operator's summary, e.g. "effects in doubt: 1 verified by its probe, 1 asked a person"; empty when none. */
export function inDoubtSummary(counts: InDoubtCounts | undefined): string[] {
  if (!counts) return [];
  const parts = [
    counts.verified ? `${counts.verified} verified by its probe` : "",
    counts.asked ? `${counts.asked} asked a person` : "",
    counts.happened ? `${counts.happened} said happened by a person` : "",
  ].filter(Boolean);
  return [`effects in doubt: ${parts.join(", ")}`];
}

/** The call a person is asked about now: its step, tool and key, and the answers. Empty otherwise. */
export function inDoubtNow(pending: PlanManagerStateType["pendingHuman"] | undefined): string[] {
  const doubt = pending?.kind === "escalation" ? pending.context.inDoubt : undefined;
  if (!doubt) return [];
  return [
    `in doubt now: ${pending?.stepId ?? "-"} (${doubt.tool} under key ${doubt.key}): ${pending!.options.join(", ").replace(/, ([^,]*)$/, " or $1")}?`,
  ];
}

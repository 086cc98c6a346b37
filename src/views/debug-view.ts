/**
 * The debug view (post-mortem): the full timeline — every attempt with timestamps and errors,
 * every decision with its rule, every replan with its diff, and cost per step.
 */
import type { PlanManagerStateType } from "../runtime/state.js";
import { planDiff } from "../plan/diff.js";
import { planAtVersion, runHistory } from "../plan/history.js";
import { replanRecords } from "../plan/replan-records.js";
import type { ReplanRecord } from "../plan/schema/decision.js";
import type { StepRun } from "../plan/schema/run.js";
import { decisionLine } from "./decision-line.js";
import { compensationLines } from "./compensations.js";
import { inDoubtLines } from "./effects.js";
import { printable } from "./printable.js";
import type { ViewOutcome } from "./quality-view.js";

type DebugState = Pick<
  PlanManagerStateType,
  "goal" | "plan" | "planHistory" | "steps" | "facts" | "status" | "decisions" | "replans" | "budget" | "sideEffects"
> &
  Partial<Pick<PlanManagerStateType, "compensations">> & {
    outcome?: ViewOutcome | undefined;
  };

/** Each step's attempts, earlier plan versions first; a step a replan removed is listed once. */
function stepLines(state: DebugState): string[] {
  const lines: string[] = [];
  const planned: ReadonlySet<string> = new Set((state.plan?.steps ?? []).map((s) => s.id));
  const ids = new Set<string>([...planned, ...Object.keys(state.steps)]);
  const earlier = runHistory(state).filter((r) => !r.current);
  for (const id of ids) {
    const run = state.steps[id]!;
    if (!run) continue;
    // Earlier versions' attempts come first, each with its version: a replan resets the record, not the history.
    const before = earlier.filter((x) => x.stepId === id);
    // A step a replan removed keeps a record marked invalidated that repeats its last attempt: one
    // line says both, under the version it ran in ("succeeded → invalidated").
    const last = before.at(-1);
    const repeated = !planned.has(id) && last?.run.attempts === run.attempts && last.run.startedAt === run.startedAt;
    for (const e of repeated ? before.slice(0, -1) : before) lines.push(...runLines(`${id} (v${e.version})`, e.run));
    if (repeated) lines.push(...runLines(`${id} (v${last.version})`, last.run, run.status));
    else lines.push(...runLines(id, run));
  }
  return lines;
}

const round = (n: number | undefined) => Math.round((n ?? 0) * 1e6) / 1e6;

/**
 * The debug view of a run: a timeline with timestamps, errors, decisions with rule ids, replan diffs and cost
 * per step.
 */
export function debugView(state: DebugState): string[] {
  const lines: string[] = [`goal: ${printable(state.goal)}`, `status: ${state.status}`, "", "steps:"];
  lines.push(...stepLines(state));
  lines.push("", "decisions:");
  if (state.decisions.length === 0) lines.push("  (none)");
  for (const d of state.decisions) {
    const delay = d.delayMs !== undefined ? ` after ${d.delayMs} ms` : "";
    lines.push(
      `  #${d.seq} ${d.at} v${d.planVersion} ${d.stepId ?? "-"} attempt ${d.attempt}: ${decisionLine(d)}${delay}`,
    );
    lines.push(`     ${printable(d.reason.split("\n").join(" "))}`);
  }
  lines.push("", "replans:");
  if (state.replans.length === 0) lines.push("  (none)");
  // Extension records hold what they added; the view lists what each version kept, as it always did.
  for (const r of replanRecords(state)) {
    lines.push(
      `  v${r.fromVersion} → v${r.toVersion} ` +
        `(${r.scope}${r.brokenAssumption ? `, assumption ${r.brokenAssumption}` : ""}): ` +
        printable(r.trigger.split("\n")[0]!),
    );
    if (r.changedSteps?.length) lines.push(`    changed: ${r.changedSteps.join(", ")}`);
    const source = memorySource(r);
    if (source) lines.push(`    source: ${source}`);
    const before = planAtVersion(state, r.fromVersion);
    const after = planAtVersion(state, r.toVersion);
    if (before && after) {
      const diff = planDiff(before, after);
      lines.push(
        `    diff: +[${diff.added.join(", ")}] -[${diff.removed.join(", ")}] ` +
          `~[${diff.changed.map((c) => `${c.id}(${c.fields.join(",")})`).join(", ")}]`,
      );
    }
    lines.push(
      `    facts: trusted [${r.facts.trusted.join(", ")}] suspect [${r.facts.suspect.join(", ")}] invalidated ` +
        `[${r.facts.invalidated.join(", ")}]`,
    );
  }
  lines.push("", "facts:");
  for (const [key, f] of Object.entries(state.facts)) {
    lines.push(
      `  ${key} = ${printable(JSON.stringify(f.value) ?? "undefined")} [${f.label}] by ${f.producedBy} ` +
        `(v${f.planVersion})${f.derivedFrom.length ? ` from ${f.derivedFrom.join(", ")}` : ""}`,
    );
  }
  lines.push("", `cost: execution ${round(state.budget.spent)}, replanning ${round(state.budget.replanSpent)}`);
  if (state.sideEffects.length > 0)
    lines.push(`side effects: ${state.sideEffects.map((s) => `${s.stepId}@${s.idempotencyKey}`).join(", ")}`);
  const doubted = inDoubtLines(state.decisions);
  if (doubted.length > 0) lines.push("effects in doubt:", ...doubted.map((l) => `  ${printable(l)}`));
  const undone = compensationLines(state.compensations);
  if (undone.length > 0) lines.push("compensations:", ...undone.map((l) => `  ${printable(l)}`));
  // A planMiddleware thread's outcome has a summary only when it completed degraded.
  if (state.outcome?.summary !== undefined) lines.push(`outcome: ${printable(state.outcome.summary)}`);
  return lines;
}

function runLines(label: string, run: StepRun, became?: StepRun["status"]): string[] {
  const times = run.startedAt ? ` ${run.startedAt} → ${run.endedAt ?? "…"}` : "";
  const plural = run.attempts === 1 ? "" : "s";
  const notes =
    (run.usedFallback ? ", fallback" : "") +
    (run.doneBy ? `, done by a ${run.doneBy}` : "") +
    (run.skipReason ? ` (${run.skipReason})` : "");
  const lines = [
    `  ${label}: ${run.status}${became && became !== run.status ? ` → ${became}` : ""}, ` +
      `${run.attempts} attempt${plural}${notes}, cost ${round(run.cost)}${times}`,
  ];
  const e = run.error;
  if (e)
    lines.push(
      `    error: ${e.name}${e.status ? ` ${e.status}` : ""}${e.code ? ` ${e.code}` : ""}: ${printable(e.message)}`,
    );
  return lines;
}

/** Where a replan's replacement came from, when replan memory was on. */
function memorySource(r: ReplanRecord): string | undefined {
  const revision = r.memoryRevision ? `, revision ${r.memoryRevision}` : "";
  if (r.source === "memory") return `memory (entry ${r.memoryKey}${revision})`;
  // Saved only if the key is free or its entry retired when the branch completes (hint mode: it rarely is).
  if (r.memoryKey) return `planner (key ${r.memoryKey}; saved when its branch completes unless a healthy entry has it)`;
  return undefined;
}

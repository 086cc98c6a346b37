/**
 * A self-contained HTML report of one run: timeline, plan versions side by side with their
 * diffs, decisions, and fact labels. Diagrams are Mermaid; pass the Mermaid browser bundle as
 * `mermaidScript` to inline it (the report then renders offline), or leave it out to get the
 * diagram sources as text.
 */
import { statusLabel, type ViewOutcome } from "./quality-view.js";
import type { PlanManagerStateType } from "../runtime/state.js";
import { planDiff } from "../plan/diff.js";
import { planAtVersion, runHistory, runsAtVersion } from "../plan/history.js";
import { planDiffMermaid, planMermaid } from "./mermaid.js";
import { printableLines } from "./printable.js";
import { assignLanes, timeAxis } from "./lanes.js";
import { compensationLines } from "./compensations.js";
import { inDoubtLines } from "./effects.js";
import { costsByTier } from "./model-costs.js";
import { MERMAID_RUNNER, REPORT_STYLE, headerRow, row } from "./report-template.js";

const TIMELINE_HEADERS = ["started", "ended", "plan", "step", "status", "attempts", "cost", "last error"];
const DECISION_HEADERS = ["#", "at", "plan", "step", "attempt", "class", "action", "rule", "reason"];
const FACT_HEADERS = ["fact", "label", "value", "produced by", "plan", "derived from"];

type ReportState = Pick<
  PlanManagerStateType,
  "goal" | "status" | "plan" | "planHistory" | "steps" | "facts" | "decisions" | "replans" | "budget" | "sideEffects"
> &
  Partial<Pick<PlanManagerStateType, "usage" | "compensations">> & { outcome?: ViewOutcome | undefined };

/** Options of `htmlReport`: the title, and how the page loads Mermaid. */
export interface ReportOptions {
  title?: string;
  /** Source of Mermaid's browser bundle (`mermaid/dist/mermaid.min.js`), inlined into the page. */
  mermaidScript?: string;
  /**
   * Where the page loads Mermaid's browser bundle from (`<script src>`), e.g. `"mermaid.min.js"`
   * for a copy beside the report: the page stays small (the bundle is megabytes) and one copy
   * serves every report in the folder. Given with `mermaidScript`, this one is used.
   */
  mermaidSrc?: string;
}

/** ISO timestamps order as plain text (no locale collation). */
const byText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Markup as text; control characters and bidirectional overrides (tools' words) shown as `\uXXXX`. */
const esc = (value: unknown): string =>
  printableLines(String(value ?? "")).replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!,
  );

/**
 * An HTML page of a run: plan versions side by side with their diffs, the timeline, the decisions and the
 * fact labels.
 */
export function htmlReport(state: ReportState, options: ReportOptions = {}): string {
  const title = options.title ?? `Run report: ${state.goal}`;
  const versions = Array.from({ length: state.plan?.version ?? 0 }, (_, i) => i + 1);
  const columns = versions.map((v) => versionColumn(state, v));
  const history = runHistory(state);
  const earlier = new Set(history.filter((r) => !r.current).map((r) => r.stepId));
  const timeline = timelineRows(state, history, versions, earlier);
  const lanes = laneChart(
    history.filter((r) => !(r.current && r.run.status === "invalidated" && earlier.has(r.stepId))),
    (stepId, version) => planAtVersion(state, version)?.steps.find((s) => s.id === stepId)?.human !== undefined,
  );
  const decisions = state.decisions.map((d) =>
    row([
      d.seq,
      esc(d.at),
      `v${d.planVersion}`,
      esc(d.stepId ?? "—"),
      d.attempt,
      esc(d.by === "person" ? "person" : d.failureClass),
      esc(d.action),
      `<code>${esc(d.rule)}</code>`,
      { class: "free", html: esc(d.reason) },
    ]),
  );
  const facts = factRows(state);
  const bundle =
    options.mermaidSrc !== undefined
      ? `<script src="${esc(options.mermaidSrc)}"></script>`
      : options.mermaidScript
        ? `<script>${options.mermaidScript.replace(/<\/script/gi, "<\\/script")}</script>`
        : "";
  const script = bundle ? `${bundle}\n<script>${MERMAID_RUNNER}</script>` : "";
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(title)}</title>
<style>
${REPORT_STYLE}
</style></head>
<body>
<h1>${esc(title)}</h1>
<p><strong>Status:</strong> ${esc(statusLabel(state.status, state.outcome))} — ${esc(state.outcome?.summary ?? stepCount(state))}</p>
<p><strong>Cost:</strong> execution ${esc(state.budget.spent)}, replanning ${esc(state.budget.replanSpent)} · \
<strong>Side effects:</strong> ${esc(state.sideEffects.map((s) => s.idempotencyKey).join(", ") || "none")}</p>
${inDoubtBlock(state)}${compensationBlock(state)}${tierTable(state)}
<h2>Plan versions</h2>
<div class="versions">${columns.join("\n")}</div>
<h2>Timeline</h2>
${lanes}
<table>${headerRow(TIMELINE_HEADERS)}${timeline.join("")}</table>
<h2>Decisions</h2>
<table>${headerRow(DECISION_HEADERS)}${decisions.join("") || '<tr><td colspan="9">none</td></tr>'}</table>
<h2>Facts</h2>
<table>${headerRow(FACT_HEADERS)}${facts.join("")}</table>
${script}
</body></html>
`;
}

/** The status line's words when the run keeps no outcome (a `planMiddleware` thread, or a run still going). */
function stepCount(state: ReportState): string {
  const steps = state.plan?.steps ?? [];
  if (steps.length === 0) return "no plan yet";
  const done = steps.filter((s) => state.steps[s.id]?.status === "succeeded").length;
  return `${done} of ${steps.length} steps succeeded (plan v${state.plan!.version})`;
}

/** A wait's length as people say it: "1 h 5 min", "12 min", "40 s" (`exact`: down to the second). */
function duration(ms: number, exact = false): string {
  const s = Math.round(ms / 1000);
  const [h, m, sec] = [Math.floor(s / 3600), Math.floor((s % 3600) / 60), s % 60];
  const parts = h > 0 ? [`${h} h`, `${m} min`] : m > 0 ? [`${m} min`] : [`${sec} s`];
  if (exact && (h > 0 || m > 0)) parts.push(`${sec} s`);
  return parts.join(" ");
}

function factRows(state: ReportState): string[] {
  return Object.entries(state.facts).map(([k, f]) =>
    row([
      esc(k),
      { class: `l-${esc(f.label)}`, html: esc(f.label) },
      `<code>${esc(JSON.stringify(f.value))}</code>`,
      esc(f.producedBy),
      `v${f.planVersion}`,
      esc(f.derivedFrom.join(", ")),
    ]),
  );
}

/** Agent steps' model calls per tier (nothing when no agent step called a model). */
function tierTable(state: ReportState): string {
  const rows = costsByTier(state.usage).map(
    (r) =>
      `<tr><td>${esc(r.tier)}</td><td>${r.calls}</td><td>${r.failed}</td><td>${r.inputTokens}</td>` +
      `<td>${r.outputTokens}</td><td>${esc(r.cost.toFixed(4))}</td></tr>`,
  );
  if (rows.length === 0) return "";
  const head =
    "<tr><th>tier</th><th>calls</th><th>failed</th><th>input tokens</th><th>output tokens</th><th>cost</th></tr>";
  return `<h2>Model calls by tier</h2>\n<table>${head}${rows.join("")}</table>`;
}

/**
 * The timeline drawn as lanes: one per step running at the same time, bars placed by start and
 * end on one time axis, so steps that ran together sit one above the other.
 */
function laneChart(
  records: { stepId: string; version: number; run: { startedAt?: string; endedAt?: string; status: string } }[],
  isHuman: (stepId: string, version: number) => boolean,
) {
  const spans = records.flatMap(({ stepId, version, run }) => {
    const start = Date.parse(run.startedAt ?? "");
    const end = Date.parse(run.endedAt ?? "");
    if (!Number.isFinite(start) || !Number.isFinite(end)) return [];
    return [{ id: `${stepId}@v${version}`, stepId, status: run.status, start, end }];
  });
  const waits = new Set(records.filter((r) => isHuman(r.stepId, r.version)).map((r) => `${r.stepId}@v${r.version}`));
  if (spans.length === 0) return "";
  const { lanes, placed } = assignLanes(spans);
  const axis = timeAxis(spans, (span) => waits.has((span as (typeof spans)[number]).id));
  const pct = (fraction: number) => (fraction * 100).toFixed(3);
  const rows = Array.from({ length: lanes }, (_, lane) => {
    const bars = placed
      .filter((p) => p.lane === lane)
      .map(
        (p) =>
          `<div class="bar s-${esc(p.status)}" data-step="${esc(p.stepId)}" ` +
          `title="${esc(p.stepId)}: ${p.end - p.start} ms" ` +
          `style="left:${pct(axis.place(p.start))}%;width:max(2px,${pct(axis.place(p.end) - axis.place(p.start))}%)">` +
          `${esc(p.stepId)}</div>`,
      );
    return `<div class="lane" data-lane="${lane}">${bars.join("")}</div>`;
  });
  const gaps = axis.gaps.map(
    (g) =>
      `<div class="gap" style="left:${pct(g.at)}%;width:${pct(g.width)}%" title="${duration(g.end - g.start, true)} ` +
      `drawn shortened: no step but a wait for a person ran">⋯ ${duration(g.end - g.start)} ⋯</div>`,
  );
  if (gaps.length > 0) rows.unshift(`<div class="lane gaps">${gaps.join("")}</div>`);
  return `<div class="lanes" data-lanes="${lanes}">${rows.join("")}</div>`;
}

/** One plan version: its picture with the statuses it ended with, why it came, and its diff from the one before. */
function versionColumn(state: ReportState, v: number): string {
  const plan = planAtVersion(state, v)!;
  // Each version is coloured with the statuses it ended with, not today's.
  const diagram = planMermaid(plan, runsAtVersion(state, v));
  const replan = state.replans.find((r) => r.toVersion === v);
  const previous = planAtVersion(state, v - 1);
  const diff = previous ? planDiff(previous, plan) : undefined;
  return `<section class="version"><h3>Plan v${v}</h3>${why(replan)}
<pre class="mermaid">${esc(diagram)}</pre>${
    diff && previous
      ? `<h4>Diff v${v - 1} → v${v}</h4><p>added: ${esc(diff.added.join(", ") || "—")} · removed: ` +
        `${esc(diff.removed.join(", ") || "—")} · changed: ` +
        `${esc(diff.changed.map((c) => `${c.id} (${c.fields.join(", ")})`).join("; ") || "—")}</p><pre ` +
        `class="mermaid">${esc(planDiffMermaid(previous, plan, diff))}</pre>`
      : ""
  }</section>`;
}

function why(replan: ReportState["replans"][number] | undefined): string {
  if (!replan) return '<p class="why">initial plan</p>';
  if (replan.scope === "extend")
    return `<p class="why">extension: ${esc(replan.newSteps.length)} more steps planned</p>`;
  return `<p class="why">${esc(replan.scope)} replan: ${esc(replan.trigger)}</p>`;
}

/** The timeline's rows: every attempt of every version, in the order they started. */
function timelineRows(
  state: ReportState,
  history: ReturnType<typeof runHistory>,
  versions: number[],
  earlier: ReadonlySet<string>,
): string[] {
  const orders = new Map(versions.map((v) => [v, planAtVersion(state, v)!.steps.map((s) => s.id)]));
  const place = (r: { version: number; stepId: string }) => {
    const i = orders.get(r.version)?.indexOf(r.stepId) ?? -1;
    return i < 0 ? Number.MAX_SAFE_INTEGER : i;
  };
  // A removed step's current record repeats the attempts its earlier record already shows: one row is enough.
  return (
    history
      .filter(
        ({ run, stepId, current }) =>
          run.startedAt && !(current && run.status === "invalidated" && earlier.has(stepId)),
      )
      // Clocks tie (millisecond timestamps, fake clocks): then plan version, then the step's place in that version.
      .sort((a, b) => byText(a.run.startedAt!, b.run.startedAt!) || a.version - b.version || place(a) - place(b))
      .map(({ version, stepId, run: r }) => {
        const error = r.error ? `${r.error.name}: ${r.error.message}` : "";
        const status = r.doneBy ? `${r.status} (done by a ${r.doneBy})` : r.status;
        return row([
          esc(r.startedAt),
          esc(r.endedAt ?? ""),
          `v${version}`,
          esc(stepId),
          { class: `s-${esc(r.status)}`, html: esc(status) },
          r.attempts,
          esc(r.cost ?? 0),
          { class: "free", html: esc(error) },
        ]);
      })
  );
}

/** The calls whose outcome was unknown and how each was settled (docs/decisions/0038-effect-journal.md). */
function inDoubtBlock(state: ReportState): string {
  const lines = inDoubtLines(state.decisions);
  if (lines.length === 0) return "";
  return `<p><strong>Effects in doubt:</strong></p>\n<ul>${lines.map((l) => `<li>${esc(l)}</li>`).join("")}</ul>\n`;
}

/** The abandoned effects and their undo, when the run abandoned any (docs/decisions/0039-compensation.md). */
function compensationBlock(state: ReportState): string {
  const lines = compensationLines(state.compensations);
  if (lines.length === 0) return "";
  return `<p><strong>Compensations:</strong></p>\n<ul>${lines.map((l) => `<li>${esc(l)}</li>`).join("")}</ul>`;
}

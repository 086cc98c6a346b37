/** Mermaid pictures of a plan (with step status) and of a plan diff. */
import type { PlanDiff } from "../plan/schema/decision.js";
import type { Plan } from "../plan/schema/plan.js";
import type { StepRun } from "../plan/schema/run.js";

const STATUS_CLASS: Record<string, string> = {
  succeeded: "done",
  failed: "failed",
  running: "running",
  skipped: "skipped",
  invalidated: "invalidated",
  pending: "pending",
};

function label(text: string): string {
  return text.replace(/["\n<>]/g, " ").slice(0, 80);
}

/** `flowchart TD` of the plan; each node is classed by its step status. */
export function planMermaid(plan: Pick<Plan, "steps">, steps: Readonly<Record<string, StepRun>> = {}): string {
  const lines = ["flowchart TD"];
  const node = (id: string) => `s_${id.replace(/[^A-Za-z0-9_]/g, "_")}`;
  for (const step of plan.steps) {
    const status = steps[step.id]?.status ?? "pending";
    lines.push(
      `  ${node(step.id)}["${label(step.goal)}<br/><small>${step.id} · ` +
        `${status}</small>"]:::${STATUS_CLASS[status] ?? "pending"}`,
    );
  }
  for (const step of plan.steps)
    for (const dep of step.dependsOn ?? []) lines.push(`  ${node(dep)} --> ${node(step.id)}`);
  lines.push(
    "  classDef done fill:#d3f9d8,stroke:#2b8a3e",
    "  classDef failed fill:#ffe3e3,stroke:#c92a2a",
    "  classDef running fill:#fff3bf,stroke:#e67700",
    "  classDef skipped fill:#f1f3f5,stroke:#868e96,stroke-dasharray:4",
    "  classDef invalidated fill:#f1f3f5,stroke:#c92a2a,stroke-dasharray:4",
    "  classDef pending fill:#e7f5ff,stroke:#1971c2",
  );
  return lines.join("\n");
}

/** The diff between two versions: added (green), removed (red, dashed), changed (amber). */
export function planDiffMermaid(before: Pick<Plan, "steps">, after: Pick<Plan, "steps">, diff: PlanDiff): string {
  const lines = ["flowchart TD"];
  const node = (id: string) => `d_${id.replace(/[^A-Za-z0-9_]/g, "_")}`;
  const changed = new Map(diff.changed.map((c) => [c.id, c.fields]));
  for (const step of after.steps) {
    const cls = diff.added.includes(step.id) ? "added" : changed.has(step.id) ? "changed" : "same";
    const note = changed.has(step.id) ? ` (${changed.get(step.id)!.join(", ")})` : "";
    lines.push(`  ${node(step.id)}["${label(step.goal)}${note}"]:::${cls}`);
  }
  for (const id of diff.removed) {
    const step = before.steps.find((s) => s.id === id);
    lines.push(`  ${node(id)}["${label(step?.goal ?? id)} (removed)"]:::removed`);
  }
  for (const step of after.steps)
    for (const dep of step.dependsOn ?? []) lines.push(`  ${node(dep)} --> ${node(step.id)}`);
  lines.push(
    "  classDef added fill:#d3f9d8,stroke:#2b8a3e",
    "  classDef removed fill:#ffe3e3,stroke:#c92a2a,stroke-dasharray:4",
    "  classDef changed fill:#fff3bf,stroke:#e67700",
    "  classDef same fill:#f8f9fa,stroke:#adb5bd",
  );
  return lines.join("\n");
}

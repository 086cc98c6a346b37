/**
 * What a completed replacement branch becomes in replan memory (pure). An entry crosses threads,
 * so it must not carry one thread's facts, values copied from them, or its idempotency keys:
 * an argument equal to the fact of the same name becomes an `inputs` reference, whatever its
 * value (the other thread passes its own); step ids become s1, s2, … (an id may name the
 * applicant); a goal that quotes a fact quotes its key instead; any other copied value — an
 * argument under another name, a CEL literal, a fallback argument, an idempotency key — and the
 * branch is not saved (the planner answers next time). Copies are found by value (strings of 3+
 * characters, numbers other than small integers); a value computed from a fact cannot be
 * recognised, so the planner prompt asks for `inputs` instead of literals.
 */
import { canonical } from "../../plan/diff.js";
import type { Assumption } from "../../plan/schema/plan.js";
import type { Step } from "../../plan/schema/step.js";
import { entryRevision, type MemoryEntry } from "./memory.js";

export interface BranchSource {
  key: string;
  assumption: string;
  /** The branch as it stands in the plan, in plan order. */
  steps: readonly Step[];
  /** The plan's assumptions: definitions of those the branch rests on travel with it. */
  planAssumptions: readonly Assumption[];
  /** Fact values of the saving thread, whatever their label, and its input context. */
  facts: Readonly<Record<string, unknown>>;
  /** The saving thread's idempotency keys. */
  secrets: readonly string[];
  at: string;
  /** Steps of the branch kept under the id of an affected step, with its position among them. */
  kept?: Readonly<Record<string, number>>;
  /** The revision of the retired entry this one replaces, if any. */
  replaces?: string;
}

const MIN_TEXT = 3;
/**
 * Inside longer text (goals, CEL, notes), a value shorter than this counts only as a whole word:
 * "EUR" is found in `facts.currency == "EUR"` and "pay in EUR", not in "EUROPE".
 */
const ANYWHERE = 4;
const wordChar = (c: string | undefined) => c !== undefined && /[\p{L}\p{N}_]/u.test(c);

/** Where `value` occurs in `text` as a copy (see `ANYWHERE`). */
function occurrences(text: string, value: string): number[] {
  const found: number[] = [];
  for (let i = text.indexOf(value); i >= 0; i = text.indexOf(value, i + value.length))
    if (value.length >= ANYWHERE || (!wordChar(text[i - 1]) && !wordChar(text[i + value.length]))) found.push(i);
  return found;
}

function replaceCopies(text: string, value: string, by: string): string {
  let out = "";
  let from = 0;
  for (const i of occurrences(text, value)) {
    out += text.slice(from, i) + by;
    from = i + value.length;
  }
  return out + text.slice(from);
}

function leaves(value: unknown, out: unknown[] = [], depth = 0): unknown[] {
  if (depth > 32) return out;
  if (Array.isArray(value)) value.forEach((v) => leaves(v, out, depth + 1));
  else if (value && typeof value === "object") Object.values(value).forEach((v) => leaves(v, out, depth + 1));
  else out.push(value);
  return out;
}

const identifying = (v: unknown) =>
  (typeof v === "string" && v.length >= MIN_TEXT) ||
  (typeof v === "number" && Number.isFinite(v) && (!Number.isInteger(v) || Math.abs(v) >= 10));

interface Thread {
  values: Set<string>;
  /** Quotable strings (fact values and keys) with the fact key that names them. */
  quoted: [string, string][];
}

function threadValues(facts: Readonly<Record<string, unknown>>, secrets: readonly string[]): Thread {
  const values = new Set<string>();
  const quoted: [string, string][] = secrets.map((s) => [s, "idempotency key"]);
  for (const [key, value] of Object.entries(facts))
    for (const leaf of leaves(value)) {
      if (!identifying(leaf)) continue;
      values.add(canonical(leaf));
      if (typeof leaf === "string") quoted.push([leaf, key]);
    }
  for (const s of secrets) values.add(canonical(s));
  // The longest first, so a value that contains another is quoted whole.
  quoted.sort(([a], [b]) => b.length - a.length);
  return { values, quoted };
}

function carries(value: unknown, t: Thread): boolean {
  return leaves(value).some(
    (l) =>
      (identifying(l) && t.values.has(canonical(l))) ||
      (typeof l === "string" && t.quoted.some(([q]) => occurrences(l, q).length > 0)),
  );
}

/** One step (already renamed) made thread-neutral, or the reason it cannot be (naming its id in the thread). */
function neutralStep(step: Step, id: string, source: BranchSource, t: Thread): Step | string {
  const out: Step = { ...step };
  const inputs = new Set(step.inputs ?? []);
  const args: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(step.args ?? {})) {
    const same = Object.hasOwn(source.facts, name) && canonical(value) === canonical(source.facts[name]);
    // Even a flag or a small count: the fact of that name is this thread's, the next thread passes its own.
    if (same) inputs.add(name);
    else if (carries(value, t)) return `step "${id}" argument "${name}" carries a value of this thread's facts`;
    else args[name] = value;
  }
  if (step.args) out.args = args;
  if (Object.keys(args).length === 0) delete out.args;
  if (inputs.size > 0) out.inputs = [...inputs];
  let goal = step.goal;
  for (const [value, key] of t.quoted) goal = replaceCopies(goal, value, `<${key}>`);
  out.goal = goal;
  const { id: _id, goal: _goal, args: _args, ...rest } = out;
  if (carries(rest, t)) return `step "${id}" carries a value of this thread's facts outside its arguments`;
  return out;
}

/**
 * The branch with ids s1, s2, … in plan order (skipping a kept step's id it depends on);
 * dependencies inside it follow, those on kept steps stay.
 */
function neutralIds(steps: readonly Step[]): { steps: Step[]; ids: Map<string, string> } {
  const inside = new Set(steps.map((s) => s.id));
  const outside = new Set(steps.flatMap((s) => s.dependsOn ?? []).filter((d) => !inside.has(d)));
  const ids = new Map<string, string>();
  let n = 0;
  for (const s of steps) {
    do n += 1;
    while (outside.has(`s${n}`));
    ids.set(s.id, `s${n}`);
  }
  const renamed = steps.map((s) => {
    const out: Step = { ...s, id: ids.get(s.id)! };
    if (s.dependsOn) out.dependsOn = s.dependsOn.map((d) => ids.get(d) ?? d);
    return out;
  });
  return { steps: renamed, ids };
}

/** The entry a completed branch becomes, or why it is not saved. */
export function entryFromBranch(source: BranchSource): { entry: MemoryEntry } | { refused: string } {
  const t = threadValues(source.facts, source.secrets);
  const steps: Step[] = [];
  const renamed = neutralIds(source.steps);
  for (const [i, step] of renamed.steps.entries()) {
    const neutral = neutralStep(step, source.steps[i]!.id, source, t);
    if (typeof neutral === "string") return { refused: neutral };
    steps.push(neutral);
  }
  const rests = new Set(steps.flatMap((s) => s.assumptions ?? []));
  const assumptions = source.planAssumptions.filter((a) => rests.has(a.id));
  if (assumptions.some((a) => carries(a, t)))
    return { refused: "an assumption of the branch carries a value of this thread's facts" };
  const content: Omit<MemoryEntry, "revision" | "savedAt"> = {
    key: source.key,
    assumption: source.assumption,
    origin: "learned",
    steps,
  };
  if (assumptions.length > 0) content.assumptions = assumptions;
  // Positions, not ids: which affected step a kept step stands for says nothing of this thread.
  const kept = Object.entries(source.kept ?? {}).filter(([id]) => renamed.ids.has(id));
  if (kept.length > 0) content.kept = Object.fromEntries(kept.map(([id, at]) => [renamed.ids.get(id)!, at]));
  return { entry: { ...content, revision: entryRevision(content, source.replaces), savedAt: source.at } };
}

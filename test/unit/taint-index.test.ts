import { describe, expect, it } from "vitest";
import type { Fact, StepRun } from "../../src/plan/schema/run.js";
import type { Plan } from "../../src/plan/schema/plan.js";
import type { Step } from "../../src/plan/schema/step.js";
import { reviewNewSteps, type ReviewedRun } from "../../src/policy/capability/review.js";
import { factTexts, PRODUCED, stepErrorTexts, VOUCHED } from "../../src/policy/capability/run-texts.js";
import { failureTexts, leaves, occurs, traced } from "../../src/policy/capability/taint.js";
import { TextIndex } from "../../src/policy/capability/text-index.js";

// docs/decisions/0058-incremental-taint-index.md: the index answers what a scan of every text answers.

/** A seeded generator, so a failure names the sequence that found it. */
function random(seed: number) {
  let s = seed >>> 0;
  const next = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  return { next, pick };
}

// Words that overlap as substrings, so whole-token matching is what decides.
const WORDS = [
  "4111",
  "41112",
  "acct",
  "DE89",
  "ACME",
  "Corp",
  "x_4111",
  "ü4111",
  "4111ü",
  "IBAN",
  "pay",
  "née",
  "𝔘4111",
];
const GLUE = [" ", "-", "/", "@", ", ", ": ", "\n", "", "_", "'", "💶"];
function text(r: ReturnType<typeof random>): string {
  let out = r.next() < 0.2 ? r.pick(GLUE) : "";
  const n = 1 + Math.floor(r.next() * 4);
  for (let i = 0; i < n; i++) out += r.pick(WORDS) + (i < n - 1 || r.next() < 0.2 ? r.pick(GLUE) : "");
  return out;
}
const needle = (r: ReturnType<typeof random>) => (r.next() < 0.1 ? r.pick(["----", "@@@@", "- - "]) : text(r));

const fact = (value: unknown, producedBy: string): Fact => ({
  value,
  label: "trusted",
  producedBy,
  planVersion: 1,
  assumptions: [],
  derivedFrom: [],
});
const value = (r: ReturnType<typeof random>): unknown =>
  r.next() < 0.3 ? { a: text(r), b: [text(r), Math.floor(r.next() * 50000)] } : r.next() < 0.5 ? text(r) : 4111;

describe("the text index", () => {
  it("finds a value in exactly the texts a scan with occurs finds it in, after adds and removes", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const r = random(seed);
      const index = new TextIndex<{ text: string }>();
      const live: { text: string }[] = [];
      for (let op = 0; op < 60; op++) {
        if (live.length > 0 && r.next() < 0.3) {
          const [gone] = live.splice(Math.floor(r.next() * live.length), 1);
          index.remove(gone!);
        } else {
          const entry = { text: text(r) };
          live.push(entry);
          index.add(entry);
        }
        const v = needle(r);
        const expected = live
          .filter((e) => occurs(v, e.text))
          .map((e) => e.text)
          .sort();
        const found: string[] = [];
        index.find(v, (e) => (found.push(e.text), false));
        expect({ seed, op, v, found: found.sort() }).toEqual({ seed, op, v, found: expected });
        expect(index.size).toBe(live.length);
      }
    }
  });
});

describe("the run's texts, kept up to date as the run goes", () => {
  it("equal a full rebuild of the facts' and the steps' texts on random sequences of extensions", () => {
    for (let seed = 1; seed <= 12; seed++) {
      const r = random(seed);
      const facts: Record<string, Fact> = {};
      const steps: Record<string, StepRun> = {};
      let n = 0;
      for (let extension = 0; extension < 30; extension++) {
        // An extension's steps: new facts, a rerun overwriting one, a person's answer, a failure.
        for (let i = 0; i < 3; i++) {
          n += 1;
          facts[`r${n}`] = fact(value(r), r.next() < 0.15 ? r.pick(["input", "human"]) : `s${n}`);
          steps[`s${n}`] = { status: "succeeded", attempts: 1 } as StepRun;
          if (r.next() < 0.2)
            steps[`s${n}`] = {
              status: "failed",
              attempts: 1,
              error: { name: "E", message: text(r), evidence: { body: text(r) } },
            } as StepRun;
        }
        if (n > 3 && r.next() < 0.4) {
          const k = 1 + Math.floor(r.next() * n);
          facts[`r${k}`] = fact(value(r), r.pick(["input", `s${k}`, "human"]));
        }
        if (n > 3 && r.next() < 0.2) {
          const k = 1 + Math.floor(r.next() * n);
          steps[`s${k}`] = { status: "succeeded", attempts: 2 } as StepRun;
        }
        const given = Object.values(facts).filter((f) => f.producedBy === "input" || f.producedBy === "human");
        const produced = Object.values(facts).filter((f) => !given.includes(f));
        const errors = failureTexts(Object.values(steps), []).map((t) => t.text);
        const index = factTexts(facts);
        const failures = stepErrorTexts(steps);
        for (let q = 0; q < 6; q++) {
          const v = needle(r);
          const at = { seed, extension, v };
          expect({ ...at, found: index.shelves[PRODUCED]!.find(v) !== undefined }).toEqual({
            ...at,
            found: produced.some((f) => leaves(f.value).some((t) => occurs(v, t))),
          });
          expect({ ...at, found: index.shelves[VOUCHED]!.find(v) !== undefined }).toEqual({
            ...at,
            found: given.some((f) => leaves(f.value).some((t) => occurs(v, t))),
          });
          expect({ ...at, found: failures.shelves[0]!.find(v) !== undefined }).toEqual({
            ...at,
            found: errors.some((t) => occurs(v, t)),
          });
          // `traced` with the lists (the scan) against the same with the index.
          const list = produced
            .flatMap((f) => leaves(f.value))
            .map((t) => ({ text: t, source: "tool output" as const }));
          const known = ["a goal", ...given.flatMap((f) => leaves(f.value))];
          const scan = traced(v, known, { keys: new Map(), texts: list, remembered: false });
          const indexed = traced(
            v,
            { knows: (x) => occurs(x, "a goal") || index.shelves[VOUCHED]!.find(x) !== undefined },
            {
              keys: new Map(),
              texts: [],
              find: (x) => (index.shelves[PRODUCED]!.find(x) ? list[0] : undefined),
              remembered: false,
            },
          );
          expect({ ...at, indexed }).toEqual({ ...at, indexed: scan });
        }
      }
    }
  });

  it("the review of each extension equals the review of a fresh copy of the run (an index built anew)", () => {
    const rules = { replanTools: "read-only" as const, sideEffectsOf: (t: string) => (t === "pay" ? ["ledger"] : []) };
    const held: string[] = [];
    for (let seed = 1; seed <= 12; seed++) {
      const r = random(seed);
      const planned: Step[] = [{ id: "s0", goal: "Start", tool: "pay", args: { to: "ACME" } }];
      const run: ReviewedRun & { plan: Plan } = {
        goal: "pay ACME Corp",
        plan: { version: 1, steps: planned, assumptions: [], complete: false } as unknown as Plan,
        planHistory: [],
        steps: {},
        facts: {},
        decisions: [],
        scopeChanges: [],
      };
      const facts = run.facts as Record<string, Fact>;
      const steps = run.steps as Record<string, StepRun>;
      for (let extension = 1; extension <= 20; extension++) {
        for (const s of run.plan.steps) steps[s.id] = { status: "succeeded", attempts: 1 } as StepRun;
        for (let i = 0; i < 3; i++)
          facts[`f${extension}-${i}`] = fact(value(r), r.next() < 0.2 ? "input" : `s${extension}`);
        if (r.next() < 0.3)
          steps["s0"] = { status: "failed", attempts: 1, error: { name: "E", message: text(r) } } as StepRun;
        const added: Step[] = [1, 2].map((i) => ({
          id: `e${extension}-${i}`,
          goal: `Pay ${text(r)}`,
          tool: r.pick(["pay", "fetch"]),
          args: { to: text(r), amount: text(r) },
        }));
        const proposed = [...run.plan.steps, ...added];
        const incremental = reviewNewSteps(rules, run, added, proposed);
        const fresh = structuredClone({ ...run, plan: run.plan });
        expect({ seed, extension, hit: incremental }).toEqual({
          seed,
          extension,
          hit: reviewNewSteps(rules, fresh, added, proposed),
        });
        for (const f of incremental?.findings ?? []) held.push(f.kind);
        run.plan = { ...run.plan, version: run.plan.version + 1, steps: proposed };
        (run.planHistory as unknown[]).push({
          version: run.plan.version - 1,
          replaced: [],
          keptCount: proposed.length - 2,
          assumptionCount: 0,
        });
      }
    }
    // The sequences hold extensions for literals found in tool output or errors, so both answers were compared on findings.
    expect({ kinds: [...new Set(held)], count: held.length }).toEqual({ kinds: ["untrusted_argument"], count: 25 });
  });
});

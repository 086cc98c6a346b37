import { describe, expect, it } from "vitest";
import {
  branchOutcome,
  chooseEntry,
  entryRevision,
  isRetired,
  memoryKey,
  outcomeKey,
  shouldSave,
  tally,
  templateEntry,
  withUniqueIds,
  type MemoryEntry,
  type ScoredEntry,
} from "../../src/policy/memory/memory.js";
import { entryFromBranch, type BranchSource } from "../../src/policy/memory/entry.js";
import type { Step } from "../../src/plan/schema/step.js";

const step = (id: string, tool: string, more: Partial<Step> = {}): Step => ({
  id,
  goal: `goal of ${id}`,
  tool,
  ...more,
});

const entry = (over: Partial<ScoredEntry> = {}): ScoredEntry => ({
  key: "a:1",
  assumption: "a",
  origin: "learned",
  revision: "0123456789abcdef",
  steps: [step("x", "t1")],
  uses: 0,
  successes: 0,
  savedAt: "2026-01-01T00:00:00.000Z",
  ...over,
});

describe("memoryKey", () => {
  it("depends on the assumption, the tools and the dependency shape only", () => {
    const one = [step("f", "fetch", { args: { id: "A-1" } }), step("s", "sum", { dependsOn: ["f", "k"] })];
    const renamed = [
      step("g", "fetch", { args: { id: "B-2" }, goal: "other" }),
      step("t", "sum", { dependsOn: ["k", "g"] }),
    ];
    expect(memoryKey("a", one)).toBe(memoryKey("a", renamed));
    expect(memoryKey("a", one)).toMatch(/^a:[0-9a-f]{16}$/);
    expect(memoryKey("b", one)).not.toBe(memoryKey("a", one));
    expect(memoryKey("a", [one[0]!, step("s", "other_tool", { dependsOn: ["f", "k"] })])).not.toBe(memoryKey("a", one));
    // Dependency shape: the same tools without the edge are another key; so is an edge to another kept step.
    expect(memoryKey("a", [one[0]!, step("s", "sum", { dependsOn: ["k"] })])).not.toBe(memoryKey("a", one));
    expect(memoryKey("a", [one[0]!, step("s", "sum", { dependsOn: ["f", "j"] })])).not.toBe(memoryKey("a", one));
    expect(memoryKey("a", [{ id: "h", goal: "ask", human: { prompt: "?" } }])).not.toBe(
      memoryKey("a", [step("h", "")]),
    );
  });
});

describe("scoring and retirement", () => {
  it("counts outcome items and retires an entry below 0.5 after 3 settled uses", () => {
    const ok = { success: true };
    const no = { success: false };
    expect(tally([no, ok])).toEqual({ uses: 2, successes: 1 });
    expect(tally([no, ok, no, { other: 1 }, null])).toEqual({ uses: 3, successes: 1 });
    expect(isRetired(tally([no, ok, no]))).toBe(true);
    expect(isRetired({ uses: 2, successes: 0 })).toBe(false);
    expect(isRetired({ uses: 4, successes: 2 })).toBe(false);
    expect(isRetired({ uses: 5, successes: 2 })).toBe(true);
    expect([
      shouldSave(undefined),
      shouldSave(entry({ uses: 3, successes: 1 })),
      shouldSave(entry({ uses: 3, successes: 2 })),
    ]).toEqual([true, true, false]);
  });

  it("an outcome's store key is a hash of its id: the thread id is not in it", () => {
    const key = outcomeKey("loan-A-7291::2");
    expect(key).toMatch(/^[0-9a-f]{32}$/);
    expect(outcomeKey("loan-A-7291::2")).toBe(key);
    expect(outcomeKey("loan-A-7291::3")).not.toBe(key);
  });

  it("a revision follows the content and the revision it replaces", () => {
    const { revision: _r, savedAt: _s, uses: _u, successes: _n, ...content } = entry();
    const first = entryRevision(content);
    expect(first).toMatch(/^[0-9a-f]{16}$/);
    expect(entryRevision({ ...content })).toBe(first); // two threads saving the same answer: one revision
    expect(entryRevision(content, first)).not.toBe(first); // the same answer after a retirement: a new one
    expect(entryRevision({ ...content, steps: [step("x", "t2")] })).not.toBe(first);
    const t = templateEntry({ assumption: "a", steps: [step("y", "t2")] }, "2026-01-01T00:00:00.000Z");
    expect(templateEntry({ assumption: "a", steps: [step("y", "t2")] }, "2027-01-01T00:00:00.000Z").revision).toBe(
      t.revision,
    );
  });
});

describe("chooseEntry", () => {
  const tools = new Set(["t1", "t2"]);
  it("takes the exact entry first, passes over retired entries and entries with unregistered tools", () => {
    const exact = entry();
    const template = {
      ...templateEntry({ assumption: "a", steps: [step("y", "t2")] }, "2026-01-01T00:00:00.000Z"),
      uses: 0,
      successes: 0,
    };
    expect(chooseEntry("reuse", [exact, template], tools)).toEqual({ use: exact, mode: "reuse" });
    expect(chooseEntry("hint", [undefined, template], tools)).toEqual({ use: template, mode: "hint" });
    const retired = entry({ uses: 3, successes: 1 });
    expect(chooseEntry("reuse", [retired, template], tools)).toEqual({ use: template, mode: "reuse" });
    const gone = entry({ steps: [step("x", "t1", { fallback: { tool: "t9" } })] });
    expect(chooseEntry("reuse", [gone, retired], tools)).toEqual({
      skipped: "entry a:1 skipped: tool t9 is not registered; entry a:1 retired: 1 of 3 uses succeeded",
    });
    expect(chooseEntry("reuse", [undefined, undefined], tools)).toBeUndefined();
    expect(chooseEntry("off", [exact], tools)).toBeUndefined();
  });
});

describe("withUniqueIds", () => {
  it("renames ids this thread has used and the dependencies on them, and leaves outside dependencies alone", () => {
    const steps = [step("fetch", "t1", { dependsOn: ["kept"] }), step("sum", "t2", { dependsOn: ["fetch"] })];
    expect(withUniqueIds(steps, new Set(["fetch", "fetch_2", "kept"]))).toEqual([
      step("fetch_3", "t1", { dependsOn: ["kept"], goal: "goal of fetch" }),
      step("sum", "t2", { dependsOn: ["fetch_3"] }),
    ]);
    const long = "x".repeat(64);
    expect(withUniqueIds([step(long, "t1")], new Set([long]))[0]!.id).toBe(`${"x".repeat(62)}_2`);
  });
});

describe("branchOutcome", () => {
  const record = { memoryKey: "a:1", memorySteps: ["m1", "m2"] };
  const ok = { status: "succeeded" as const, attempts: 1 };
  const failed = { status: "failed" as const, attempts: 1 };
  it("settles on the transition to all succeeded, or on a decision that gives up on a branch step", () => {
    expect(branchOutcome(record, { m1: ok }, { m1: ok, m2: ok }, [])).toBe("succeeded");
    expect(branchOutcome(record, { m1: ok, m2: ok }, { m1: ok, m2: ok }, [])).toBeUndefined();
    expect(branchOutcome(record, {}, { m1: failed }, [{ stepId: "m1", action: "retry" }])).toBeUndefined();
    expect(branchOutcome(record, {}, { m1: failed }, [{ stepId: "m1", action: "fallback" }])).toBeUndefined();
    expect(branchOutcome(record, {}, { m1: failed }, [{ stepId: "m1", action: "escalate" }])).toBe("failed");
    expect(branchOutcome(record, {}, { m1: failed }, [{ stepId: "m1", action: "replan_local" }])).toBe("failed");
    expect(branchOutcome(record, {}, {}, [{ stepId: "other", action: "escalate" }])).toBeUndefined();
    expect(branchOutcome({ memorySteps: ["m1"] }, {}, { m1: ok }, [])).toBeUndefined();
  });
});

describe("entryFromBranch: nothing of one thread travels to another", () => {
  const base = (steps: Step[], over: Partial<BranchSource> = {}): BranchSource => ({
    key: "a:1",
    assumption: "a",
    steps,
    planAssumptions: [],
    facts: { applicant_id: "A-7291", amount: 25_000, approved: true, tier: 1 },
    secrets: ["t1:pay:0123456789abcdef"],
    at: "2026-01-01T00:00:00.000Z",
    ...over,
  });
  const made = (s: BranchSource) => entryFromBranch(s) as { entry: MemoryEntry } & { refused: string };

  it("an argument equal to the fact of the same name becomes an input; a goal quoting a fact names its key", () => {
    const out = made(
      base([step("f", "fetch", { goal: "Fetch A-7291 now", args: { applicant_id: "A-7291", page: 1, flag: true } })]),
    );
    expect(out.entry.steps).toEqual([
      {
        id: "s1",
        goal: "Fetch <applicant_id> now",
        tool: "fetch",
        args: { page: 1, flag: true },
        inputs: ["applicant_id"],
      },
    ]);
    expect(out.entry).toMatchObject({ key: "a:1", assumption: "a", origin: "learned" });
    expect(out.entry.revision).toMatch(/^[0-9a-f]{16}$/);
  });

  it("refuses copies under another name, inside nested arguments, in CEL, in fallbacks, and idempotency keys", () => {
    const refused = (s: Step) => made(base([s])).refused;
    expect(refused(step("f", "fetch", { args: { id: "A-7291" } }))).toBe(
      `step "f" argument "id" carries a value of this thread's facts`,
    );
    expect(refused(step("f", "fetch", { args: { q: { amounts: [25_000] } } }))).toBe(
      `step "f" argument "q" carries a value of this thread's facts`,
    );
    expect(refused(step("f", "fetch", { args: { note: "re: A-7291 review" } }))).toBe(
      `step "f" argument "note" carries a value of this thread's facts`,
    );
    expect(refused(step("f", "fetch", { args: { key: "t1:pay:0123456789abcdef" } }))).toBe(
      `step "f" argument "key" carries a value of this thread's facts`,
    );
    expect(refused(step("f", "fetch", { when: 'facts.id == "A-7291"' }))).toBe(
      `step "f" carries a value of this thread's facts outside its arguments`,
    );
    expect(refused(step("f", "fetch", { fallback: { tool: "f2", args: { amount_cents: 25_000 } } }))).toBe(
      `step "f" carries a value of this thread's facts outside its arguments`,
    );
    const check = [{ id: "b", statement: "ok", check: 'facts.applicant_id != "A-7291"' }];
    expect(made(base([step("f", "fetch", { assumptions: ["b"] })], { planAssumptions: check })).refused).toBe(
      "an assumption of the branch carries a value of this thread's facts",
    );
  });

  it("small integers and booleans under another name are not taken for copies; assumptions travel with the branch", () => {
    const plain = step("f", "fetch", { args: { retries: 2, verbose: true }, assumptions: ["b"] });
    const assumptions = [
      { id: "b", statement: "the mirror is current" },
      { id: "c", statement: "unrelated" },
    ];
    const out = made(base([plain], { planAssumptions: assumptions }));
    expect(out.entry.steps[0]!.args).toEqual({ retries: 2, verbose: true });
    expect(out.entry.steps[0]!.inputs).toBeUndefined();
    expect(out.entry.assumptions).toEqual([assumptions[0]]);
  });

  it("an argument equal to the same-named fact becomes an input however short its value", () => {
    const s = step("f", "fetch", { args: { tier: 1, approved: true, retries: 2 }, inputs: ["amount"] });
    expect(made(base([s])).entry.steps[0]).toEqual({
      id: "s1",
      goal: "goal of f",
      tool: "fetch",
      args: { retries: 2 },
      inputs: ["amount", "tier", "approved"],
    });
  });

  it("step ids are saved as s1, s2, …: an id naming the applicant stays in the thread", () => {
    const steps = [
      step("fetch_A-7291", "fetch", { dependsOn: ["s1"] }),
      step("sum_A-7291", "sum", { dependsOn: ["fetch_A-7291", "kept"] }),
    ];
    const out = made(base(steps));
    expect(out.entry.steps.map((x) => [x.id, x.dependsOn])).toEqual([
      ["s2", ["s1"]], // "s1" is a kept step this branch depends on: not reused as a new id
      ["s3", ["s2", "kept"]],
    ]);
    expect(JSON.stringify(out.entry)).not.toContain("7291");
    expect(made(base([step("x", "fetch", { args: { id: "A-7291" } })])).refused).toBe(
      `step "x" argument "id" carries a value of this thread's facts`,
    );
  });

  it("a 3-letter currency code is found in CEL, goals and text, as a whole word", () => {
    const facts = { currency: "EUR", amount: 25_000 };
    const at = (s: Step) => made(base([s], { facts }));
    expect(at(step("f", "fx", { when: 'facts.rate_currency == "EUR"' })).refused).toBe(
      `step "f" carries a value of this thread's facts outside its arguments`,
    );
    expect(at(step("f", "fx", { args: { note: "pay in EUR" } })).refused).toBe(
      `step "f" argument "note" carries a value of this thread's facts`,
    );
    const goal = at(step("f", "fx", { goal: "Convert EUR (EUROPE desk)", args: { region: "EUROPE" } }));
    expect(goal.entry.steps[0]).toMatchObject({ goal: "Convert <currency> (EUROPE desk)", args: { region: "EUROPE" } });
  });
});

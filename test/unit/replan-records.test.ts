/** Compact extension records (docs/decisions/0050-compact-extension-records.md): what the writer lists, and how they read back whole. */
import { describe, expect, it } from "vitest";
import { changedFacts, rememberLabels, replanRecords } from "../../src/plan/replan-records.js";
import { factsWrittenSince, mergeFactsInPlace } from "../../src/plan/facts.js";
import type { ReplanRecord } from "../../src/plan/schema/decision.js";
import type { Fact, FactLabel } from "../../src/plan/schema/run.js";
import type { PlanVersionEntry } from "../../src/plan/history.js";
import type { Plan } from "../../src/plan/schema/plan.js";

const fact = (label: FactLabel): Fact => ({
  value: 1,
  label,
  producedBy: "s",
  planVersion: 1,
  assumptions: [],
  derivedFrom: [],
});
const facts = (entries: [string, FactLabel][]) => Object.fromEntries(entries.map(([k, l]) => [k, fact(l)]));
const lists = (trusted: string[], suspect: string[] = [], invalidated: string[] = []) => ({
  trusted,
  suspect,
  invalidated,
});
const step = (id: string) => ({ id, goal: id, tool: "t" });

function extension(from: number, keptCount: number, newSteps: string[], f: ReplanRecord["facts"]): ReplanRecord {
  return {
    kind: "extend",
    trigger: "horizon",
    scope: "extend",
    fromVersion: from,
    toVersion: from + 1,
    invalidatedSteps: [],
    keptCount,
    newSteps,
    facts: f,
  };
}

/** Facts a and b, trusted, and the extension record that lists them, its labels remembered. */
function recorded() {
  const run = facts([
    ["a", "trusted"],
    ["b", "trusted"],
  ]);
  const first = changedFacts(run, []);
  const r1 = extension(1, 1, ["s2"], first.lists);
  rememberLabels(r1, first.labels);
  return { run, r1 };
}

describe("the facts of a compact extension record", () => {
  it("lists every fact when no record came before, then only what is new or relabelled", () => {
    const first = changedFacts(
      facts([
        ["a", "trusted"],
        ["b", "trusted"],
      ]),
      [],
    );
    expect(first.lists).toEqual(lists(["a", "b"]));
    const r1 = extension(1, 1, ["s2"], first.lists);
    rememberLabels(r1, first.labels);
    const second = changedFacts(
      facts([
        ["a", "trusted"],
        ["b", "suspect"],
        ["c", "trusted"],
      ]),
      [r1],
    );
    expect(second.lists).toEqual(lists(["c"], ["b"]));
  });

  it("facts merged in place: only the keys written since the record before are looked at, with the same lists", () => {
    const { run, r1 } = recorded();
    expect([...factsWrittenSince(run)!]).toEqual([]);
    mergeFactsInPlace(run, [{ c: fact("trusted") }, { b: fact("suspect"), a: fact("trusted") }]);
    expect([...factsWrittenSince(run)!]).toEqual(["c", "b", "a"]);
    // What a process that did not remember r1's labels finds, looking at every fact:
    const everyFact = changedFacts({ ...run }, [{ ...r1 }]).lists;
    const second = changedFacts(run, [r1]);
    expect(second.lists).toEqual(lists(["c"], ["b"]));
    expect(second.lists).toEqual(everyFact);
    // Counting starts again for the next record.
    expect([...factsWrittenSince(run)!]).toEqual([]);
  });

  it("lists by key, whichever way the keys were found: relabelled in reverse order, the same lists as a full look", () => {
    const { run, r1 } = recorded();
    mergeFactsInPlace(run, [{ b: fact("suspect") }, { a: fact("suspect") }]);
    const everyFact = changedFacts({ ...run }, [{ ...r1 }]).lists;
    const incremental = changedFacts(run, [r1]).lists;
    expect([incremental, everyFact]).toEqual([lists([], ["a", "b"]), lists([], ["a", "b"])]);
  });

  it("folds the records once when the labels of the newest record are not remembered (a loaded thread)", () => {
    const replan: ReplanRecord = {
      trigger: "assumption",
      scope: "local",
      fromVersion: 1,
      toVersion: 2,
      invalidatedSteps: [],
      preservedSteps: ["s1"],
      newSteps: [],
      facts: lists(["a"], ["b"]),
    };
    const ext = extension(2, 1, ["s2"], lists(["c"]));
    const { lists: changed } = changedFacts(
      facts([
        ["a", "trusted"],
        ["b", "trusted"],
        ["c", "trusted"],
        ["d", "trusted"],
      ]),
      [replan, structuredClone(ext)],
    );
    expect(changed).toEqual(lists(["b", "d"]));
  });
});

describe("replanRecords", () => {
  it("reads compact records whole: kept steps from the history, facts by label in the run's order", () => {
    const plan: Plan = { version: 3, steps: ["s1", "s2", "s3"].map(step), assumptions: [] };
    const planHistory: PlanVersionEntry[] = [
      { version: 2, replaced: [], keptCount: 1, assumptionCount: 0 },
      { version: 3, replaced: [], keptCount: 2, assumptionCount: 0 },
    ];
    const replans = [extension(1, 1, ["s2"], lists(["b", "a"])), extension(2, 2, ["s3"], lists(["c"], ["a"]))];
    const state = {
      plan,
      planHistory,
      replans,
      facts: facts([
        ["a", "suspect"],
        ["b", "trusted"],
        ["c", "trusted"],
      ]),
    };
    const full = replanRecords(state);
    expect(full.map((r) => [r.preservedSteps, r.facts, "keptCount" in r, "kind" in r])).toEqual([
      [["s1"], lists(["a", "b"]), false, false],
      [["s1", "s2"], lists(["b", "c"], ["a"]), false, false],
    ]);
    // The stored records are not changed by reading them.
    expect(replans[1]!.facts).toEqual(lists(["c"], ["a"]));
  });

  it("hands back a run without compact records as it is", () => {
    const state = { replans: [], facts: {}, planHistory: [] };
    expect(replanRecords(state)).toBe(state.replans);
  });
});

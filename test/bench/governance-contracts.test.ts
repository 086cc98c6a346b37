/**
 * The governance benchmark checks every library run against what its cell says it measures
 * (bench/governance.ts, CONTRACTS). Here: each cell's contract holds on one world, and a library
 * with another contract under a cell — an invalid replan draft escalating at once
 * (`replanDraftRetries: 0`), as the planner-fault cell's contract used to be — stops the bench
 * with an error that names the cell and what departed, instead of filling the table.
 */
import { describe, expect, it } from "vitest";
import { CONTRACTS, cellWorld, runLibrary, type Cell } from "../../bench/governance.js";

const cells = Object.keys(CONTRACTS) as Exclude<Cell, "lost-ack">[];

describe("governance benchmark: cells measure the library's contract", () => {
  it.each(cells)("%s: the library's run matches what the cell says", async (cell) => {
    const outcome = await runLibrary(cellWorld(cell, 1), 1);
    expect(outcome.sideEffectsReexecuted).toBe(0);
    expect(outcome.recovered).toBe(CONTRACTS[cell].status === "completed");
    expect(outcome.planner).toBe(CONTRACTS[cell].planner);
  });

  it("an invalid replan draft escalating at once (replanDraftRetries: 0) is not what planner-fault measures: the bench throws", async () => {
    const w = cellWorld("planner-fault", 1);
    await expect(runLibrary(w, 1, { replanDraftRetries: 0 })).rejects.toThrow(
      `governance cell planner-fault (seed 1, ${w.n} steps, faulty s${w.faulty}) no longer measures what it says`,
    );
    await expect(runLibrary(w, 1, { replanDraftRetries: 0 })).rejects.toThrow(
      'decisions: expected ["deterministic.replan-local"], got ["deterministic.replan-local","replan.invalid-draft"]',
    );
  });

  it("drafts sent back twice (replanDraftRetries: 2) under planner-fault-persistent: one more planner call than it says, the bench throws", async () => {
    const w = cellWorld("planner-fault-persistent", 1);
    await expect(runLibrary(w, 1, { replanDraftRetries: 2 })).rejects.toThrow(
      /planner calls: expected 3, got 4\n {2}drafts sent back with: expected \["unknown_tool"\], got \["unknown_tool","unknown_tool"\]/,
    );
  });
});

describe("governance benchmark: the assumption-drift cell", () => {
  it("with the premise watched the purchase is replanned before it runs; without, it runs on the stale premise", async () => {
    const w = cellWorld("assumption-drift", 1);
    const watched = await runLibrary(w, 1);
    expect([watched.recovered, watched.staleEffects, watched.planner, watched.sideEffectsReexecuted]).toEqual([
      true,
      0,
      2,
      0,
    ]);
    const unwatched = await runLibrary(w, 1, {}, { watch: false });
    expect([unwatched.recovered, unwatched.staleEffects, unwatched.planner, unwatched.wasted]).toEqual([
      false,
      1,
      1,
      unwatched.attempts,
    ]);
  });
});

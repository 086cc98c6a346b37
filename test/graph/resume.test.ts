import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { describe, expect, it } from "vitest";
import { createPlanManager, staticPlanner } from "../../src/index.js";
import { isPlanManagerError } from "../../src/errors.js";
import { resumeRun } from "../../src/graph/resume-run.js";
import { resumeProblem } from "../../src/plan/resume.js";
import { harness, httpError, scriptedTool } from "../helpers/graph.js";

const options = ["retry", "skip", "provide", "abort"] as const;

describe("resume values", () => {
  it.each([
    [
      "yes",
      'invalid resume value: expected an object like { action: "retry" }, received the string "yes"; choose one of: retry, skip, provide, abort (as { action: "..." })',
    ],
    [
      42,
      'invalid resume value: expected an object like { action: "retry" }, received the number 42; choose one of: retry, skip, provide, abort (as { action: "..." })',
    ],
    [
      null,
      'invalid resume value: expected an object like { action: "retry" }, received null; choose one of: retry, skip, provide, abort (as { action: "..." })',
    ],
    [
      ["retry"],
      'invalid resume value: expected an object like { action: "retry" }, received an array; choose one of: retry, skip, provide, abort (as { action: "..." })',
    ],
    [
      { action: "aprove" },
      'invalid resume value: unknown action "aprove" (did you mean "approve"? it is not available here); choose one of: retry, skip, provide, abort (as { action: "..." })',
    ],
    [
      { action: "retyr" },
      'invalid resume value: unknown action "retyr" (did you mean "retry"?); choose one of: retry, skip, provide, abort (as { action: "..." })',
    ],
    [
      { action: "Skip" },
      'invalid resume value: unknown action "Skip" (did you mean "skip"?); choose one of: retry, skip, provide, abort (as { action: "..." })',
    ],
    [
      true,
      'invalid resume value: expected an object like { action: "retry" }, received the boolean true; choose one of: retry, skip, provide, abort (as { action: "..." })',
    ],
    [
      undefined,
      'invalid resume value: expected an object like { action: "retry" }, received nothing (undefined); choose one of: retry, skip, provide, abort (as { action: "..." })',
    ],
    [
      { action: "launch_rockets" },
      'invalid resume value: unknown action "launch_rockets"; choose one of: retry, skip, provide, abort (as { action: "..." })',
    ],
    [
      { action: 7 },
      'invalid resume value: action must be a string, received the number 7; choose one of: retry, skip, provide, abort (as { action: "..." })',
    ],
    [
      {},
      'invalid resume value: the object has no action; choose one of: retry, skip, provide, abort (as { action: "..." })',
    ],
  ])("names what was received: %j", (value, message) => {
    expect(resumeProblem(value, options)).toBe(message);
  });

  it("suggests among the offered actions first", () => {
    expect(resumeProblem({ action: "aprove" }, ["approve", "replan", "abort"])).toBe(
      'invalid resume value: unknown action "aprove" (did you mean "approve"?); choose one of: approve, replan, abort (as { action: "..." })',
    );
    expect(resumeProblem({ action: "approve" }, options)).toBe(
      'action "approve" is not available here; choose one of: retry, skip, provide, abort',
    );
  });

  it("quotes a huge action briefly, and quickly", () => {
    const started = performance.now();
    const message = resumeProblem({ action: `retry${"x".repeat(1_000_000)}` }, options);
    expect(performance.now() - started).toBeLessThan(500);
    expect(message).toBe(
      `invalid resume value: unknown action "retry${"x".repeat(56)}..."; choose one of: retry, skip, provide, abort (as { action: "..." })`,
    );
  });

  it("types resumeRun's value as the resume union", async () => {
    const h = harness({ steps: [{ id: "a", goal: "A", tool: "a" }] }, [scriptedTool("a", [httpError(404), {}])]);
    await h.run();
    // @ts-expect-error -- "aprove" is not a resume action: this line must not compile.
    const error = await resumeRun(h.graph, h.config, { action: "aprove" }).catch((e: unknown) => e);
    expect((error as Error).message).toBe(
      'thread "t1", escalation for step "a": invalid resume value: unknown action "aprove" (did you mean "approve"? it is not available here); ' +
        'choose one of: retry, skip, provide, abort (as { action: "..." })',
    );
  });
});

describe("what a resume says when there is nothing to answer", () => {
  it("an answer missing a field it needs names that field, not the value just sent", () => {
    expect(resumeProblem({ action: "happened" }, ["happened", "retry", "abort"])).toBe(
      'invalid resume value: { action: "happened" } needs output (what the call returned, recorded as its result), ' +
        'which is missing; send { action: "happened", output: ... }',
    );
    expect(resumeProblem({ action: "complete" }, ["complete", "skip"])).toBe(
      'invalid resume value: { action: "complete" } needs output (the step\'s result), which is missing; ' +
        'send { action: "complete", output: ... }',
    );
    expect(resumeProblem({ action: "replan" }, ["replan"])).toBe(
      'invalid resume value: { action: "replan" } needs constraint, which is missing; send { action: "replan", constraint: ... }',
    );
    // A field present but wrong is still reported as the schema sees it.
    expect(resumeProblem({ action: "replan", constraint: "" }, ["replan"])).toMatch(
      /^invalid resume value: constraint: .*; expected one of \{ action: "replan" \}$/,
    );
  });

  it("invoke(null) on a thread with no checkpoint (killed before its first) is a typed error: nothing to resume, invoke with { goal }", async () => {
    const saver = SqliteSaver.fromConnString(":memory:");
    const h = harness({ steps: [{ id: "a", goal: "A", tool: "a" }] }, [scriptedTool("a", [{}])], {
      checkpointer: saver,
    });
    const error = await h.graph.invoke(null, h.config).catch((e: unknown) => e);
    expect(isPlanManagerError(error) && [error.code, error.message]).toEqual([
      "thread_not_found",
      'thread "t1" has no checkpoint, so there is nothing to resume (its first run ended before its first ' +
        "checkpoint, or it never started): start it with invoke({ goal, context? }, config)",
    ]);
    // Without a checkpointer there is no checkpoint to resume from either.
    const none: unknown = await createPlanManager({
      tools: [scriptedTool("a", [{}])],
      planner: staticPlanner({ plan: { steps: [] } }),
    })
      .compile()
      .invoke(null, h.config)
      .catch((e: unknown) => e);
    expect(isPlanManagerError(none) && none.code).toBe("thread_not_found");
    // And the thread still starts with a goal.
    expect((await h.run()).status).toBe("completed");
  });

  it("resumeRun on a run cut before it finished says invoke(null) takes it up", async () => {
    const dir = mkdtempSync(join(tmpdir(), "resume-crash-"));
    try {
      const file = join(dir, "threads.sqlite");
      let entered!: () => void;
      const inCall = new Promise<void>((r) => (entered = r));
      const hang = scriptedTool("a", [
        () => {
          entered();
          return new Promise(() => undefined);
        },
      ]);
      const draft = { steps: [{ id: "a", goal: "A", tool: "a" }] };
      const dying = SqliteSaver.fromConnString(file);
      void harness(draft, [hang], { checkpointer: dying })
        .run()
        .catch(() => undefined);
      await inCall;
      dying.db.close();
      const saver = SqliteSaver.fromConnString(file);
      saver.db.prepare("DELETE FROM langgraph_replan_thread_claims").run();
      const h = harness(draft, [scriptedTool("a", [{ done: true }])], { checkpointer: saver });
      const error = await resumeRun(h.graph, h.config, { action: "retry" }).catch((e: unknown) => e);
      expect(isPlanManagerError(error) && [error.code, error.message]).toEqual([
        "invalid_resume",
        'thread "t1" has no pending interrupt (status: running): no question waits for an answer, but the run was ' +
          "cut before it finished (its process ended); take it up with graph.invoke(null, config)",
      ]);
      expect((await h.run(null)).status).toBe("completed");
      saver.db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

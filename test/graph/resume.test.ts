import { describe, expect, it } from "vitest";
import { resumeRun } from "../../src/graph/resume.js";
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

import { describe, expect, it } from "vitest";
import { PlanManagerError } from "../../src/errors.js";

describe("PlanManagerError.getResponse (what LangGraph's API server answers with)", () => {
  it("a caller's mistake is a 4xx carrying the code and the message; anything else a 500 with them", async () => {
    const answer = async (code: PlanManagerError["code"]) => {
      const res = new PlanManagerError(code, `why ${code}`).getResponse();
      return [res.status, res.headers.get("content-type"), await res.json()];
    };
    expect(await answer("invalid_update")).toEqual([
      422,
      "application/json",
      { error: "invalid_update", message: "why invalid_update" },
    ]);
    expect((await answer("invalid_input"))[0]).toBe(422);
    expect((await answer("invalid_resume"))[0]).toBe(422);
    expect((await answer("thread_busy"))[0]).toBe(409);
    expect((await answer("thread_finished"))[0]).toBe(409);
    expect((await answer("thread_stopped"))[0]).toBe(409);
    expect(await answer("planner_failed")).toEqual([
      500,
      "application/json",
      { error: "planner_failed", message: "why planner_failed" },
    ]);
  });

  it("a message with quotes, markup and control characters stays valid JSON", async () => {
    const message = 'bad "key" </script>\u0000\u202e';
    const res = new PlanManagerError("invalid_update", message).getResponse();
    expect(await res.json()).toEqual({ error: "invalid_update", message });
  });
});

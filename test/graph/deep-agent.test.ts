import { AIMessage } from "@langchain/core/messages";
import { fakeModel } from "@langchain/core/testing";
import { createDeepAgent } from "deepagents";
import { describe, expect, it } from "vitest";
import { harness } from "../helpers/graph.js";

describe("a deep agent as a step's agent", () => {
  it("createDeepAgent does a step: its final message is read as the step's answer", async () => {
    const model = fakeModel().respond(new AIMessage('{"summary": "parse() stops one token early"}'));
    const deep = createDeepAgent({ model, tools: [] });
    const plan = {
      steps: [{ id: "read", goal: "Read the issue", agent: "deep", inputs: ["issue"], produces: ["summary"] }],
    };
    const h = harness(plan, [], { agents: { deep }, context: { issue: "parse() drops the last token" } });
    const out = await h.run();
    expect(out.status).toBe("completed");
    expect(out.facts.summary.value).toBe("parse() stops one token early");
    expect(model.callCount).toBe(1);
    expect(out.usage.map((u: { purpose: string; stepId: string }) => `${u.purpose}:${u.stepId}`)).toEqual([
      "step:read",
    ]);
  });
});

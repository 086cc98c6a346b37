import { InMemoryStore, MemorySaver } from "@langchain/langgraph";
import { describe, expect, it } from "vitest";
import { createPlanManager, llmPlanner } from "../../src/index.js";
import { fakeClock } from "../helpers/clock.js";
import { ScriptedChatModel } from "../helpers/fake-model.js";
import { httpError, scriptedTool } from "../helpers/graph.js";
import { llmAnswer, llmStep } from "../helpers/llm-answers.js";

const answer = llmAnswer;

const first = answer(
  [
    llmStep("search", { tool: "lookup", produces: ["company"] }),
    llmStep("portal", {
      tool: "portal",
      dependsOn: ["search"],
      inputs: ["company"],
      produces: ["report"],
      assumptions: ["portal_up"],
    }),
  ],
  [{ id: "portal_up", statement: "the portal serves reports", check: null }],
);
const replacement = answer([llmStep("mirror", { tool: "mirror", inputs: ["company"], produces: ["report"] })]);

describe("llmPlanner with replan memory in hint mode", () => {
  it("the second thread's replan prompt shows the replacement the first thread saved", async () => {
    const model = new ScriptedChatModel([first, replacement, first, replacement]);
    const graph = createPlanManager({
      tools: [
        scriptedTool("lookup", [{ company: "Acme" }]),
        scriptedTool("portal", [httpError(404)]),
        scriptedTool("mirror", [{ report: "r" }]),
      ],
      planner: llmPlanner({ model }),
      clock: fakeClock(),
      replanMemory: { mode: "hint" },
    }).compile({ checkpointer: new MemorySaver(), store: new InMemoryStore() });
    for (const thread of ["A", "B"])
      await graph.invoke({ goal: "report on Acme" }, { configurable: { thread_id: thread } });
    expect(model.received).toHaveLength(4);
    const promptA = String(model.received[1]!.at(-1)!.content);
    const promptB = String(model.received[3]!.at(-1)!.content);
    expect(promptA).not.toContain("Replacements that fixed this broken assumption");
    expect(promptB).toContain(
      "Replacements that fixed this broken assumption on steps of the same shape in other runs\n" +
        "(adapt them; pass facts through `inputs`, not as literal arguments):\n" +
        '- 0 of 0 reuses succeeded: [{"id":"s1","goal":"goal mirror","tool":"mirror","inputs":["company"],' +
        '"produces":["report"]}]',
    );
  });
});

/** The client's model's text read as the JSON the planner asked for (src/mcp/sampling-json.ts). */
import { describe, expect, it } from "vitest";
import { SamplingChatModel } from "../../src/mcp/sampling-chat-model.js";
import { parseJsonText } from "../../src/mcp/sampling-json.js";

describe("parseJsonText", () => {
  it("reads bare JSON, and the first fenced block of a chatty reply", () => {
    expect(parseJsonText(' {"steps": []} ')).toEqual({ steps: [] });
    expect(parseJsonText('Sure:\n```json\n{"steps": [1]}\n```\nand later\n```json\n{"no": 1}\n```')).toEqual({
      steps: [1],
    });
    expect(parseJsonText('```\n{"steps": 2}\n```')).toEqual({ steps: 2 });
  });

  it("text with no JSON object is an OutputParserException the planner sends back to the model", () => {
    const thrown = (text: string) => {
      try {
        parseJsonText(text);
      } catch (error) {
        return [
          (error as { lc_error_code?: string }).lc_error_code,
          (error as Error).message.split(" (")[0]!.split("\n")[0],
        ];
      }
      return undefined;
    };
    expect(thrown("I would read the notes first.")).toEqual(["OUTPUT_PARSING_FAILURE", "the reply is not JSON"]);
    expect(thrown("[1, 2]")).toEqual([
      "OUTPUT_PARSING_FAILURE",
      "the reply is JSON but not an object; answer with one JSON object",
    ]);
  });
});

describe("SamplingChatModel options", () => {
  it("are checked where they enter, naming the field", () => {
    expect(() => new SamplingChatModel({ maxTokens: 0 })).toThrow(
      expect.objectContaining({ code: "invalid_options", path: "maxTokens" }),
    );
    expect(() => new SamplingChatModel({ timeoutMs: 1.5 })).toThrow(
      expect.objectContaining({ code: "invalid_options", path: "timeoutMs" }),
    );
    const model = new SamplingChatModel();
    expect([model.maxTokens, model.timeoutMs, model._llmType()]).toEqual([8192, 300_000, "mcp-sampling"]);
  });

  it("outside any MCP client's call, a call is sampling_unsupported", async () => {
    await expect(new SamplingChatModel({ maxRetries: 0 }).invoke("plan")).rejects.toMatchObject({
      code: "sampling_unsupported",
    });
  });
});

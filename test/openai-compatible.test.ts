/**
 * The default LLM path end to end: ChatOpenAI against an OpenAI-compatible server on
 * 127.0.0.1 (as vLLM, llama.cpp or Ollama would be), with strict structured output.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { defaultPlanner } from "../examples/default-planner.js";
import { loanPlan, createLoanTools } from "../examples/loan/workflow.js";
import { harness } from "./helpers/graph.js";

const plan = {
  rationale: null,
  assumptions: [],
  steps: [
    {
      id: "verify",
      goal: "Verifying identity",
      tool: "verify_identity",
      argsJson: null,
      inputs: ["applicant_id"],
      produces: ["identity_verified"],
      dependsOn: null,
      assumptions: null,
      preconditions: null,
      successSignal: "output.identity_verified == true",
      when: null,
      retry: null,
      retryOnUnmet: null,
      fallback: null,
      sideEffects: null,
      idempotent: null,
      timeoutMs: null,
      cost: null,
      optional: null,
      human: null,
    },
  ],
};

let server: Server;
let baseURL = "";
const requests: Record<string, unknown>[] = [];

async function body(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text;
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const request = JSON.parse(await body(req)) as Record<string, any>;
    requests.push(request);
    const tools = request.tools as { function: { name: string } }[] | undefined;
    const message = tools?.length
      ? { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: tools[0]!.function.name, arguments: JSON.stringify(plan) } }] }
      : { role: "assistant", content: JSON.stringify(plan) };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ id: "cmpl-1", object: "chat.completion", created: 0, model: request.model, choices: [{ index: 0, message, finish_reason: "stop" }], usage: { prompt_tokens: 1234, completion_tokens: 321, total_tokens: 1555 } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("the default planner", () => {
  it("without a key uses the static planner and says so in one line", () => {
    expect(defaultPlanner({ plan: loanPlan }, {}).description).toBe("OPENAI_API_KEY is not set: using the static planner");
  });

  it("with a key plans through ChatOpenAI on an OpenAI-compatible server, strict schema and usage included", async () => {
    const { planner, description } = defaultPlanner({ plan: loanPlan }, { OPENAI_API_KEY: "sk-local", OPENAI_BASE_URL: baseURL, PLANNER_MODEL: "local-model" });
    expect(description).toBe(`LLM planner: local-model at ${baseURL}`);
    const out = await harness(planner, createLoanTools().tools, { context: { applicant_id: "A-7291" } }).run();
    expect(out.status).toBe("completed");
    expect(out.plan.steps.map((s: { id: string }) => s.id)).toEqual(["verify"]);
    expect(out.usage).toMatchObject([{ purpose: "plan", model: "local-model", inputTokens: 1234, outputTokens: 321 }]);
    const sent = requests[0]!;
    expect(sent.model).toBe("local-model");
    const format = sent.response_format as { type: string; json_schema?: { strict?: boolean; name?: string } } | undefined;
    const strictTool = (sent.tools as { function: { strict?: boolean } }[] | undefined)?.[0]?.function.strict;
    expect(format?.json_schema?.strict ?? strictTool).toBe(true);
  });
});

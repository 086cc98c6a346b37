/**
 * The default LLM path end to end: ChatOpenAI against an OpenAI-compatible server on
 * 127.0.0.1 (as vLLM, llama.cpp or Ollama would be), with strict structured output — and
 * answers from servers that do not enforce the schema, errors, and retries.
 */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { ChatOpenAI } from "@langchain/openai";
import { toJsonSchema } from "@langchain/core/utils/json_schema";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { defaultPlanner } from "../../examples/default-planner.js";
import { loanPlan, createLoanTools } from "../../examples/loan/workflow.js";
import { llmPlanner } from "../../src/planners/llm-planner.js";
import { LlmPlanDraftSchema } from "../../src/planners/llm-schema.js";
import { instantBackoff } from "../helpers/fake-model.js";
import { harness, scriptedTool } from "../helpers/graph.js";

const strictStep = {
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
};
const plan = { rationale: null, assumptions: [], steps: [strictStep] };

/** What the server answers next: a plan (as content or a tool call, as the request asks) or an HTTP error. */
type Reply = { answer: unknown } | { status: number; error: { message: string; type?: string; code?: string | null } };

let server: Server;
let baseURL = "";
let requests: Record<string, any>[] = [];
let replies: Reply[] = [];

async function body(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text;
}

beforeAll(async () => {
  server = createServer(async (req, res) => {
    const request = JSON.parse(await body(req)) as Record<string, any>;
    requests.push(request);
    // The last reply repeats, like the fake model's script.
    const reply = replies.length > 1 ? replies.shift()! : (replies[0] ?? { answer: plan });
    if ("status" in reply) {
      res.writeHead(reply.status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: reply.error }));
      return;
    }
    const text = JSON.stringify(reply.answer);
    const tools = request.tools as { function: { name: string } }[] | undefined;
    const call = { id: "call_1", type: "function", function: { name: tools?.[0]?.function.name, arguments: text } };
    const message = tools?.length
      ? { role: "assistant", content: null, tool_calls: [call] }
      : { role: "assistant", content: text };
    const usage = { prompt_tokens: 1234, completion_tokens: 321, total_tokens: 1555 };
    const choices = [{ index: 0, message, finish_reason: "stop" }];
    res.writeHead(200, { "content-type": "application/json" });
    const completion = { id: "cmpl-1", object: "chat.completion", created: 0, model: request.model, choices, usage };
    res.end(JSON.stringify(completion));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  requests = [];
  replies = [];
});

const env = () => ({ OPENAI_API_KEY: "sk-local", OPENAI_BASE_URL: baseURL, PLANNER_MODEL: "local-model" });
const verifyTool = () => scriptedTool("verify_identity", [{ identity_verified: true }]);

describe("the default planner", () => {
  it("without a key uses the static planner and says so in one line", () => {
    const { description } = defaultPlanner({ plan: loanPlan }, {});
    expect(description).toBe("OPENAI_API_KEY is not set: using the static planner");
  });

  it("with a key plans through ChatOpenAI on an OpenAI-compatible server, strict schema and usage", async () => {
    const { planner, description } = defaultPlanner({ plan: loanPlan }, env());
    expect(description).toBe(`LLM planner: local-model at ${baseURL}`);
    const out = await harness(planner, createLoanTools().tools, { context: { applicant_id: "A-7291" } }).run();
    expect(out.status).toBe("completed");
    expect(out.plan.steps.map((s: { id: string }) => s.id)).toEqual(["verify"]);
    expect(out.usage).toMatchObject([{ purpose: "plan", model: "local-model", inputTokens: 1234, outputTokens: 321 }]);
    const sent = requests[0]!;
    expect(sent.model).toBe("local-model");
    expect(sent.response_format).toEqual({
      type: "json_schema",
      json_schema: {
        name: "plan_draft",
        strict: true,
        schema: JSON.parse(JSON.stringify(toJsonSchema(LlmPlanDraftSchema))),
      },
    });
  });
});

describe("answers from servers that do not enforce the schema", () => {
  const natural = {
    steps: [
      {
        id: "verify",
        goal: "Verifying identity",
        tool: "verify_identity",
        args: { channel: "passport" },
        inputs: ["applicant_id"],
        produces: ["identity_verified"],
        successSignal: "output.identity_verified == true",
        fallback: { tool: "verify_identity", args: { channel: "manual" } },
      },
    ],
  };
  const ranPlan = [
    {
      id: "verify",
      goal: "Verifying identity",
      tool: "verify_identity",
      args: { channel: "passport" },
      inputs: ["applicant_id"],
      produces: ["identity_verified"],
      successSignal: "output.identity_verified == true",
      fallback: { tool: "verify_identity", args: { channel: "manual" } },
    },
  ];

  // gpt-4-turbo takes ChatOpenAI's function-calling path; other names its json_schema path.
  const paths = [
    ["local-model", "json_schema response format"],
    ["gpt-4-turbo", "strict function call"],
  ] as const;
  for (const [modelName, path] of paths) {
    it(`a plan in the natural shape runs (${path}): nullable fields left out, args as an object`, async () => {
      replies = [{ answer: natural }];
      const model = new ChatOpenAI({ model: modelName, apiKey: "sk-local", configuration: { baseURL } });
      const verify = verifyTool();
      const out = await harness(llmPlanner({ model }), [verify], { context: { applicant_id: "A-7291" } }).run();
      expect(out.status).toBe("completed");
      expect(out.plan.steps).toEqual(ranPlan);
      expect(verify.calls).toEqual([{ channel: "passport", applicant_id: "A-7291" }]);
      expect(requests).toHaveLength(1);
      expect(out.usage).toMatchObject([{ purpose: "plan", model: modelName, inputTokens: 1234, outputTokens: 321 }]);
    });
  }

  it("an object where the JSON string belongs is taken as the parsed value; strict answers run as before", async () => {
    const objectArgs = { ...plan, steps: [{ ...strictStep, argsJson: { channel: "passport" } }] };
    const strictArgs = { ...plan, steps: [{ ...strictStep, argsJson: '{"channel":"passport"}' }] };
    for (const answer of [objectArgs, strictArgs]) {
      replies = [{ answer }];
      const model = new ChatOpenAI({ model: "local-model", apiKey: "sk-local", configuration: { baseURL } });
      const verify = verifyTool();
      const out = await harness(llmPlanner({ model }), [verify], { context: { applicant_id: "A-7291" } }).run();
      expect(out.status).toBe("completed");
      expect(out.plan.steps).toEqual([
        {
          id: "verify",
          goal: "Verifying identity",
          tool: "verify_identity",
          args: { channel: "passport" },
          inputs: ["applicant_id"],
          produces: ["identity_verified"],
          successSignal: "output.identity_verified == true",
        },
      ]);
      expect(verify.calls).toEqual([{ channel: "passport", applicant_id: "A-7291" }]);
    }
  });

  it("a natural answer that misses a required field goes back to the model with the issue", async () => {
    const { goal: _, ...noGoal } = natural.steps[0]!;
    replies = [{ answer: { steps: [noGoal] } }, { answer: natural }];
    const model = new ChatOpenAI({ model: "local-model", apiKey: "sk-local", configuration: { baseURL } });
    const out = await harness(llmPlanner({ model }), [verifyTool()], { context: { applicant_id: "A-7291" } }).run();
    expect(out.status).toBe("completed");
    expect(requests).toHaveLength(2);
    expect(requests[1]!.messages.at(-1)).toEqual({
      role: "user",
      content:
        "That plan was rejected. Fix these problems and return the whole corrected answer:\n" +
        "- steps.0.goal: Invalid input: expected string, received undefined",
    });
  });
});

describe("model errors through ChatOpenAI", () => {
  let backoff: ReturnType<typeof instantBackoff>;
  beforeEach(() => {
    backoff = instantBackoff();
  });
  afterEach(() => backoff.restore());

  it("the planner's calls.maxRetries is the one knob: the model's own retries are off", async () => {
    replies = [{ status: 503, error: { message: "overloaded", type: "server_error" } }];
    // ChatOpenAI's own maxRetries defaults to 6: left on, each attempt would be 7 requests.
    const model = new ChatOpenAI({ model: "local-model", apiKey: "sk-local", configuration: { baseURL } });
    const out = await harness(llmPlanner({ model, calls: { maxRetries: 1 } }), [verifyTool()]).run();
    expect(requests).toHaveLength(2);
    expect(backoff.delays).toEqual([1000]);
    expect(out.status).toBe("failed");
    const [first, second] = out.usage.map((u: { errorId?: string }) => u.errorId);
    expect(first).toMatch(/^err_[0-9a-f]{8}$/);
    expect(out.outcome.message).toBe(
      `the planner failed: model call failed after 2 attempts (503): 503 overloaded [${second}]`,
    );
  });

  it("a 503 then an answer: retried once, both calls in usage", async () => {
    replies = [{ status: 503, error: { message: "overloaded" } }, { answer: plan }];
    const { planner } = defaultPlanner({ plan: loanPlan }, env());
    const out = await harness(planner, createLoanTools().tools, { context: { applicant_id: "A-7291" } }).run();
    expect(out.status).toBe("completed");
    expect(requests).toHaveLength(2);
    expect(backoff.delays).toEqual([1000]);
    const calls = out.usage.map((u: { errorId?: string; inputTokens: number }) => [
      u.errorId ? "error" : "ok",
      u.inputTokens,
    ]);
    expect(calls).toEqual([
      ["error", 0],
      ["ok", 1234],
    ]);
  });

  it("401 and insufficient_quota are not retried, and the outcome says which", async () => {
    const badKey = {
      message: "Incorrect API key provided: sk-local.",
      type: "invalid_request_error",
      code: "invalid_api_key",
    };
    replies = [{ status: 401, error: badKey }];
    const { planner } = defaultPlanner({ plan: loanPlan }, env());
    const auth = await harness(planner, createLoanTools().tools).run();
    expect(requests).toHaveLength(1);
    expect(auth.status).toBe("failed");
    expect(auth.outcome.message).toBe(
      "the planner failed: model call authentication failed (401): 401 Incorrect API key provided: sk-local. " +
        `[${auth.usage[0].errorId}]`,
    );

    requests = [];
    const noQuota = {
      message: "You exceeded your current quota.",
      type: "insufficient_quota",
      code: "insufficient_quota",
    };
    replies = [{ status: 429, error: noQuota }];
    const quota = await harness(planner, createLoanTools().tools).run();
    expect(requests).toHaveLength(1);
    const errorId = quota.usage[0].errorId;
    expect(errorId).toMatch(/^err_[0-9a-f]{8}$/);
    expect(quota.outcome.message).toBe(
      `the planner failed: model call quota exhausted (429): 429 You exceeded your current quota. [${errorId}]`,
    );
    expect(backoff.delays).toEqual([]);
    expect(quota.usage).toEqual([
      {
        purpose: "plan",
        model: "local-model",
        inputTokens: 0,
        outputTokens: 0,
        latencyMs: expect.any(Number),
        cost: 0,
        errorId,
        at: "2026-01-01T00:00:00.000Z",
      },
    ]);
  });
});

/**
 * Plans made with the MCP client's own model (docs/decisions/0060-sampling-through-the-client.md):
 * `SamplingChatModel` sends `sampling/createMessage` to the client whose call started, answered or
 * resumed the run, driven here by the official SDK client with a sampling handler.
 */
import type { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { CreateMessageRequestSchema, type CreateMessageRequest } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMcpServer, PlanService, zeroConfigGraph } from "../../src/mcp/index.js";
import { tempSqlite, type ToolResult } from "../helpers/mcp.js";

let saver: SqliteSaver;
let drop: () => void;

beforeEach(() => void ({ saver, drop } = tempSqlite("mcp-sampling-")));
afterEach(() => drop());

/** Two steps the agent does itself: read the file, then write the summary. */
const answerDraft = {
  steps: [
    {
      id: "read",
      goal: "read the notes",
      tool: null,
      external: { instructions: "read notes.md and answer { notes }" },
      produces: ["notes"],
    },
    {
      id: "write",
      goal: "write the summary",
      tool: null,
      external: { instructions: "write summary.md from the notes and answer { summary }" },
      dependsOn: ["read"],
      inputs: ["notes"],
      produces: ["summary"],
    },
  ],
  assumptions: [],
  rationale: "read first, then write",
};

const fenced = (value: unknown) => `Here is the plan:\n\`\`\`json\n${JSON.stringify(value, null, 2)}\n\`\`\`\n`;

function served() {
  const graph = zeroConfigGraph().compile({ checkpointer: saver });
  return new PlanService({ graphs: { plans: graph }, saver, server: { name: "langgraph-replan", version: "test" } });
}

/** A client linked in memory; with `replies`, it samples (each request answered with the next reply). */
async function connect(service: PlanService, replies?: string[]) {
  const requests: CreateMessageRequest["params"][] = [];
  const client = new Client(
    { name: replies ? "sampling-agent" : "plain-agent", version: "1" },
    {
      capabilities: replies ? { sampling: {} } : {},
    },
  );
  if (replies)
    client.setRequestHandler(CreateMessageRequestSchema, (request) => {
      requests.push(request.params);
      const text = replies.shift() ?? "no more replies";
      return { role: "assistant", model: "client-model-1", content: { type: "text", text } };
    });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(service).connect(serverSide);
  await client.connect(clientSide);
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  return { client, call, requests, close: () => client.close() };
}

/** Does the two external steps as the agent would, and waits for the end. */
async function doSteps(call: Awaited<ReturnType<typeof connect>>["call"], planId: string) {
  expect((await call("plan_wait", { plan_id: planId, timeout_s: 300 })).structuredContent!.status).toBe(
    "awaiting_human",
  );
  expect((await call("plan_next", { plan_id: planId })).structuredContent!.steps.map((s: any) => s.stepId)).toEqual([
    "read",
  ]);
  await call("plan_submit", { plan_id: planId, step_id: "read", output: { notes: "three points" } });
  await call("plan_wait", { plan_id: planId, timeout_s: 300 });
  await call("plan_submit", { plan_id: planId, step_id: "write", output: { summary: "one line" } });
  return (await call("plan_wait", { plan_id: planId, timeout_s: 300 })).structuredContent!;
}

describe("SamplingChatModel: plans made with the client's model", () => {
  it("asks the client for the plan as JSON text in the draft's shape, runs the fenced answer, the steps the agent's", async () => {
    const service = served();
    const { call, requests, close } = await connect(service, [fenced(answerDraft)]);
    const planId = (await call("plan_create", { goal: "summarise my notes" })).structuredContent!.plan_id as string;
    const done = await doSteps(call, planId);
    expect(done).toMatchObject({
      status: "completed",
      steps: [
        { id: "read", status: "succeeded", attempts: 1 },
        { id: "write", status: "succeeded", attempts: 1 },
      ],
    });
    expect(requests).toHaveLength(1);
    const [asked] = requests;
    expect([asked!.maxTokens, asked!.includeContext, asked!.messages.length, asked!.messages[0]!.role]).toEqual([
      8192,
      "none",
      1,
      "user",
    ]);
    expect(asked!.messages[0]!.content).toMatchObject({ type: "text" });
    expect(JSON.stringify(asked!.messages[0]!.content)).toContain("summarise my notes");
    expect(asked!.systemPrompt).toContain('Answer with one JSON object only (the "plan_draft")');
    expect(asked!.systemPrompt).toContain('"external"');
    await service.settled();
    await close();
  });

  it("a reply that is not JSON goes back to the client's model with the parse error, and the next draft is run", async () => {
    const service = served();
    const rambling = "Sure! First I would read the notes, then write a summary.";
    const { call, requests, close } = await connect(service, [rambling, JSON.stringify(answerDraft)]);
    const planId = (await call("plan_create", { goal: "summarise my notes" })).structuredContent!.plan_id as string;
    expect((await doSteps(call, planId)).status).toBe("completed");
    expect(requests).toHaveLength(2);
    const retry = requests[1]!.messages;
    expect(retry.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(retry[1]!.content).toEqual({ type: "text", text: rambling });
    expect(JSON.stringify(retry[2]!.content)).toContain("the reply is not JSON");
    await service.settled();
    await close();
  });

  it("a client without sampling gets sampling_unsupported, and plan_resume from one that samples carries the plan on", async () => {
    const service = served();
    const plain = await connect(service);
    const planId = (await plain.call("plan_create", { goal: "summarise my notes" })).structuredContent!
      .plan_id as string;
    const waited = (await plain.call("plan_wait", { plan_id: planId, timeout_s: 300 })).structuredContent!;
    expect(waited.error).toEqual({
      failure_reason: "run_threw",
      code: "sampling_unsupported",
      message:
        "the MCP client plain-agent did not declare the sampling capability, and this server plans with the " +
        "client's model: call plan_resume from a client that declares it, or give plan_create a plan",
      recoverable: true,
    });
    expect([waited.status, waited.plan_version, waited.steps]).toEqual(["planning", null, []]);
    const sampling = await connect(service, [JSON.stringify(answerDraft)]);
    expect((await sampling.call("plan_resume", { plan_id: planId })).structuredContent).toEqual({
      plan_id: planId,
      status: "running",
    });
    expect((await doSteps(sampling.call, planId)).status).toBe("completed");
    expect(sampling.requests).toHaveLength(1);
    await service.settled();
    await plain.close();
    await sampling.close();
  });
});

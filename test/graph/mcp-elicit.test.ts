/**
 * Questions asked of the client's user through MCP elicitation
 * (docs/decisions/0061-questions-elicited-from-the-client.md), driven by the official SDK client's
 * elicitation handler: in memory, and over Streamable HTTP on 127.0.0.1.
 */
import { randomUUID } from "node:crypto";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { ElicitRequestSchema, type ElicitRequest, type ElicitResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createPlanManager, staticPlanner, type PlanDraft } from "../../src/index.js";
import { createMcpServer, PlanService } from "../../src/mcp/index.js";
import { MAX_ELICITED } from "../../src/mcp/elicitations.js";
import { scriptedTool } from "../helpers/graph.js";
import { mcpArgs, tempSqlite, weatherDraft, type ToolResult } from "../helpers/mcp.js";

let dir: string;
let saver: SqliteSaver;
let drop: () => void;

beforeEach(() => void ({ dir, saver, drop } = tempSqlite("mcp-elicit-")));
afterEach(() => drop());

/** Fetch the forecast, then a person plans the day from it (they produce `day`). */
const askedDraft: PlanDraft = {
  steps: [
    { id: "fetch", goal: "fetch the forecast", tool: "forecast", produces: ["forecast"] },
    {
      id: "choose",
      goal: "choose the day",
      human: { prompt: "what shall we do?" },
      dependsOn: ["fetch"],
      inputs: ["forecast"],
      produces: ["day"],
    },
  ],
};

function served(options: { reviewPlan?: boolean; draft?: PlanDraft; elicit?: boolean } = {}) {
  const graph = createPlanManager({
    tools: [scriptedTool("forecast", [{ forecast: "sunny" }]), scriptedTool("planDay", [{ day: "picnic" }])],
    planner: staticPlanner({ plan: options.draft ?? weatherDraft }),
    ...(options.reviewPlan ? { reviewPlan: true } : {}),
  }).compile({ checkpointer: saver });
  return new PlanService({
    graphs: { weather: graph },
    saver,
    server: { name: "langgraph-replan", version: "test" },
    ...(options.elicit === false ? { elicit: false } : {}),
  });
}

type Answering = (request: ElicitRequest, signal: AbortSignal) => Promise<ElicitResult> | ElicitResult;

/** A client that declares form elicitation (or none) and answers each form with `answering`; its forms in order. */
function agent(answering: Answering, capable = true) {
  const client = new Client(
    { name: "elicit-agent", version: "1" },
    { capabilities: capable ? { elicitation: { form: {} } } : {} },
  );
  const asked: ElicitRequest[] = [];
  if (capable)
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
      asked.push(request);
      return answering(request, extra.signal);
    });
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as ToolResult;
  return { client, asked, call };
}

async function inMemory(service: PlanService, answering: Answering, capable = true) {
  const { client, asked, call } = agent(answering, capable);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await createMcpServer(service).connect(serverSide);
  await client.connect(clientSide);
  return { client, asked, call };
}

/** Resolves once `n` forms were asked (the forms go out in the background, after the run pauses). */
async function forms(asked: ElicitRequest[], n: number) {
  while (asked.length < n) await new Promise((resolve) => setTimeout(resolve, 10));
  return asked;
}

const planId = (result: ToolResult) => (result.structuredContent as { plan_id: string }).plan_id;

describe("questions elicited from the client's user", () => {
  it("a plan review is asked once with a flat form; accepted, the plan goes on to its end", async () => {
    const service = served({ reviewPlan: true });
    const { asked, call, client } = await inMemory(service, () => ({
      action: "accept",
      content: { action: "approve" },
    }));
    const id = planId(await call("plan_create", { goal: "a day out" }));
    await forms(asked, 1);
    expect(asked[0]!.params).toEqual({
      mode: "form",
      message: [
        `plan review: ${asked[0]!.params.message.split("\n")[0]!.slice("plan review: ".length)}`,
        "Goal: a day out",
        "1. fetch: fetch the forecast (tool forecast)",
        "2. plan: plan the day (tool planDay)",
      ].join("\n"),
      requestedSchema: {
        type: "object",
        properties: {
          action: {
            type: "string",
            title: "Answer",
            oneOf: [
              { const: "approve", title: "Approve" },
              { const: "abort", title: "Abort the plan" },
            ],
          },
          reason: { type: "string", title: "Reason", description: "Why (abort, reject); optional." },
        },
        required: ["action"],
      },
    });
    await service.settled();
    const done = (await call("plan_wait", { plan_id: id, timeout_s: 60 })).structuredContent;
    expect([done.status, done.progress]).toEqual(["completed", { done: 2, total: 2 }]);
    expect(asked).toHaveLength(1);
    await client.close();
  });

  it("an invalid answer is asked once more with why; invalid again, the question is left for plan_answer", async () => {
    const service = served({ draft: askedDraft });
    // `complete` without the `day` the step produces: refused both times.
    const { asked, call, client } = await inMemory(service, () => ({
      action: "accept",
      content: { action: "complete" },
    }));
    const id = planId(await call("plan_create", { goal: "a day out" }));
    await forms(asked, 2);
    await service.settled();
    const forms2 = asked.map((r) => r.params as { message: string; requestedSchema: { properties: object } });
    expect(Object.keys(forms2[0]!.requestedSchema.properties)).toEqual(["action", "reason", "day"]);
    expect(forms2[0]!.message).toContain("Fact forecast: sunny");
    expect(forms2[1]!.message.split("\n").at(-1)).toBe(
      `Your answer was refused: plan "${id}", human_step: output is missing day, which step "choose" must produce. ` +
        "Answer once more, or later with plan_answer.",
    );
    const pending = (await call("plan_status", { plan_id: id })).structuredContent;
    expect([pending.status, pending.question.kind]).toEqual(["awaiting_human", "human_step"]);
    // Polls do not ask again.
    await call("plan_wait", { plan_id: id, timeout_s: 0 });
    await call("plan_status", { plan_id: id });
    expect(asked).toHaveLength(2);
    await call("plan_answer", { plan_id: id, answer: { action: "complete", output: { day: "picnic" } } });
    await service.settled();
    expect((await service.status(id)).status).toBe("completed");
    await client.close();
  });

  it("a valid answer in the form's fields completes a human step (JSON or text per fact)", async () => {
    const service = served({ draft: askedDraft });
    const { asked, call, client } = await inMemory(service, () => ({
      action: "accept",
      content: { action: "complete", day: "picnic by the river" },
    }));
    const id = planId(await call("plan_create", { goal: "a day out" }));
    await forms(asked, 1);
    await service.settled();
    const done = await service.wait(id, 60);
    expect([done.status, done.steps.map((s) => s.status)]).toEqual(["completed", ["succeeded", "succeeded"]]);
    expect(done.steps[1]!.facts).toEqual({ day: "trusted" });
    expect(asked).toHaveLength(1);
    await client.close();
  });

  it("declined, the question stays pending and is not asked again; plan_answer then answers it", async () => {
    const service = served({ reviewPlan: true });
    const { asked, call, client } = await inMemory(service, () => ({ action: "decline" }));
    const id = planId(await call("plan_create", { goal: "a day out" }));
    await forms(asked, 1);
    for (let i = 0; i < 3; i++) await call("plan_wait", { plan_id: id, timeout_s: 0 });
    await call("plan_status", { plan_id: id });
    expect((await service.status(id)).status).toBe("awaiting_review");
    expect(asked).toHaveLength(1);
    expect((await call("plan_answer", { plan_id: id, answer: { action: "approve" } })).isError).toBeUndefined();
    await service.settled();
    expect((await service.status(id)).status).toBe("completed");
    await client.close();
  });

  it("plan_answer first wins: the form's late accept is dropped, and nothing is answered twice", async () => {
    const service = served({ reviewPlan: true });
    let late!: (result: ElicitResult) => void;
    const { asked, call, client } = await inMemory(service, () => new Promise<ElicitResult>((r) => (late = r)));
    const id = planId(await call("plan_create", { goal: "a day out" }));
    await forms(asked, 1);
    expect((await call("plan_answer", { plan_id: id, answer: { action: "approve" } })).isError).toBeUndefined();
    await service.settled();
    // The user answers the withdrawn form after all: "abort" must not reach the plan.
    late({ action: "accept", content: { action: "abort" } });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const done = await service.status(id);
    expect([done.status, done.progress]).toEqual(["completed", { done: 2, total: 2 }]);
    expect(asked).toHaveLength(1);
    await client.close();
  });

  it("elicit: false (--no-elicit) never asks, nor does a client without the capability", async () => {
    for (const [service, capable] of [
      [served({ reviewPlan: true, elicit: false }), true],
      [served({ reviewPlan: true }), false],
    ] as const) {
      const { asked, call, client } = await inMemory(
        service,
        () => ({ action: "accept", content: { action: "approve" } }),
        capable,
      );
      const id = planId(await call("plan_create", { goal: "a day out" }));
      await call("plan_wait", { plan_id: id, timeout_s: 60 });
      await call("plan_status", { plan_id: id });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect([asked.length, (await service.status(id)).status]).toEqual([0, "awaiting_review"]);
      await client.close();
    }
  });

  it("a session that only reads the plan asks its question once; a second session reading it is not asked", async () => {
    const service = served({ reviewPlan: true });
    const starter = await inMemory(service, () => ({ action: "decline" }), false);
    const id = planId(await starter.call("plan_create", { goal: "a day out" }));
    await service.wait(id, 60);
    const one = await inMemory(service, () => ({ action: "decline" }));
    const two = await inMemory(service, () => ({ action: "decline" }));
    await one.call("plan_status", { plan_id: id });
    await forms(one.asked, 1);
    await two.call("plan_status", { plan_id: id });
    await two.call("plan_wait", { plan_id: id, timeout_s: 0 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect([one.asked.length, two.asked.length]).toEqual([1, 0]);
    for (const session of [starter, one, two]) await session.client.close();
  });
});

describe("langgraph-replan mcp over stdio: elicitation and --no-elicit", () => {
  async function stdio(db: string, extra: string[], answering: Answering) {
    const { client, asked, call } = agent(answering);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...mcpArgs(db, "test/fixtures/mcp/langgraph.json"), ...extra],
      env: { PATH: process.env.PATH ?? "", LANGGRAPH_CLI_NO_ANALYTICS: "1", MCP_TEST_REVIEW: "1" },
      stderr: "pipe",
    });
    await client.connect(transport);
    return { client, asked, call };
  }

  it("the review is asked and accepted; with --no-elicit it is never asked and waits for plan_answer", async () => {
    const approve: Answering = () => ({ action: "accept", content: { action: "approve" } });
    const asking = await stdio(join(dir, "asked.sqlite"), [], approve);
    try {
      const id = planId(await asking.call("plan_create", { goal: "asked" }));
      await forms(asking.asked, 1);
      // plan_wait may time out on a loaded machine while the resumed run is still going: wait again.
      let done = (await asking.call("plan_wait", { plan_id: id, timeout_s: 60 })).structuredContent;
      for (let i = 0; i < 3 && done.status === "running"; i++)
        done = (await asking.call("plan_wait", { plan_id: id, timeout_s: 60 })).structuredContent;
      expect([done.status, asking.asked.length]).toEqual(["completed", 1]);
    } finally {
      await asking.client.close();
    }
    const silent = await stdio(join(dir, "silent.sqlite"), ["--no-elicit"], approve);
    try {
      const id = planId(await silent.call("plan_create", { goal: "not asked" }));
      const waiting = (await silent.call("plan_wait", { plan_id: id, timeout_s: 60 })).structuredContent;
      await silent.call("plan_status", { plan_id: id });
      expect([waiting.status, silent.asked.length]).toEqual(["awaiting_review", 0]);
      await silent.call("plan_answer", { plan_id: id, answer: { action: "approve" } });
      const done = (await silent.call("plan_wait", { plan_id: id, timeout_s: 60 })).structuredContent;
      expect([done.status, silent.asked.length]).toEqual(["completed", 0]);
    } finally {
      await silent.client.close();
    }
  }, 400_000);
});

describe("what the service remembers of elicitations is bounded", () => {
  it("at most MAX_ELICITED plans' followers, each for a week; none when elicit is false", () => {
    let now = 0;
    const graph = createPlanManager({ tools: [], planner: staticPlanner({ plan: weatherDraft }) }).compile({
      checkpointer: saver,
    });
    const service = new PlanService({ graphs: { weather: graph }, saver, now: () => now });
    const woken: string[] = [];
    const asker = { consider: (id: string) => void woken.push(id) };
    for (let i = 0; i <= MAX_ELICITED; i++) service.elicitations.follow(`p${i}--weather`, asker);
    expect(service.elicitations.sizes).toEqual({ asked: 0, followers: MAX_ELICITED });
    now += 7 * 24 * 3_600_000 + 1;
    service.elicitations.follow("late--weather", asker);
    expect(service.elicitations.sizes).toEqual({ asked: 0, followers: 1 });
    const off = new PlanService({ graphs: { weather: graph }, saver, elicit: false });
    off.elicitations.follow("p--weather", asker);
    expect([off.elicitations.enabled, off.elicitations.sizes]).toEqual([false, { asked: 0, followers: 0 }]);
    expect(woken).toEqual([]);
  });
});

describe("elicitation over Streamable HTTP on 127.0.0.1", () => {
  let http: HttpServer | undefined;
  afterEach(() => http?.close());

  /** A stateful Streamable HTTP server over `service`: one MCP server per session, as elicitation needs. */
  async function serve(service: PlanService): Promise<URL> {
    const sessions = new Map<string, StreamableHTTPServerTransport>();
    http = createServer((req, res) => {
      void (async () => {
        const id = req.headers["mcp-session-id"];
        let transport = typeof id === "string" ? sessions.get(id) : undefined;
        if (!transport) {
          const made = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            onsessioninitialized: (session) => void sessions.set(session, made),
          });
          transport = made;
          await createMcpServer(service).connect(made);
        }
        await transport.handleRequest(req, res);
      })();
    });
    await new Promise<void>((listening) => http!.listen(0, "127.0.0.1", listening));
    return new URL(`http://127.0.0.1:${(http!.address() as AddressInfo).port}/mcp`);
  }

  it("accepted over HTTP, the plan goes on; declined, it waits for plan_answer", async () => {
    const service = served({ reviewPlan: true });
    const url = await serve(service);
    let answer: ElicitResult = { action: "accept", content: { action: "approve" } };
    const { client, asked, call } = agent(() => answer);
    await client.connect(new StreamableHTTPClientTransport(url));
    const first = planId(await call("plan_create", { goal: "over http" }));
    await forms(asked, 1);
    await service.settled();
    expect((await call("plan_wait", { plan_id: first, timeout_s: 60 })).structuredContent.status).toBe("completed");
    answer = { action: "decline" };
    const second = planId(await call("plan_create", { goal: "over http, declined" }));
    await forms(asked, 2);
    expect((await call("plan_status", { plan_id: second })).structuredContent.status).toBe("awaiting_review");
    await call("plan_answer", { plan_id: second, answer: { action: "approve" } });
    await service.settled();
    expect((await service.status(second)).status).toBe("completed");
    expect(asked.map((r) => (r.params as { message: string }).message.split("\n")[1])).toEqual([
      "Goal: over http",
      "Goal: over http, declined",
    ]);
    await client.close();
  }, 60_000);
});

/**
 * An agent session over MCP with the official SDK client: `langgraph-replan mcp` spawned over stdio
 * with no langgraph.json, so it serves the graph `plans`, planned by the client's own model through
 * sampling (docs/decisions/0060-sampling-through-the-client.md). The client
 * - answers sampling with a fixed plan (a scripted model: any model the client has goes here),
 * - answers the plan's question to a person through its elicitation form
 *   (docs/decisions/0061-questions-elicited-from-the-client.md),
 * - creates the plan as an MCP task and follows it with tasks/get and tasks/result
 *   (docs/decisions/0048-plans-as-mcp-tasks.md), doing the step the plan gives it.
 *
 *   npx tsx examples/mcp-agent/session.ts
 *
 * In your own project the server is `{ command: "npx", args: ["langgraph-replan", "mcp"] }`; here it
 * is this checkout's source, run through tsx.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";

/** The plan the client's model answers with: the agent writes the notes, a person signs them off. */
export const releasePlan = {
  steps: [
    {
      id: "write",
      goal: "write the release notes",
      tool: null,
      external: { instructions: "write the 2.4 notes from CHANGELOG.md; submit { notes }" },
      produces: ["notes"],
    },
    {
      id: "sign_off",
      goal: "sign the notes off",
      tool: null,
      human: { prompt: "publish these notes?" },
      dependsOn: ["write"],
      inputs: ["notes"],
      produces: ["approved"],
    },
  ],
  assumptions: [],
};

const GOAL = "publish the 2.4 release notes";

/** `langgraph-replan mcp` of this checkout, one process (tsx's loader, not its forking command). */
function checkoutServer(db: string) {
  const cli = fileURLToPath(new URL("../../src/cli/main.ts", import.meta.url));
  return { command: process.execPath, args: ["--import", import.meta.resolve("tsx"), cli, "mcp", "--db", db] };
}

/**
 * A client that samples (answering with `releasePlan`) and elicits (accepting the sign-off). What it
 * is asked goes to `asked`, printed by the session in order: the requests come while it waits.
 */
function agentClient(taskId: () => string) {
  const client = new Client(
    { name: "release-agent", version: "1.0.0" },
    { capabilities: { sampling: {}, elicitation: { form: {} } } },
  );
  const asked = { sampling: [] as string[], elicitation: [] as string[] };
  client.setRequestHandler(CreateMessageRequestSchema, (request) => {
    const about = JSON.stringify(request.params.messages).includes(GOAL) ? `a plan for "${GOAL}"` : "a plan";
    asked.sampling.push(`← sampling/createMessage: ${about}; the model answers with 2 steps`);
    return { role: "assistant", model: "scripted", content: { type: "text", text: JSON.stringify(releasePlan) } };
  });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    const task = await client.experimental.tasks.getTask(taskId());
    const content = { action: "complete", approved: "true" };
    asked.elicitation.push(
      `← elicitation/create: ${request.params.message.split("\n")[0]}`,
      `  tasks/get meanwhile: ${task.status}`,
      `  the user accepts: ${JSON.stringify(content)}`,
    );
    return { action: "accept", content };
  });
  return { client, asked };
}

/** Polls tasks/get while the plan is working; the first other status. */
async function nextStatus(client: Client, taskId: string) {
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (task.status !== "working") return task;
    await new Promise((resolve) => setTimeout(resolve, task.pollInterval ?? 500));
  }
}

type Structured = Record<string, any>;

/** The session: plan_create as a task, the agent's own step, the person's answer, the result. */
export async function runSession(print: (line: string) => void = console.log): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "mcp-agent-"));
  // No langgraph.json in `dir`: the server serves `plans`, planned through sampling.
  const server = checkoutServer(join(dir, "plans.sqlite"));
  const transport = new StdioClientTransport({ ...server, cwd: dir, stderr: "pipe" });
  // The server's own lines (what it serves, warnings) are read, and shown only if the session fails.
  let serverLog = "";
  transport.stderr?.on("data", (chunk: Buffer) => (serverLog += chunk.toString()));
  let planId = "";
  const { client, asked } = agentClient(() => planId);
  try {
    await client.connect(transport);
    const call = async (name: string, args: Structured) =>
      (await client.callTool({ name, arguments: args })).structuredContent as Structured;
    const { task } = await client.request(
      { method: "tools/call", params: { name: "plan_create", arguments: { goal: GOAL } } },
      CreateTaskResultSchema,
      { task: {} },
    );
    planId = task.taskId;
    print(`→ plan_create as a task: ${task.status}, task id = plan id …${planId.slice(planId.indexOf("--"))}`);
    const waiting = await nextStatus(client, planId);
    asked.sampling.forEach((line) => print(line));
    print(`← tasks/get: ${waiting.status} — ${waiting.statusMessage}`);
    const [step] = (await call("plan_next", { plan_id: planId })).steps as Structured[];
    print(`→ plan_next: ${step!.stepId}, attempt ${step!.context.attempt}, produces ${step!.context.produces}`);
    const notes = "2.4: plans as MCP tasks; questions asked through the client";
    const submitted = await call("plan_submit", { plan_id: planId, step_id: "write", output: { notes } });
    print(`→ plan_submit write: ${submitted.status}`);
    // tasks/result waits for the end (longer than the SDK's 60 s default); the sign-off is elicited meanwhile.
    const result = await client.experimental.tasks.getTaskResult(planId, CallToolResultSchema, { timeout: 300_000 });
    asked.elicitation.forEach((line) => print(line));
    print(`← tasks/get: ${(await client.experimental.tasks.getTask(planId)).status}`);
    const status = result.structuredContent as Structured;
    const steps = (status.steps as Structured[]).map((s) => `${s.id} ${s.status}`).join(", ");
    print(`← tasks/result: ${status.status}, ${status.progress.done} of ${status.progress.total} steps (${steps})`);
  } catch (error) {
    throw new Error(`the session failed; the server said:\n${serverLog}`, { cause: error });
  } finally {
    await client.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await runSession();

/**
 * The plan service's tools on an MCP server (`@modelcontextprotocol/sdk`, an optional peer loaded
 * only by `langgraph-replan mcp` and this subpath). Every tool declares its input and output
 * schemas and answers with `structuredContent`; an error is a tool result with `isError: true`
 * whose content names the `PlanManagerError` code, and nothing is written.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { isPlanManagerError } from "../errors.js";
import { SubmittedErrorSchema } from "../plan/schema/interrupts.js";
import { CheckedTools } from "./checked-tools.js";
import { createInput, planId, Started, StatusShape } from "./tool-schemas.js";
import { MAX_WAIT_S, type PlanService } from "./service.js";
import { PlanTaskStore, type PlanTaskOptions } from "./plan-tasks.js";
import { ElicitSession, type ElicitSessionOptions } from "./elicit-session.js";

type Result = {
  content: { type: "text"; text: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};

/** An error as every tool reports it: `{ error, message, path? }`. */
function errorPayload(error: unknown): { error: string; message: string; path?: string } {
  return isPlanManagerError(error)
    ? { error: error.code, message: error.message, ...(error.path ? { path: error.path } : {}) }
    : { error: "internal", message: error instanceof Error ? error.message : String(error) };
}

/** Runs a tool's body: its value as structured content, or its error as an `isError` result. */
async function answer(body: () => Promise<object>): Promise<Result> {
  try {
    const value = (await body()) as Record<string, unknown>;
    return { content: [{ type: "text", text: JSON.stringify(value) }], structuredContent: value };
  } catch (error) {
    return { content: [{ type: "text", text: JSON.stringify(errorPayload(error)) }], isError: true };
  }
}

/** Options of `createMcpServer`. */
export interface McpServerOptions {
  /** How tasks are answered (plan-tasks.ts): their poll interval. */
  tasks?: PlanTaskOptions;
  /**
   * How questions are asked of the client's user (elicit-session.ts): how long a form waits. Whether
   * they are asked at all is the service's `elicit` option.
   */
  elicitation?: ElicitSessionOptions;
}

/** A plan id from a tool's value, to the session that asks its questions (elicit-session.ts). */
const then =
  (hook: (planId: string) => void) =>
  <T extends { plan_id: string }>(value: T): T => {
    hook(value.plan_id);
    return value;
  };

/**
 * An MCP server offering the service's tools (`plan_create`, `plan_status`, `plan_wait`, …), plans as tasks
 * included; connect it to a transport.
 */
export function createMcpServer(service: PlanService, options: McpServerOptions = {}): McpServer {
  const tasks = new PlanTaskStore(service, options.tasks);
  const server = new McpServer(
    { name: service.server.name, version: service.server.version },
    {
      // A task is a plan (docs/decisions/0048-plans-as-mcp-tasks.md): plan_create makes one when asked.
      capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
      taskStore: tasks,
      instructions:
        "Governed plans: plan_create starts one in the background; plan_wait blocks until it ends or needs an " +
        "answer; plan_status reads it; plan_answer answers its question; plan_next lists the steps you do yourself and plan_submit reports them; " +
        "plan_stop / plan_resume pause and carry on.",
    },
  );

  // This session asks its user the questions of the plans it drives or reads (docs/decisions/0061-questions-elicited-from-the-client.md).
  const asker = new ElicitSession(server.server, service, options.elicitation);
  const closed = server.server.onclose;
  server.server.onclose = () => {
    asker.close();
    closed?.();
  };
  const tools = new CheckedTools(server, answer);
  registerRunTools(tools, service, tasks, asker);
  registerControlTools(tools, service, asker);
  registerReadTools(tools, service, asker);
  registerRetentionTools(tools, service);
  registerExternalStepTools(tools, service, asker);
  return server;
}

/** Tools that start or answer a run: create, answer. */
function registerRunTools(
  server: CheckedTools,
  service: PlanService,
  tasks: PlanTaskStore,
  asker: ElicitSession,
): void {
  const follow = then((id) => asker.follow(id));
  server.registerTool(
    "plan_create",
    {
      description:
        "Start a plan for a goal in the background. The same idempotency_key (or the same goal, context and graph " +
        "within 10 minutes) returns the plan already made; a key reused for another request is refused " +
        "(idempotency_conflict); new_run starts again. Called as a task, the task is the plan (its id the " +
        "plan id) and the task's result is plan_status's.",
      inputSchema: createInput(service.server.graphs),
      // created and server always come back from a call; a task's result is plan_status's instead.
      outputSchema: z.looseObject({
        plan_id: z.string(),
        status: z.string(),
        created: z.boolean().optional(),
        server: z.object({ name: z.string(), version: z.string(), graphs: z.array(z.string()) }).optional(),
      }),
    },
    (input) => answer(() => service.create(input).then(follow)),
    async (input) => {
      // A refusal writes nothing and makes no task: a protocol error carrying the usual payload.
      const created = await service.create(input).then(follow, (error: unknown) => {
        const payload = errorPayload(error);
        throw new McpError(ErrorCode.InvalidParams, JSON.stringify(payload), payload);
      });
      const task = await tasks.getTask(created.plan_id);
      if (!task) throw new McpError(ErrorCode.InvalidParams, `plan "${created.plan_id}" was deleted as it started`);
      return { task };
    },
  );

  server.registerTool(
    "plan_answer",
    {
      description:
        "Answer the plan's pending question (its `question.options` say which actions are offered), checked " +
        "before anything is written; the plan carries on in the background.",
      inputSchema: { plan_id: planId, answer: z.record(z.string(), z.unknown()).describe("{ action, … }") },
      outputSchema: Started.shape,
    },
    ({ plan_id, answer: value }) => answer(() => service.answer(plan_id, value).then(follow)),
  );
}

/** Tools that pause and carry on a run: stop, resume. */
function registerControlTools(server: CheckedTools, service: PlanService, asker: ElicitSession): void {
  const follow = then((id) => asker.follow(id));
  server.registerTool(
    "plan_stop",
    {
      description: "Stop the plan at its next step boundary; plan_resume carries it on.",
      inputSchema: { plan_id: planId, reason: z.string().max(2000).optional() },
      outputSchema: StatusShape,
    },
    ({ plan_id, reason }) => answer(() => service.stop(plan_id, reason)),
  );

  server.registerTool(
    "plan_resume",
    {
      description: "Carry on a stopped plan, or one whose run was cut off (a restart, a crash).",
      inputSchema: { plan_id: planId },
      outputSchema: Started.shape,
    },
    ({ plan_id }) => answer(() => service.resume(plan_id).then(follow)),
  );
}

/** Tools that read plans: status, wait, list, report. */
function registerReadTools(server: CheckedTools, service: PlanService, asker: ElicitSession): void {
  // A question read here and not asked yet is asked of this session's user, once per server.
  const consider = then((id) => asker.consider(id));
  server.registerTool(
    "plan_status",
    {
      description:
        "A plan's status from its latest checkpoint: steps, trust labels, progress, timing, question, error, usage.",
      inputSchema: { plan_id: planId },
      outputSchema: StatusShape,
    },
    ({ plan_id }) => answer(() => service.status(plan_id).then(consider)),
  );

  server.registerTool(
    "plan_wait",
    {
      description: `Block until the plan ends or needs an answer, at most timeout_s seconds (≤ ${MAX_WAIT_S}); returns its status.`,
      inputSchema: { plan_id: planId, timeout_s: z.number().min(0).max(MAX_WAIT_S).optional() },
      outputSchema: StatusShape.extend({ timed_out: z.boolean() }),
    },
    ({ plan_id, timeout_s }) => answer(() => service.wait(plan_id, timeout_s).then(consider)),
  );

  server.registerTool(
    "plan_list",
    {
      description: "Plans, newest first, a page at a time (pass next_cursor back as cursor).",
      inputSchema: {
        status: z.array(z.string()).optional(),
        archived: z.enum(["exclude", "only", "include"]).optional().describe("Archived plans: left out by default."),
        cursor: z.string().optional(),
        limit: z.number().int().min(1).max(200).optional(),
      },
      outputSchema: {
        plans: z.array(z.looseObject({ plan_id: z.string(), graph: z.string(), goal: z.string(), status: z.string() })),
        next_cursor: z.string().optional(),
      },
    },
    (input) => answer(() => service.list(input)),
  );

  server.registerTool(
    "plan_report",
    {
      description: "The plan's report: status, metrics and step lines, as JSON or Markdown.",
      inputSchema: { plan_id: planId, format: z.enum(["json", "markdown"]).optional() },
      outputSchema: { format: z.string(), report: z.unknown() },
    },
    ({ plan_id, format }) => answer(() => service.report(plan_id, format)),
  );
}

/** Tools that keep plans out of the way or remove them. */
function registerRetentionTools(server: CheckedTools, service: PlanService): void {
  server.registerTool(
    "plan_archive",
    {
      description: "Archive the plan (left out of plan_list unless asked; nothing is deleted), or unarchive it.",
      inputSchema: { plan_id: planId, archived: z.boolean().optional().describe("false unarchives (default true).") },
      outputSchema: { plan_id: z.string(), archived: z.boolean() },
    },
    ({ plan_id, archived }) => answer(() => service.archive(plan_id, archived ?? true)),
  );

  server.registerTool(
    "plan_delete",
    {
      description: "Delete the plan's checkpoints, writes and claims; a plan being run refuses (thread_busy).",
      inputSchema: { plan_id: planId },
      outputSchema: { plan_id: z.string(), deleted: z.boolean() },
    },
    ({ plan_id }) => answer(() => service.delete(plan_id)),
  );
}

/** Steps the calling agent does itself (docs/decisions/0042-external-steps.md): what is ready, and its result. */
function registerExternalStepTools(server: CheckedTools, service: PlanService, asker: ElicitSession): void {
  server.registerTool(
    "plan_next",
    {
      description:
        "The external steps ready for you to do (the plan waits on them; do them in any order): goal, instructions, " +
        "trusted inputs, what to produce, the success signal and, for a side effect, the idempotency key to do it " +
        "under. Report each with plan_submit.",
      inputSchema: { plan_id: planId },
      outputSchema: {
        plan_id: z.string(),
        status: z.string(),
        steps: z.array(
          z.looseObject({
            kind: z.literal("external_step"),
            stepId: z.string().optional(),
            reason: z.string(),
            context: z.looseObject({ step: z.looseObject({ id: z.string(), instructions: z.string() }) }),
          }),
        ),
      },
    },
    ({ plan_id }) => answer(() => service.next(plan_id)),
  );

  server.registerTool(
    "plan_submit",
    {
      description:
        "Report the result of an external step (from plan_next): its output, or the error met. Checked before " +
        "anything is written; the manager judges it like a tool's result (success signal, retry, fallback, replan).",
      inputSchema: {
        plan_id: planId,
        step_id: z.string().min(1).max(64).describe("The external step's id (one of plan_next's stepIds)."),
        output: z.unknown().optional().describe("The step's output: an object holding what the step produces."),
        error: SubmittedErrorSchema.optional().describe(
          "What went wrong instead: class transient (offered again), permanent (fallback or replan), " +
            "assumption_broken with the assumption's id (replanned); no class: read from the message.",
        ),
      },
      outputSchema: Started.shape,
    },
    ({ plan_id, ...input }) => answer(() => service.submit(plan_id, input).then(then((id) => asker.follow(id)))),
  );
}

/**
 * MCP tasks over the plan service (docs/decisions/0048-plans-as-mcp-tasks.md): a task is a plan, its
 * id the plan id, and this store holds nothing of its own — every answer is read from the plan's
 * checkpoint, so a task survives a restart of the server as the plan does. `plan_create` makes
 * tasks (server.ts); `tasks/get`, `tasks/result`, `tasks/list` and `tasks/cancel` come here.
 */
import type { CreateTaskOptions, TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import {
  ErrorCode,
  McpError,
  type Request,
  type RequestId,
  type Result,
  type Task,
} from "@modelcontextprotocol/sdk/types.js";
import { isPlanManagerError } from "../errors.js";
import type { PlanService } from "./service.js";
import type { PlanStatus } from "./status.js";
import { taskOf } from "./task-status.js";

/** How often a client (and the SDK's `tasks/result`) is told to read a task's status again (ms). */
export const TASK_POLL_MS = 500;

/** How plans are answered as MCP tasks: the poll interval clients are told, and the clock. */
export interface PlanTaskOptions {
  /** `pollInterval` of every task, in ms (default `TASK_POLL_MS`). */
  pollIntervalMs?: number;
  /** Epoch ms, for a task whose plan has not started yet; tests pass a clock. */
  now?: () => number;
}

/**
 * The MCP task store over the plan service: a plan created as a task is that task, its status read from the
 * plan (docs/decisions/0048-plans-as-mcp-tasks.md).
 */
export class PlanTaskStore implements TaskStore {
  private readonly service: PlanService;
  private readonly pollInterval: number;
  private readonly now: () => number;

  constructor(service: PlanService, options: PlanTaskOptions = {}) {
    this.service = service;
    this.pollInterval = options.pollIntervalMs ?? TASK_POLL_MS;
    this.now = options.now ?? Date.now;
  }

  /** A task is made by `plan_create` alone (a task is a plan): no other request makes one. */
  createTask(_params: CreateTaskOptions, _id: RequestId, request: Request): Promise<Task> {
    return Promise.reject(
      new McpError(ErrorCode.InvalidRequest, `a task is a plan: only plan_create makes one, not ${request.method}`),
    );
  }

  /** The plan's task, or null when there is no such plan. Plans are not bound to a session (nor are the tools). */
  async getTask(taskId: string): Promise<Task | null> {
    const status = await this.planStatus(taskId);
    return status ? this.taskFrom(status) : null;
  }

  /** What `plan_status` returns, once the plan has ended (the SDK's `tasks/result` asks only then). */
  async getTaskResult(taskId: string): Promise<Result> {
    const status = await this.planStatus(taskId);
    if (!status) throw new McpError(ErrorCode.InvalidParams, `no task "${taskId}" (task ids are plan ids)`);
    return { content: [{ type: "text", text: JSON.stringify(status) }], structuredContent: { ...status } };
  }

  /** Nothing to store: a plan's result is its checkpoint's. */
  storeTaskResult(): Promise<void> {
    return Promise.resolve();
  }

  /**
   * `tasks/cancel` stops the plan (`plan_stop`: its next step boundary, resumable with plan_resume,
   * undos as for an operator's stop). Other statuses are the plan's own to say, so none is written.
   */
  async updateTaskStatus(taskId: string, status: Task["status"]): Promise<void> {
    if (status === "cancelled") await this.service.stop(taskId, "cancelled by its MCP client (tasks/cancel)");
  }

  /** Plans newest first, as `plan_list` gives them (archived ones left out), a page at a time. */
  async listTasks(cursor?: string): Promise<{ tasks: Task[]; nextCursor?: string }> {
    const page = await this.service.list(cursor ? { cursor } : {});
    const tasks = page.plans.map((plan): Task => {
      const at = plan.updated_at ?? new Date(this.now()).toISOString();
      return {
        taskId: plan.plan_id,
        ...taskOf(plan),
        ttl: null,
        createdAt: at,
        lastUpdatedAt: at,
        pollInterval: this.pollInterval,
      };
    });
    return { tasks, ...(page.next_cursor ? { nextCursor: page.next_cursor } : {}) };
  }

  /** The task of a plan whose status was just read. */
  taskFrom(status: PlanStatus): Task {
    const createdAt = status.timing.started_at ?? new Date(this.now()).toISOString();
    return {
      taskId: status.plan_id,
      ...taskOf(status),
      // A plan is kept until it is deleted (plan_delete), not for a time.
      ttl: null,
      createdAt,
      lastUpdatedAt: status.timing.last_progress_at ?? createdAt,
      pollInterval: this.pollInterval,
    };
  }

  private async planStatus(planId: string): Promise<PlanStatus | undefined> {
    try {
      return await this.service.status(planId);
    } catch (error) {
      if (isPlanManagerError(error) && error.code === "invalid_input") return undefined;
      throw error;
    }
  }
}

/**
 * The MCP server's tools, with their arguments checked here against each tool's input schema. The
 * SDK checks them too, but answers a refusal as protocol text ("MCP error -32602: Input validation
 * error: …"), and an agent reads every other error of these tools as `{ error, message, path }`
 * (docs/guides/mcp.md): so `tools/call` is answered here, and the SDK keeps what it
 * does best, listing the tools with their JSON schemas.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CreateTaskResult } from "@modelcontextprotocol/sdk/experimental/tasks";
import { CallToolRequestSchema, ErrorCode, McpError, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { PlanManagerError } from "../errors.js";
import { schemaError } from "./argument-errors.js";
import { clientOf, withSamplingClient } from "./sampling-client.js";

type ToolResult = CallToolResult;

export interface ToolConfig<Shape extends z.ZodRawShape> {
  description: string;
  inputSchema: Shape;
  outputSchema: z.ZodRawShape | z.ZodObject;
}

/** A tool a client may call as a task (`taskSupport: "optional"`): what such a call answers. */
export type AsTask<Args> = (args: Args) => Promise<CreateTaskResult>;

export class CheckedTools {
  private readonly tools = new Map<string, (args: unknown) => Promise<ToolResult>>();
  /** The tools a client may call as a task, by name: a call that asks for one gets it from here. */
  private readonly taskCalls = new Map<string, (args: unknown) => Promise<ToolResult | CreateTaskResult>>();

  /** `answer` turns a tool's body into its result, an error into the `isError` result (server.ts). */
  constructor(
    private readonly server: McpServer,
    private readonly answer: (body: () => Promise<object>) => Promise<ToolResult>,
  ) {}

  private readonly handle = async (
    request: z.output<typeof CallToolRequestSchema>,
  ): Promise<ToolResult | CreateTaskResult> => {
    const { name } = request.params;
    // A call that does not ask for a task is answered as it always was, whatever the tool supports.
    const call = (request.params.task !== undefined ? this.taskCalls.get(name) : undefined) ?? this.tools.get(name);
    // An error result, as the SDK answers an unknown tool, in the shape of every other refusal.
    if (!call) {
      const known = [...this.tools.keys()].join(", ");
      const unknown = new PlanManagerError("invalid_input", `no tool "${name.slice(0, 64)}" (tools: ${known})`, {
        path: "name",
      });
      return this.answer(() => Promise.reject(unknown));
    }
    // Runs the call starts sample from this client (docs/decisions/0060-sampling-through-the-client.md).
    return withSamplingClient(clientOf(this.server.server), () => call(request.params.arguments ?? {}));
  };

  /**
   * Registers a tool: listed by the SDK, called through the check of its arguments. With `asTask`, a
   * client may call it as a task too (listed with `taskSupport: "optional"`).
   */
  registerTool<Shape extends z.ZodRawShape>(
    name: string,
    config: ToolConfig<Shape>,
    run: (args: z.output<z.ZodObject<Shape>>) => Promise<ToolResult>,
    asTask?: AsTask<z.output<z.ZodObject<Shape>>>,
  ): void {
    const schema = z.object(config.inputSchema);
    const checked =
      <R>(body: (args: z.output<z.ZodObject<Shape>>) => Promise<R>) =>
      async (args: unknown): Promise<R | ToolResult> => {
        const parsed = await schema.safeParseAsync(args);
        if (parsed.success) return body(parsed.data);
        const refused = schemaError(name, parsed.error);
        return this.answer(() => Promise.reject(refused));
      };
    const call = checked(run);
    this.tools.set(name, call);
    if (asTask) this.taskCalls.set(name, async (args) => taskOrRefusal(await checked(asTask)(args)));
    const inputSchema: z.ZodRawShape = config.inputSchema;
    const registered = this.server.registerTool(name, { ...config, inputSchema }, (args) => call(args));
    // Listed as such: the SDK's `registerToolTask` would answer a call that asks for no task only at
    // the task's end, and `plan_create` answers at once (docs/decisions/0048-plans-as-mcp-tasks.md).
    if (asTask) registered.execution = { taskSupport: "optional" };
    // After the SDK's: its first registration installs its own tools/call handler, which this replaces.
    this.server.server.setRequestHandler(CallToolRequestSchema, this.handle);
  }
}

/**
 * A call that asked for a task gets one or a protocol error: its arguments' refusal is the
 * `{ error, message, path }` of every other refusal, as the error's message and data.
 */
function taskOrRefusal(result: ToolResult | CreateTaskResult): CreateTaskResult {
  if (!("isError" in result) || result.isError !== true) return result as CreateTaskResult;
  const text = (result as ToolResult).content.map((c) => (c.type === "text" ? c.text : "")).join("");
  throw new McpError(ErrorCode.InvalidParams, text, JSON.parse(text));
}

/**
 * The MCP server's tools, with their arguments checked here against each tool's input schema. The
 * SDK checks them too, but answers a refusal as protocol text ("MCP error -32602: Input validation
 * error: …"), and an agent reads every other error of these tools as `{ error, message, path }`
 * (README "For agents: the MCP server"): so `tools/call` is answered here, and the SDK keeps what it
 * does best, listing the tools with their JSON schemas.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { CallToolRequestSchema, type CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { PlanManagerError } from "../errors.js";
import { schemaError } from "./argument-errors.js";

type ToolResult = CallToolResult;

export interface ToolConfig<Shape extends z.ZodRawShape> {
  description: string;
  inputSchema: Shape;
  outputSchema: z.ZodRawShape | z.ZodObject;
}

export class CheckedTools {
  private readonly tools = new Map<string, (args: unknown) => Promise<ToolResult>>();

  /** `answer` turns a tool's body into its result, an error into the `isError` result (server.ts). */
  constructor(
    private readonly server: McpServer,
    private readonly answer: (body: () => Promise<object>) => Promise<ToolResult>,
  ) {}

  private readonly handle = async (request: z.output<typeof CallToolRequestSchema>): Promise<ToolResult> => {
    const { name } = request.params;
    const call = this.tools.get(name);
    // An error result, as the SDK answers an unknown tool, in the shape of every other refusal.
    if (!call) {
      const known = [...this.tools.keys()].join(", ");
      const unknown = new PlanManagerError("invalid_input", `no tool "${name.slice(0, 64)}" (tools: ${known})`, {
        path: "name",
      });
      return this.answer(() => Promise.reject(unknown));
    }
    return call(request.params.arguments ?? {});
  };

  /** Registers a tool: listed by the SDK, called through the check of its arguments. */
  registerTool<Shape extends z.ZodRawShape>(
    name: string,
    config: ToolConfig<Shape>,
    run: (args: z.output<z.ZodObject<Shape>>) => Promise<ToolResult>,
  ): void {
    const schema = z.object(config.inputSchema);
    const call = async (args: unknown): Promise<ToolResult> => {
      const parsed = await schema.safeParseAsync(args);
      if (parsed.success) return run(parsed.data);
      const refused = schemaError(name, parsed.error);
      return this.answer(() => Promise.reject(refused));
    };
    this.tools.set(name, call);
    const inputSchema: z.ZodRawShape = config.inputSchema;
    this.server.registerTool(name, { ...config, inputSchema }, (args) => call(args));
    // After the SDK's: its first registration installs its own tools/call handler, which this replaces.
    this.server.server.setRequestHandler(CallToolRequestSchema, this.handle);
  }
}

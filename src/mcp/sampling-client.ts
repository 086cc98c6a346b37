/**
 * Which MCP client a `SamplingChatModel` asks (docs/decisions/0060-sampling-through-the-client.md):
 * the one whose tool call started the run — `plan_create`, `plan_answer`, `plan_submit`,
 * `plan_resume`. Every tool call runs in that client's scope (an `AsyncLocalStorage`), and a
 * run started inside it keeps the scope for its whole life, planner, replanner and classifier
 * calls included. A run taken up at start-up (no call began it) has no client.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { CreateMessageRequestParamsBase, CreateMessageResult } from "@modelcontextprotocol/sdk/types.js";
import { PlanManagerError } from "../errors.js";

/** The client of a run, as the sampling model needs it. */
export interface SamplingClient {
  /** The client's name from its `initialize`, for messages. */
  readonly name: string | undefined;
  /** Whether the client declared the `sampling` capability. */
  readonly samples: boolean;
  /** Whether the connection to the client is still open. */
  readonly connected: boolean;
  createMessage(
    params: CreateMessageRequestParamsBase,
    options: { signal?: AbortSignal; timeout?: number },
  ): Promise<CreateMessageResult>;
}

const scope = new AsyncLocalStorage<SamplingClient>();

/** The client `server` is connected to, as a `SamplingClient` (read when asked: capabilities come with `initialize`). */
export function clientOf(server: Server): SamplingClient {
  return {
    get name() {
      return server.getClientVersion()?.name;
    },
    get samples() {
      return server.getClientCapabilities()?.sampling !== undefined;
    },
    get connected() {
      return server.transport !== undefined;
    },
    createMessage: (params, options) => server.createMessage(params, options),
  };
}

/** Runs `body` (a tool call) in the scope of the client that made it: runs it starts sample from that client. */
export function withSamplingClient<T>(client: SamplingClient, body: () => T): T {
  return scope.run(client, body);
}

/**
 * The client of the current run, able to sample; otherwise the typed error `sampling_unsupported`,
 * which pauses the run where it stands (it is resumable: `plan_resume` from a client that samples).
 */
export function samplingClient(): SamplingClient {
  const client = scope.getStore();
  if (!client)
    throw samplingUnsupported(
      "this run was not started, answered or resumed by an MCP client (it was taken up when the server started): " +
        "call plan_resume from a client that declares the sampling capability",
    );
  if (!client.connected) throw goneAway(client);
  if (!client.samples)
    throw samplingUnsupported(
      `the MCP client ${client.name ?? "(unnamed)"} did not declare the sampling capability, and this server plans ` +
        "with the client's model: call plan_resume from a client that declares it, or give plan_create a plan",
    );
  return client;
}

/** The client of the run closed its connection (a stdio client that exited, a Streamable HTTP request that ended). */
export function goneAway(client: SamplingClient): PlanManagerError {
  return samplingUnsupported(
    `the MCP client that started, answered or resumed this run (${client.name ?? "unnamed"}) has gone away: ` +
      "call plan_resume from a client that declares the sampling capability",
  );
}

function samplingUnsupported(message: string): PlanManagerError {
  return new PlanManagerError("sampling_unsupported", message);
}

/** An OpenAI-compatible chat server on 127.0.0.1 that records requests and plays back answers. */
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface OpenAiServer {
  baseURL: string;
  /** Request bodies, in order. */
  requests: Record<string, any>[];
  /** Answers to give, in order (the last one repeats). Each is sent as the structured-output JSON. */
  answers: unknown[];
  close: () => Promise<void>;
}

async function body(req: IncomingMessage): Promise<string> {
  let text = "";
  for await (const chunk of req) text += chunk;
  return text;
}

export async function startOpenAiServer(): Promise<OpenAiServer> {
  const state: OpenAiServer = { baseURL: "", requests: [], answers: [], close: async () => undefined };
  const server: Server = createServer(async (req, res) => {
    const request = JSON.parse(await body(req)) as Record<string, any>;
    state.requests.push(request);
    const answer = state.answers.length > 1 ? state.answers.shift() : state.answers[0];
    const text = JSON.stringify(answer ?? null);
    const tools = request.tools as { function: { name: string } }[] | undefined;
    const call = { id: "call_1", type: "function", function: { name: tools?.[0]?.function.name, arguments: text } };
    const message = tools?.length
      ? { role: "assistant", content: null, tool_calls: [call] }
      : { role: "assistant", content: text };
    const usage = { prompt_tokens: 100, completion_tokens: 20, total_tokens: 120 };
    const choices = [{ index: 0, message, finish_reason: "stop" }];
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ id: "cmpl-1", object: "chat.completion", created: 0, model: request.model, choices, usage }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  state.baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  state.close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return state;
}

/**
 * `langgraph-replan mcp --http`: the plan service over Streamable HTTP, and what keeps strangers out.
 * A loopback address by default; any other needs a bearer token (from an environment variable,
 * never the command line, where every user of the machine can read it in `ps`), checked on every
 * request. A page the user visits cannot call a loopback server by a name it controls (DNS
 * rebinding: the Host and Origin checks), and one request cannot start more than `MAX_BATCH` calls.
 */
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { CliIo } from "./cli-context.js";
import { HttpSessions, SESSION_IDLE_MS } from "./mcp-sessions.js";
import { loadPackage } from "./packages.js";
import { CliError } from "./target-error.js";

type Service = InstanceType<(typeof import("../mcp/index.js"))["PlanService"]>;

/** The variable holding the bearer token when `--token-env` names none. */
export const TOKEN_ENV = "LANGGRAPH_REPLAN_MCP_TOKEN";
/** JSON-RPC messages one request may carry: each `tools/call` in a batch may start a run. */
export const MAX_BATCH = 32;
/** The request body limit, the SDK's own default (4 MiB): this server reads the body to count the batch. */
const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** A shorter token is guessable over the network. */
const MIN_TOKEN_LENGTH = 16;
const SDK_USER = "langgraph-replan mcp";

export interface HttpAddress {
  host: string;
  port: number;
}

/**
 * Parses `--http`: a port, or HOST:PORT, an IPv6 host in brackets as in a URL (`[::1]:3100`). The
 * host comes back bare (`::1`), as `listen` takes it; `urlHost` puts the brackets back.
 */
export function httpAddress(value: string): HttpAddress {
  const at = value.lastIndexOf(":");
  const named = at < 0 ? "" : value.slice(0, at);
  const host = /^\[[^\]]+\]$/.test(named) ? named.slice(1, -1) : named || "127.0.0.1";
  const port = Number(at < 0 ? value : value.slice(at + 1));
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new CliError(`--http needs a port or HOST:PORT (0 to 65535), got "${value}"`);
  return { host, port };
}

const isLoopback = (host: string) => /^(localhost|127(\.\d{1,3}){3}|::1|\[::1\])$/i.test(host);
const isWildcard = (host: string) => ["0.0.0.0", "::", "[::]"].includes(host);
/** The host as a URL and a Host header write it: an IPv6 address in brackets. */
const urlHost = (host: string) => (host.includes(":") && !host.startsWith("[") ? `[${host}]` : host);

/**
 * The Host headers a server bound to `host` answers (its Origins too), or undefined for any (bound
 * to every interface, the server has no one name: the token is what keeps strangers out).
 */
export function allowedHosts(host: string, port: number): ReadonlySet<string> | undefined {
  if (isWildcard(host)) return undefined;
  const names = host === "127.0.0.1" || host === "localhost" ? ["127.0.0.1", "localhost"] : [urlHost(host)];
  return new Set(names.map((h) => `${h}:${port}`));
}

/**
 * The bearer token the server requires, or undefined for none: read from the variable `--token-env`
 * names, else from `LANGGRAPH_REPLAN_MCP_TOKEN`. An address other than loopback without one is refused.
 */
export function bearerToken(
  address: HttpAddress,
  tokenEnv: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const name = tokenEnv ?? TOKEN_ENV;
  const token = env[name] === "" ? undefined : env[name];
  if (tokenEnv !== undefined && token === undefined)
    throw new CliError(`--token-env ${tokenEnv}: the environment variable ${tokenEnv} is not set`);
  if (token !== undefined && token.length < MIN_TOKEN_LENGTH)
    throw new CliError(
      `the bearer token in ${name} is ${token.length} characters: give at least ${MIN_TOKEN_LENGTH} (e.g. openssl rand -hex 32)`,
    );
  if (token === undefined && !isLoopback(address.host))
    throw new CliError(
      `--http ${urlHost(address.host)}:${address.port} serves other machines, which needs a bearer token: put one in ` +
        `${TOKEN_ENV} (or in a variable named by --token-env NAME; never on the command line), or serve 127.0.0.1`,
    );
  return token;
}

/** The `--token` flag, refused with why: a command line is visible to every user of the machine. */
export function refuseTokenFlag(argv: readonly string[]): void {
  if (argv.some((arg) => arg === "--token" || arg.startsWith("--token=")))
    throw new CliError(
      `--token: a token on the command line is visible to every user of the machine (ps); put it in ${TOKEN_ENV} ` +
        "or in a variable named by --token-env NAME",
    );
}

/** The HTTP server `serveHttp` started: its port, and how to stop it (its sessions closed with it). */
export interface HttpService {
  port: number;
  close(): Promise<void>;
}

type SdkTransport = InstanceType<
  (typeof import("@modelcontextprotocol/sdk/server/streamableHttp.js"))["StreamableHTTPServerTransport"]
>;

/** One client's session: its transport, and its server closed with it. */
interface HttpSession {
  transport: SdkTransport;
  close(): Promise<void>;
}

/**
 * Streamable HTTP with sessions (docs/decisions/0063-http-sessions.md): a client's `initialize`
 * opens a session — its own server object over the one service, which knows the client's
 * capabilities and reaches it on the session's stream, so a run it starts can sample and ask. A
 * request with neither a session nor an `initialize` is served on its own, as a stateless server
 * would. The runs belong to the service: a session that ends takes none with it.
 */
export async function serveHttp(
  service: Service,
  address: HttpAddress,
  token: string | undefined,
  names: string[],
  io: Pick<CliIo, "err">,
): Promise<HttpService> {
  const serve = await mcpRequests(service);
  let allowed: ReadonlySet<string> | undefined = new Set();
  const http = createServer((req, res) => {
    void (async () => {
      const refused =
        refusal(req.url, req.headers.host, req.headers.origin, allowed) ??
        unauthorized(req.headers.authorization, token) ??
        (req.method === "POST" ? await readBatch(req) : { body: undefined });
      if ("status" in refused) {
        // A body left unread (refused before or while reading it) is not drained: a client could
        // stream one without end. The connection closes once the answer is sent.
        if (req.complete) return void res.writeHead(refused.status, refused.headers).end(refused.message);
        res.writeHead(refused.status, { ...refused.headers, connection: "close" });
        return void res.end(refused.message, () => req.socket.destroy());
      }
      await serve.request(req, res, refused.body);
    })().catch((error: unknown) => {
      io.err(`langgraph-replan mcp: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" }).end("internal error");
    });
  });
  await new Promise<void>((listening, failed) => {
    http.once("error", failed);
    http.listen(address.port, address.host, () => listening());
  });
  const bound = http.address();
  const port = typeof bound === "object" && bound ? bound.port : address.port;
  allowed = allowedHosts(address.host, port);
  io.err(
    `langgraph-replan mcp: serving ${names.join(", ")} on http://${urlHost(address.host)}:${port}/mcp` +
      (token ? " (bearer token required)" : ""),
  );
  const close = async () => {
    http.close();
    await serve.close();
    // The sessions' streams are closed; what is left is idle keep-alive connections.
    http.closeAllConnections();
  };
  return { port, close };
}

/** Whether a JSON-RPC body (one message or a batch) holds an `initialize`. */
const initializes = (body: unknown) =>
  (Array.isArray(body) ? body : [body]).some(
    (message) =>
      typeof message === "object" && message !== null && (message as { method?: unknown }).method === "initialize",
  );

const sessionNotFound = (res: ServerResponse): void =>
  void res
    .writeHead(404, { "content-type": "application/json" })
    .end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }));

/** Serves the MCP requests that passed the checks: in their session, in a new one, or on their own. */
async function mcpRequests(service: Service) {
  const { createMcpServer } = await import("../mcp/index.js");
  const { StreamableHTTPServerTransport } = await loadPackage(
    SDK_USER,
    () => import("@modelcontextprotocol/sdk/server/streamableHttp.js"),
  );
  const sessions = new HttpSessions<HttpSession>();
  const sweeper = setInterval(() => sessions.sweep(), Math.min(SESSION_IDLE_MS, 60_000));
  sweeper.unref();

  async function open(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const server = createMcpServer(service);
    const transport: SdkTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => sessions.add(id, { transport, close: () => server.close() }),
      onsessionclosed: (id) => sessions.forget(id),
    });
    // Set before connect: the server chains its own close handler after this one.
    transport.onclose = () => void (transport.sessionId && sessions.forget(transport.sessionId));
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
    if (transport.sessionId === undefined) await server.close();
  }

  async function alone(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const server = createMcpServer(service);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on("close", () => void transport.close().then(() => server.close()));
    await server.connect(transport);
    await transport.handleRequest(req, res, body);
  }

  async function request(req: IncomingMessage, res: ServerResponse, body: unknown): Promise<void> {
    const id = req.headers["mcp-session-id"];
    if (typeof id === "string") {
      const used = sessions.use(id);
      if (!used) return sessionNotFound(res);
      res.on("close", used.done);
      return used.session.transport.handleRequest(req, res, body);
    }
    return req.method === "POST" && initializes(body) ? open(req, res, body) : alone(req, res, body);
  }

  const close = async () => {
    clearInterval(sweeper);
    await sessions.closeAll();
  };
  return { request, close };
}

interface Refused {
  status: number;
  message: string;
  headers: Record<string, string>;
}

const refused = (status: number, message: string, headers: Record<string, string> = {}): Refused => ({
  status,
  message,
  headers: { "content-type": "text/plain", ...headers },
});

/**
 * Why a request is not served (a path other than /mcp, a Host or Origin not this server's), or
 * undefined. `allowed` undefined: any Host (a server bound to every interface), and an Origin only
 * of the Host asked.
 */
export function refusal(
  url: string | undefined,
  host: string | undefined,
  origin: string | undefined,
  allowed: ReadonlySet<string> | undefined,
): Refused | undefined {
  if (new URL(url ?? "/", "http://x").pathname !== "/mcp") return refused(404, "not found: the server is at /mcp");
  if (!host || (allowed !== undefined && !allowed.has(host)))
    return refused(403, `host ${host ?? "(none)"} is not this server`);
  const from = origin?.replace(/^https?:\/\//, "");
  if (from !== undefined && (allowed === undefined ? from !== host : !allowed.has(from)))
    return refused(403, `origin ${origin} may not call this server`);
  return undefined;
}

/** A 401 for a request without the server's bearer token (compared in constant time), or undefined. */
export function unauthorized(authorization: string | undefined, token: string | undefined): Refused | undefined {
  if (token === undefined) return undefined;
  const given = /^Bearer +(\S+) *$/i.exec(authorization ?? "")?.[1];
  // Digests of equal length, so neither the comparison nor a length check tells how close a guess was.
  const digest = (text: string) => createHash("sha256").update(text).digest();
  if (given !== undefined && timingSafeEqual(digest(given), digest(token))) return undefined;
  const challenge =
    given === undefined ? 'Bearer realm="langgraph-replan"' : 'Bearer realm="langgraph-replan", error="invalid_token"';
  return refused(401, "this server needs Authorization: Bearer TOKEN", { "www-authenticate": challenge });
}

/** The request's JSON body, or why it is refused: over the size limit, not JSON, or a batch over `MAX_BATCH`. */
async function readBatch(req: IncomingMessage): Promise<{ body: unknown } | Refused> {
  const json = (status: number, code: number, message: string): Refused => ({
    status,
    message: JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }),
    headers: { "content-type": "application/json" },
  });
  const tooLarge = () => json(413, -32600, `request body over ${MAX_BODY_BYTES} bytes`);
  if (Number(req.headers["content-length"]) > MAX_BODY_BYTES) return tooLarge();
  const read = await new Promise<Buffer | undefined>((done, failed) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) return void chunks.push(chunk);
      // Answered at once, and the connection then closed (serveHttp): the rest is never read.
      req.removeAllListeners("data");
      req.pause();
      done(undefined);
    });
    req.once("end", () => done(Buffer.concat(chunks)));
    req.once("error", failed);
  });
  if (read === undefined) return tooLarge();
  let body: unknown;
  try {
    body = JSON.parse(read.toString("utf8"));
  } catch {
    return json(400, -32700, "Parse error: the body is not JSON");
  }
  if (Array.isArray(body) && body.length > MAX_BATCH)
    return json(
      400,
      -32600,
      `a batch holds at most ${MAX_BATCH} messages, this one ${body.length}: send them in batches of ${MAX_BATCH} or fewer`,
    );
  return { body };
}

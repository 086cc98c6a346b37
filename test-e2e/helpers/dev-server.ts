/** Starts `langgraph dev` on a free 127.0.0.1 port in its own process group, and stops it. */
import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { resolve } from "node:path";

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once("error", fail);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? ok(address.port) : fail(new Error("no port"))));
    });
  });
}

export interface DevServer {
  url: string;
  log: () => string;
  stop: () => Promise<void>;
}

export async function startDevServer(timeoutMs = 90_000): Promise<DevServer> {
  const port = await freePort();
  const root = resolve(import.meta.dirname, "../..");
  const cli = resolve(root, "node_modules/@langchain/langgraph-cli/dist/cli/cli.mjs");
  let output = "";
  const child: ChildProcess = spawn(
    process.execPath,
    [cli, "dev", "--host", "127.0.0.1", "--port", String(port), "--no-browser"],
    {
      cwd: root,
      detached: true,
      env: { ...process.env, LANGGRAPH_CLI_NO_ANALYTICS: "1", OPENAI_API_KEY: "" },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  child.stdout?.on("data", (d) => (output += String(d)));
  child.stderr?.on("data", (d) => (output += String(d)));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.pid !== undefined && child.exitCode === null) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
      await new Promise((r) => setTimeout(r, 500));
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  };
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`langgraph dev exited with ${child.exitCode}:\n${output}`);
    try {
      const res = await fetch(`${url}/ok`);
      if (res.ok) return { url, log: () => output, stop };
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  await stop();
  throw new Error(`langgraph dev did not start within ${timeoutMs} ms:\n${output}`);
}

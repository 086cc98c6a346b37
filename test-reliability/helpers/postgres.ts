/**
 * A throwaway PostgreSQL server on 127.0.0.1 for the tests, from Debian's packages
 * (`apt-get install postgresql`; .ci/run installs it). initdb refuses to run as root, so the
 * server runs as the `postgres` user when the tests run as root.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { freePort } from "../../test-e2e/helpers/dev-server.js";

export interface PgServer {
  url: string;
  stop: () => void;
}

function binDir(): string {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) throw new Error("PostgreSQL is not installed: apt-get install -y postgresql (see .ci/run)");
  const version = readdirSync(root).sort().pop()!;
  return join(root, version, "bin");
}

export async function startPostgres(): Promise<PgServer> {
  const bin = binDir();
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "pg-"));
  const data = join(dir, "data");
  const asRoot = userInfo().uid === 0;
  const run = (cmd: string, args: string[]) => {
    const full = join(bin, cmd);
    return asRoot
      ? execFileSync("runuser", ["-u", "postgres", "--", full, ...args], { stdio: "pipe" })
      : execFileSync(full, args, { stdio: "pipe" });
  };
  if (asRoot) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    chownSync(dir, uid, gid);
    chmodSync(dir, 0o700);
  }
  run("initdb", ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8"]);
  run("pg_ctl", [
    "-D",
    data,
    "-l",
    join(dir, "server.log"),
    "-w",
    "-o",
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1`,
    "start",
  ]);
  return {
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    stop: () => {
      try {
        run("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

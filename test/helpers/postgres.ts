/**
 * A PostgreSQL server for tests. `.ci/run` starts one for the whole run and exports
 * BONSAI_TEST_PG_URL; connection settings in PG* variables (PGHOST…) work as well. Without
 * either, the first test file that asks starts a throwaway server of its own (initdb on a temp
 * directory, 127.0.0.1 only, a free port, fsync off) and stops it when the file's tests end.
 * Every test file gets a fresh database of its own, dropped at the end.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

export interface TestDatabase {
  /** connection string of a fresh, empty database */
  url: string;
  /** drops the database and stops a server this helper started */
  stop(): Promise<void>;
}

function findBinary(name: string): string {
  const fromPath = spawnSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).stdout.trim();
  if (fromPath) return fromPath;
  const root = "/usr/lib/postgresql";
  if (existsSync(root)) {
    for (const version of readdirSync(root).sort().reverse()) {
      const candidate = join(root, version, "bin", name);
      if (existsSync(candidate)) return candidate;
    }
  }
  throw new Error(`PostgreSQL's ${name} not found (PATH or /usr/lib/postgresql/*/bin); install postgresql or set BONSAI_TEST_PG_URL`);
}

async function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

const isRoot = () => process.getuid?.() === 0;

/** Runs a PostgreSQL binary; as root, as the `postgres` user (the server refuses to run as root). */
function runAsServerUser(binary: string, args: string[]): void {
  if (isRoot()) {
    const quoted = [binary, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
    execFileSync("su", ["postgres", "-c", quoted], { stdio: "pipe" });
  } else {
    execFileSync(binary, args, { stdio: "pipe" });
  }
}

interface Server {
  url: string;
  stop(): void;
}

/** Starts a throwaway server and returns the URL of its `postgres` database. */
export async function startThrowawayServer(): Promise<Server> {
  const initdb = findBinary("initdb");
  const pgCtl = findBinary("pg_ctl");
  const dir = mkdtempSync(join(tmpdir(), "bonsai-pg-"));
  if (isRoot()) chownSync(dir, Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" }).trim()), -1);
  const data = join(dir, "data");
  runAsServerUser(initdb, ["-D", data, "-A", "trust", "-U", "postgres", "--no-sync"]);
  let lastError: unknown;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    try {
      runAsServerUser(pgCtl, [
        "-D",
        data,
        "-o",
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200`,
        "-l",
        join(dir, "pg.log"),
        "-w",
        "start",
      ]);
      let stopped = false;
      const stop = () => {
        if (stopped) return;
        stopped = true;
        try {
          runAsServerUser(pgCtl, ["-D", data, "-m", "immediate", "stop"]);
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      };
      // a test process that dies early must not leave a server behind
      process.once("exit", stop);
      return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop };
    } catch (error) {
      lastError = error; // most likely the port was taken meanwhile
    }
  }
  rmSync(dir, { recursive: true, force: true });
  throw new Error(`could not start a test PostgreSQL server: ${(lastError as Error).message}`);
}

function withDatabase(url: string, database: string): string {
  if (url === "postgres://" || url === "postgresql://") return `postgres:///${database}`;
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** A fresh database on the shared server (or on a throwaway one started here). */
export async function testDatabase(): Promise<TestDatabase> {
  let server: Server | undefined;
  let base = process.env.BONSAI_TEST_PG_URL;
  if (!base && process.env.PGHOST) base = "postgres://";
  if (!base) {
    server = await startThrowawayServer();
    base = server.url;
  }
  const name = `bonsai_test_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(base, name),
    async stop() {
      try {
        const client = new pg.Client({ connectionString: base });
        await client.connect();
        try {
          await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        } finally {
          await client.end();
        }
      } finally {
        server?.stop();
      }
    },
  };
}

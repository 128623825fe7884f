/**
 * PostgreSQL store (pg): many processes on many machines share one database. Tables live in the
 * `bonsai` schema: `meta(version)`, `sessions` (what `bonsai ls` shows) and `entries(session_id,
 * seq, line)` with each line stored as `text`, byte for byte (not jsonb, which would reorder keys
 * and drop whitespace).
 *
 * One writer per session: the writer's own connection holds `pg_try_advisory_lock` on a 64-bit
 * key derived from the session id, and every write goes through that connection. A writer that
 * crashes loses its connection and with it the lock, so nothing is ever stale.
 *
 * pg is asynchronous, SessionManager is not: append() queues lines and returns at once, and one
 * loop per session writes the queue in order, many lines per statement. The rules that make this
 * safe are in types.ts (durability contract): the first failed write is kept and thrown by every
 * later append(), flush() and close(); nothing after it is written.
 */
import { createHash } from "node:crypto";
import { hostname } from "node:os";
import type pg from "pg";
import type { LoadedSession } from "../session/load.js";
import type { LockOwner } from "../session/lock.js";
import { applyDigest, checkStorableLines, digestLines, EMPTY_META, loadLines, type SessionMeta } from "./lines.js";
import { formatLocation } from "./location.js";
import {
  type OpenedSession,
  type OpenSessionOptions,
  type SessionBackend,
  type SessionSummary,
  StoreVersionError,
  storeLockedError,
} from "./types.js";

/** Schema upgrades, in order: MIGRATIONS[v] takes the schema from version v to v + 1. Never edit a released step. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE bonsai.sessions (
     id text PRIMARY KEY,
     title text,
     cwd text,
     created text,
     updated timestamptz NOT NULL,
     bytes bigint NOT NULL DEFAULT 0,
     entry_count bigint NOT NULL DEFAULT 0
   );
   CREATE INDEX sessions_updated ON bonsai.sessions (updated);
   CREATE TABLE bonsai.entries (
     session_id text NOT NULL,
     seq bigint NOT NULL,
     line text NOT NULL,
     PRIMARY KEY (session_id, seq)
   );`,
];

export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** Key of the advisory lock that serializes schema creation and upgrades. */
const SCHEMA_LOCK: [number, number] = [0x626f6e73, 0x61690000];
/** At most this many lines, or about this many bytes, per INSERT. */
const BATCH_LINES = 1000;
const BATCH_BYTES = 4 << 20;

type Client = pg.Client;

let driver: typeof pg | undefined;

async function pgDriver(): Promise<typeof pg> {
  driver ??= (await import("pg")).default;
  return driver;
}

const storeName = (connectionString: string) => formatLocation({ kind: "postgres", connectionString });

/** A connected client; connection settings missing from the URL come from PG* variables. */
async function connect(connectionString: string, applicationName?: string): Promise<Client> {
  const { Client } = await pgDriver();
  const client = new Client({ connectionString, application_name: applicationName ?? "bonsai", connectionTimeoutMillis: 15_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`${storeName(connectionString)}: cannot connect to PostgreSQL: ${(error as Error).message}`);
  }
  return client;
}

async function schemaVersion(client: Client): Promise<number | undefined> {
  const exists = await client.query("SELECT to_regclass('bonsai.meta') IS NOT NULL AS ok");
  if (!exists.rows[0].ok) return undefined;
  const row = await client.query("SELECT version FROM bonsai.meta WHERE id = 1");
  return row.rows[0]?.version ?? 0;
}

/** Creates or upgrades the schema (one process at a time); refuses a schema from a newer bonsai. */
async function ensureSchema(client: Client, where: string, create: boolean): Promise<boolean> {
  const seen = await schemaVersion(client);
  if (seen !== undefined && seen > POSTGRES_SCHEMA_VERSION) throw new StoreVersionError(where, seen, POSTGRES_SCHEMA_VERSION);
  if (seen === POSTGRES_SCHEMA_VERSION) return true;
  if (!create) return seen !== undefined;
  // A session lock taken before BEGIN: the transaction then starts after the previous holder's
  // commit and sees its tables (a lock taken inside it could leave a stale catalog cache).
  await client.query("SELECT pg_advisory_lock($1, $2)", SCHEMA_LOCK);
  try {
    await client.query("BEGIN");
    let version = await schemaVersion(client);
    if (version === undefined) {
      await client.query("CREATE SCHEMA IF NOT EXISTS bonsai");
      await client.query("CREATE TABLE bonsai.meta (id int PRIMARY KEY CHECK (id = 1), version int NOT NULL)");
      await client.query("INSERT INTO bonsai.meta (id, version) VALUES (1, 0)");
      version = 0;
    }
    if (version > POSTGRES_SCHEMA_VERSION) throw new StoreVersionError(where, version, POSTGRES_SCHEMA_VERSION);
    for (let v = version; v < POSTGRES_SCHEMA_VERSION; v++) await client.query(MIGRATIONS[v]);
    await client.query("UPDATE bonsai.meta SET version = $1 WHERE id = 1", [POSTGRES_SCHEMA_VERSION]);
    await client.query("COMMIT");
    return true;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1, $2)", SCHEMA_LOCK).catch(() => {});
  }
}

/** The session's advisory lock key: 64 bits of a hash, so two sessions practically never share one. */
export function lockKey(id: string): [number, number] {
  const hash = createHash("sha256").update(`bonsai-session:${id}`).digest();
  return [hash.readInt32BE(0), hash.readInt32BE(4)];
}

interface SessionRow {
  id: string;
  title: string | null;
  cwd: string | null;
  created: string | null;
  updated: Date;
  bytes: string;
  entry_count: string;
}

/** Every session in the store, most recently written first. */
export async function listPostgresSessions(connectionString: string): Promise<SessionSummary[]> {
  const client = await connect(connectionString);
  try {
    if (!(await ensureSchema(client, storeName(connectionString), false))) return [];
    const { rows } = await client.query<SessionRow>("SELECT * FROM bonsai.sessions ORDER BY updated DESC, id");
    return rows.map((row) => ({
      id: row.id,
      location: formatLocation({ kind: "postgres", connectionString, sessionId: row.id }),
      title: row.title,
      cwd: row.cwd,
      created: row.created,
      updated: row.updated.toISOString(),
      bytes: Number(row.bytes),
      entryCount: Number(row.entry_count),
    }));
  } finally {
    await client.end().catch(() => {});
  }
}

async function readLines(client: Client, id: string): Promise<string[] | undefined> {
  // one statement: a consistent snapshot even while the writer appends
  const result = await client.query({
    text: `SELECT e.line, s.id FROM bonsai.sessions s LEFT JOIN bonsai.entries e ON e.session_id = s.id
           WHERE s.id = $1 ORDER BY e.seq`,
    values: [id],
    rowMode: "array",
  });
  if (result.rows.length === 0) return undefined;
  return result.rows.filter((row) => row[0] !== null).map((row) => row[0] as string);
}

/** The lines of one session exactly as stored; undefined when there is no such session. */
export async function readPostgresLines(connectionString: string, id: string): Promise<string[] | undefined> {
  const client = await connect(connectionString);
  try {
    if (!(await ensureSchema(client, storeName(connectionString), false))) return undefined;
    return await readLines(client, id);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Opens one session: its own connection takes the advisory lock (unless read-only), then reads it. */
export async function openPostgresSession(
  connectionString: string,
  id: string,
  options: OpenSessionOptions = {},
): Promise<OpenedSession> {
  const location = formatLocation({ kind: "postgres", connectionString, sessionId: id });
  if (options.readOnly) {
    const lines = await readPostgresLines(connectionString, id);
    return { loaded: lines === undefined ? undefined : loadLines(lines, location), backend: undefined };
  }
  const client = await connect(connectionString, `bonsai ${process.pid}@${hostnameShort()}`);
  const backend = new PostgresBackend(client, id, location);
  try {
    await ensureSchema(client, storeName(connectionString), true);
    await backend.acquire();
    return { loaded: await backend.load(), backend };
  } catch (error) {
    await backend.close().catch(() => {});
    throw error;
  }
}

// application_name holds at most 63 bytes
const hostnameShort = () => hostname().slice(0, 40);

type Meta = SessionMeta;

type Op =
  | { kind: "append"; firstSeq: number; lines: readonly string[]; meta: Meta }
  | { kind: "rewrite"; lines: readonly string[]; meta: Meta };

/** Sessions with writes still queued, reported if the process exits before they are written. */
const pending = new Set<PostgresBackend>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const backend of pending) {
      const n = backend.queuedLines();
      if (n > 0) process.stderr.write(`bonsai: ${backend.location}: ${n} lines were never written: the process exited before close() finished\n`);
    }
  });
}

class PostgresBackend implements SessionBackend {
  readonly kind = "postgres" as const;
  readonly writes = "queued" as const;
  private readonly key: [number, number];
  private locked = false;
  private nextSeq = 0;
  private meta: Meta = EMPTY_META;
  private readonly queue: Op[] = [];
  private running: Promise<void> | undefined;
  /** the first write that failed: every later call throws it */
  private failure: Error | undefined;
  private closing: Promise<void> | undefined;
  private connectionLost: Error | undefined;

  constructor(
    private readonly client: Client,
    private readonly id: string,
    readonly location: string,
  ) {
    this.key = lockKey(id);
    // an idle connection that drops emits "error"; unheard, it would crash the process
    client.on("error", (error) => {
      this.connectionLost = new Error(`${location}: lost the connection to PostgreSQL (${error.message}); the writer lock went with it, open the session again`);
    });
    installExitHook();
  }

  async acquire(): Promise<void> {
    const { rows } = await this.client.query("SELECT pg_try_advisory_lock($1, $2) AS ok", this.key);
    if (!rows[0].ok) {
      throw storeLockedError(
        this.location,
        await this.lockHolder(),
        "close it first; the lock is released by itself when that process or its connection ends",
      );
    }
    this.locked = true;
  }

  /** Who holds the session's lock, as far as the server tells (its application_name). */
  private async lockHolder(): Promise<LockOwner | undefined> {
    try {
      const { rows } = await this.client.query(
        `SELECT a.application_name AS app, a.backend_start AS since FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
           AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
           AND l.classid = ($1::bigint & 4294967295)::oid AND l.objid = ($2::bigint & 4294967295)::oid`,
        this.key,
      );
      const match = /^bonsai (\d+)@(.+)$/.exec(rows[0]?.app ?? "");
      if (!match) return undefined;
      return { pid: Number(match[1]), host: match[2], since: (rows[0].since as Date).toISOString() };
    } catch {
      return undefined;
    }
  }

  async load(): Promise<LoadedSession | undefined> {
    const lines = await readLines(this.client, this.id);
    const { rows } = await this.client.query<SessionRow & { last: string | null }>(
      "SELECT s.*, (SELECT max(seq) FROM bonsai.entries WHERE session_id = $1) AS last FROM bonsai.sessions s WHERE s.id = $1",
      [this.id],
    );
    const row = rows[0];
    if (row) {
      this.meta = { title: row.title, cwd: row.cwd, created: row.created, bytes: Number(row.bytes), entryCount: Number(row.entry_count) };
      this.nextSeq = row.last === null ? 0 : Number(row.last) + 1;
    }
    return lines === undefined ? undefined : loadLines(lines, this.location);
  }

  queuedLines(): number {
    return this.queue.reduce((n, op) => n + op.lines.length, 0);
  }

  private writable(): void {
    if (this.failure) throw this.failure;
    if (this.closing) throw new Error(`${this.location}: session is closed; open it again to write`);
  }

  append(lines: readonly string[]): void {
    this.writable();
    if (lines.length === 0) return;
    checkStorableLines(lines, this.location);
    const meta = applyDigest(this.meta, digestLines(lines, this.nextSeq === 0), false);
    this.queue.push({ kind: "append", firstSeq: this.nextSeq, lines, meta });
    this.nextSeq += lines.length;
    this.meta = meta;
    this.kick();
  }

  rewrite(lines: readonly string[]): void {
    this.writable();
    checkStorableLines(lines, this.location);
    const meta = applyDigest(this.meta, digestLines(lines, true), true);
    this.queue.push({ kind: "rewrite", lines, meta });
    this.nextSeq = lines.length;
    this.meta = meta;
    this.kick();
  }

  private kick(): void {
    if (this.running) return;
    pending.add(this);
    this.running = this.drain().finally(() => {
      this.running = undefined;
      if (this.queue.length === 0) pending.delete(this);
    });
  }

  /** Writes the queue in order until it is empty or a write fails; never rejects. */
  private async drain(): Promise<void> {
    while (this.queue.length > 0 && !this.failure) {
      const op = this.queue[0];
      try {
        if (this.connectionLost) throw this.connectionLost;
        if (op.kind === "rewrite") {
          await this.writeRewrite(op);
          this.queue.shift();
        } else {
          const batch = this.takeAppendBatch();
          await this.writeAppend(batch);
          this.queue.splice(0, batch.ops);
        }
      } catch (error) {
        const queued = this.queuedLines();
        this.failure =
          error instanceof Error && error === this.connectionLost
            ? error
            : new Error(
                `${this.location}: writing to PostgreSQL failed (${(error as Error).message}); ${queued} queued lines were not written, open the session again`,
              );
        this.queue.length = 0;
      }
    }
  }

  /** Consecutive appends merged into one statement, within the batch limits. */
  private takeAppendBatch(): { ops: number; firstSeq: number; lines: string[]; meta: Meta } {
    const first = this.queue[0] as Extract<Op, { kind: "append" }>;
    const lines: string[] = [];
    let bytes = 0;
    let ops = 0;
    let meta = first.meta;
    for (const op of this.queue) {
      if (op.kind !== "append") break;
      if (ops > 0 && (lines.length + op.lines.length > BATCH_LINES || bytes > BATCH_BYTES)) break;
      for (const line of op.lines) {
        lines.push(line);
        bytes += line.length;
      }
      meta = op.meta;
      ops++;
    }
    return { ops, firstSeq: first.firstSeq, lines, meta };
  }

  private async writeAppend(batch: { firstSeq: number; lines: string[]; meta: Meta }): Promise<void> {
    const seqs = batch.lines.map((_, i) => batch.firstSeq + i);
    // one statement, so one implicit transaction: the lines and the ls row change together
    await this.client.query(
      `WITH added AS (
         INSERT INTO bonsai.entries (session_id, seq, line) SELECT $1, s, l FROM unnest($7::bigint[], $8::text[]) AS t(s, l)
       )
       ${UPSERT_SESSION}`,
      [this.id, ...metaParams(batch.meta), seqs, batch.lines],
    );
  }

  private async writeRewrite(op: { lines: readonly string[]; meta: Meta }): Promise<void> {
    await this.client.query("BEGIN");
    try {
      await this.client.query("DELETE FROM bonsai.entries WHERE session_id = $1", [this.id]);
      for (let start = 0; start < op.lines.length; start += BATCH_LINES) {
        const lines = op.lines.slice(start, start + BATCH_LINES);
        await this.client.query(
          "INSERT INTO bonsai.entries (session_id, seq, line) SELECT $1, s, l FROM unnest($2::bigint[], $3::text[]) AS t(s, l)",
          [this.id, lines.map((_, i) => start + i), lines],
        );
      }
      if (op.lines.length === 0) await this.client.query("DELETE FROM bonsai.sessions WHERE id = $1", [this.id]);
      else await this.client.query(UPSERT_SESSION, [this.id, ...metaParams(op.meta)]);
      await this.client.query("COMMIT");
    } catch (error) {
      await this.client.query("ROLLBACK").catch(() => {});
      throw error;
    }
  }

  /** Resolves when everything queued so far is committed; rejects with the first failed write. */
  async flush(): Promise<void> {
    while (this.running) await this.running;
    if (this.failure) throw this.failure;
  }

  close(): Promise<void> {
    this.closing ??= this.shutDown();
    return this.closing;
  }

  private async shutDown(): Promise<void> {
    let failure: unknown;
    try {
      await this.flush();
    } catch (error) {
      failure = error;
    }
    try {
      if (this.locked && !this.connectionLost) await this.client.query("SELECT pg_advisory_unlock($1, $2)", this.key);
    } catch {
      // ending the connection releases the lock as well
    }
    this.locked = false;
    pending.delete(this);
    await this.client.end().catch(() => {});
    if (failure) throw failure;
  }
}

/** Upserts the ls row from $1 (id) and $2..$6 (the meta). */
const UPSERT_SESSION = `INSERT INTO bonsai.sessions (id, title, cwd, created, updated, bytes, entry_count)
  VALUES ($1, $2, $3, $4, now(), $5, $6)
  ON CONFLICT (id) DO UPDATE SET title = excluded.title, cwd = excluded.cwd, created = excluded.created,
    updated = excluded.updated, bytes = excluded.bytes, entry_count = excluded.entry_count`;

const metaParams = (meta: SessionMeta) => [meta.title, meta.cwd, meta.created, meta.bytes, meta.entryCount];

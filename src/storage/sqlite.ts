/**
 * SQLite store (better-sqlite3, synchronous): one database file holding many sessions, in WAL
 * mode so readers never wait for the writer and several processes can append to different
 * sessions at once (each append is one short IMMEDIATE transaction; busy_timeout queues them).
 *
 * Tables: `bonsai_meta(version)`, `sessions` (what `bonsai ls` shows, kept up to date by every
 * write), `entries(session_id, seq, line)` with each line stored exactly as written, and `leases`
 * (one writer per session: pid, host, heartbeat, and a token that every write checks, so a writer
 * whose lease was taken over stops instead of interleaving).
 *
 * Durability: synchronous=NORMAL, like the file's append without fsync: a committed append
 * survives a crash of the process; flush() (or fsyncEachAppend) makes it survive a power loss.
 */
import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, resolve } from "node:path";
import type BetterSqlite3 from "better-sqlite3";
import type { LoadedSession } from "./load.js";
import { backupStamp } from "./file.js";
import { applyDigest, checkStorableLines, digestLines, EMPTY_META, loadLines, type SessionMeta } from "./lines.js";
import { formatLocation } from "./location.js";
import { HEARTBEAT_MS, isStaleLease, type Lease, newLease, ownerOf } from "./owner.js";
import {
  type OpenedSession,
  type OpenSessionOptions,
  type PrunedArchive,
  type SessionBackend,
  type SessionSummary,
  StoreVersionError,
  storeLockedError,
} from "./types.js";

type Database = BetterSqlite3.Database;

/**
 * Schema upgrades, in order: MIGRATIONS[v] takes a database from version v to v + 1. Never edit
 * a released step; add a new one.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE sessions (
     id TEXT PRIMARY KEY,
     title TEXT,
     cwd TEXT,
     created TEXT,
     updated TEXT NOT NULL,
     bytes INTEGER NOT NULL DEFAULT 0,
     entry_count INTEGER NOT NULL DEFAULT 0
   );
   CREATE INDEX sessions_updated ON sessions (updated);
   CREATE TABLE entries (
     session_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     line TEXT NOT NULL,
     PRIMARY KEY (session_id, seq)
   ) WITHOUT ROWID;
   CREATE TABLE leases (
     session_id TEXT PRIMARY KEY,
     token TEXT NOT NULL,
     pid INTEGER NOT NULL,
     host TEXT NOT NULL,
     since TEXT NOT NULL,
     heartbeat INTEGER NOT NULL
   );`,
  // 2: archives of pruned tool output, one line per record
  `CREATE TABLE pruned (
     session_id TEXT NOT NULL,
     seq INTEGER NOT NULL,
     line TEXT NOT NULL,
     PRIMARY KEY (session_id, seq)
   ) WITHOUT ROWID;`,
];

export const SQLITE_SCHEMA_VERSION = MIGRATIONS.length;

let driver: typeof BetterSqlite3 | undefined;

/** Loaded on first use, so commands that never touch SQLite never load the native module. */
function sqliteDriver(): typeof BetterSqlite3 {
  driver ??= createRequire(import.meta.url)("better-sqlite3") as typeof BetterSqlite3;
  return driver;
}

const storeName = (path: string) => formatLocation({ kind: "sqlite", path });

/**
 * The one line for a SQLite driver that cannot load: better-sqlite3 is bonsai's only native
 * module, and when its build failed or was made for another Node, its own error is a list of a
 * dozen paths. `undefined` for any other error.
 */
export function sqliteDriverError(where: string, error: unknown): Error | undefined {
  const { code, message = "" } = error as { code?: string; message?: string };
  const unbuilt = /Could not locate the bindings file|better_sqlite3\.node/.test(message);
  const missing = code === "MODULE_NOT_FOUND" && message.includes("better-sqlite3");
  if (code !== "ERR_DLOPEN_FAILED" && !unbuilt && !missing) return undefined;
  return new Error(
    `${where}: the SQLite driver (better-sqlite3) is not built for this Node ${process.version}; run \`npm rebuild better-sqlite3\` (needs a C/C++ toolchain where no prebuilt binary exists)`,
  );
}

/** Opens (creating when allowed) a bonsai SQLite database, upgrading its schema when it is older. */
export function openSqliteDatabase(path: string, options: { mustExist?: boolean } = {}): Database {
  const file = resolve(path);
  const where = storeName(path);
  if (!options.mustExist) mkdirSync(dirname(file), { recursive: true });
  let db: Database;
  try {
    const Driver = sqliteDriver();
    db = new Driver(file, { fileMustExist: options.mustExist === true });
  } catch (error) {
    const driverError = sqliteDriverError(where, error);
    if (driverError) throw driverError;
    const reason = (error as { code?: string }).code === "SQLITE_CANTOPEN" ? "no such database file" : (error as Error).message;
    throw new Error(`${where}: cannot open the SQLite store: ${reason}`);
  }
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    enableWal(db, where);
    db.pragma("synchronous = NORMAL");
    ensureSchema(db, where);
    return db;
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code === "SQLITE_NOTADB") throw new Error(`${where}: not a SQLite database`);
    throw error;
  }
}

const BUSY_TIMEOUT_MS = 10_000;

/**
 * WAL mode is a property of the database file, set once. Switching needs the database to
 * itself, and SQLite reports a busy database at once rather than waiting, so two processes that
 * open a new database together take turns here.
 */
function enableWal(db: Database, where: string): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      if (db.pragma("journal_mode", { simple: true }) === "wal") return;
      if (db.pragma("journal_mode = WAL", { simple: true }) === "wal") return;
      throw new Error(`${where}: cannot switch the database to WAL mode`);
    } catch (error) {
      if ((error as { code?: string }).code !== "SQLITE_BUSY" || Date.now() > deadline) throw error;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
    }
  }
}

function schemaVersion(db: Database): number | undefined {
  const hasMeta = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'bonsai_meta'").get();
  if (!hasMeta) return undefined;
  return (db.prepare("SELECT version FROM bonsai_meta WHERE id = 1").pluck().get() as number | undefined) ?? 0;
}

function ensureSchema(db: Database, where: string): void {
  const seen = schemaVersion(db);
  if (seen !== undefined && seen > SQLITE_SCHEMA_VERSION) throw new StoreVersionError(where, seen, SQLITE_SCHEMA_VERSION);
  if (seen === SQLITE_SCHEMA_VERSION) return;
  // IMMEDIATE: two processes creating the same new database take turns, the second sees it done
  db.transaction(() => {
    let version = schemaVersion(db);
    if (version === undefined) {
      const others = db
        .prepare("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
        .pluck()
        .get() as number;
      if (others > 0) throw new Error(`${where}: not a bonsai store (it holds other tables); use a new database file`);
      db.exec("CREATE TABLE bonsai_meta (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)");
      db.prepare("INSERT INTO bonsai_meta (id, version) VALUES (1, 0)").run();
      version = 0;
    }
    if (version > SQLITE_SCHEMA_VERSION) throw new StoreVersionError(where, version, SQLITE_SCHEMA_VERSION);
    for (let v = version; v < SQLITE_SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]);
    db.prepare("UPDATE bonsai_meta SET version = ? WHERE id = 1").run(SQLITE_SCHEMA_VERSION);
  }).immediate();
}

interface SessionRow {
  id: string;
  title: string | null;
  cwd: string | null;
  created: string | null;
  updated: string;
  bytes: number;
  entry_count: number;
}

/** Every session in the store, most recently written first. */
export function listSqliteSessions(path: string): SessionSummary[] {
  const db = openSqliteDatabase(path, { mustExist: true });
  try {
    const rows = db.prepare("SELECT * FROM sessions ORDER BY updated DESC, id").all() as SessionRow[];
    return rows.map((row) => ({
      id: row.id,
      location: formatLocation({ kind: "sqlite", path, sessionId: row.id }),
      title: row.title,
      cwd: row.cwd,
      created: row.created,
      updated: row.updated,
      bytes: row.bytes,
      entryCount: row.entry_count,
    }));
  } finally {
    db.close();
  }
}

function readLines(db: Database, id: string): string[] | undefined {
  const lines = db.prepare("SELECT line FROM entries WHERE session_id = ? ORDER BY seq").pluck().all(id) as string[];
  if (lines.length > 0) return lines;
  return db.prepare("SELECT 1 FROM sessions WHERE id = ?").get(id) ? lines : undefined;
}

/** The lines of one session exactly as stored; undefined when there is no such session. */
export function readSqliteLines(path: string, id: string): string[] | undefined {
  const db = openSqliteDatabase(path, { mustExist: true });
  try {
    return readLines(db, id);
  } finally {
    db.close();
  }
}

/**
 * Opens one session: takes its lease (unless read-only), then reads it. The lease comes first so
 * nothing can change between the read and the first append.
 */
export function openSqliteSession(path: string, id: string, options: OpenSessionOptions = {}): OpenedSession {
  const location = formatLocation({ kind: "sqlite", path, sessionId: id });
  const db = openSqliteDatabase(path, { mustExist: options.readOnly === true });
  try {
    if (options.readOnly) {
      // one statement: a consistent snapshot even while a writer appends
      const lines = readLines(db, id);
      return { loaded: lines === undefined ? undefined : loadLines(lines, location), backend: undefined };
    }
    const backend = new SqliteBackend(db, path, id, location, options);
    try {
      return { loaded: backend.load(), backend };
    } catch (error) {
      backend.close();
      throw error;
    }
  } catch (error) {
    if (db.open) db.close();
    throw error;
  }
}

/** A session written by this process; it owns its database connection. */
class SqliteBackend implements SessionBackend {
  readonly kind = "sqlite" as const;
  readonly writes = "immediate" as const;
  private readonly lease: Lease = newLease();
  private nextSeq = 0;
  private meta: SessionMeta = EMPTY_META;
  private heartbeat: NodeJS.Timeout | undefined;
  /** why writing stopped (the lease was taken over, or close() ran) */
  private stopped: Error | undefined;
  private readonly fsyncEachAppend: boolean;
  private readonly statements;
  readonly archive: PrunedArchive;

  constructor(
    private readonly db: Database,
    private readonly path: string,
    private readonly id: string,
    readonly location: string,
    options: OpenSessionOptions,
  ) {
    this.fsyncEachAppend = options.fsyncEachAppend === true;
    if (this.fsyncEachAppend) db.pragma("synchronous = FULL");
    this.statements = {
      lease: db.prepare("SELECT * FROM leases WHERE session_id = ?"),
      dropLease: db.prepare("DELETE FROM leases WHERE session_id = ? AND token = ?"),
      takeLease: db.prepare(
        "INSERT INTO leases (session_id, token, pid, host, since, heartbeat) VALUES (@id, @token, @pid, @host, @since, @heartbeat)",
      ),
      fence: db.prepare("UPDATE leases SET heartbeat = ? WHERE session_id = ? AND token = ?"),
      insert: db.prepare("INSERT INTO entries (session_id, seq, line) VALUES (?, ?, ?)"),
      clear: db.prepare("DELETE FROM entries WHERE session_id = ?"),
      forget: db.prepare("DELETE FROM sessions WHERE id = ?"),
      upsert: db.prepare(
        `INSERT INTO sessions (id, title, cwd, created, updated, bytes, entry_count)
         VALUES (@id, @title, @cwd, @created, @updated, @bytes, @entry_count)
         ON CONFLICT (id) DO UPDATE SET title = excluded.title, cwd = excluded.cwd, created = excluded.created,
           updated = excluded.updated, bytes = excluded.bytes, entry_count = excluded.entry_count`,
      ),
    };
    this.archive = {
      location: `${location} (table pruned)`,
      append: (lines) => this.appendArchive(lines),
      replace: (lines) => this.replaceArchive(lines),
      lines: () => db.prepare("SELECT line FROM pruned WHERE session_id = ? ORDER BY seq").pluck().all(this.id) as string[],
    };
    this.acquire();
    this.heartbeat = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private acquire(): void {
    const lease = this.lease;
    this.db
      .transaction(() => {
        const held = this.statements.lease.get(this.id) as (Lease & { session_id: string }) | undefined;
        if (held) {
          if (!isStaleLease(held, lease)) {
            throw storeLockedError(
              this.location,
              ownerOf(held),
              "close it first; a lease of a process that is gone is taken over automatically",
            );
          }
          this.db.prepare("DELETE FROM leases WHERE session_id = ?").run(this.id);
        }
        this.statements.takeLease.run({ id: this.id, ...lease });
      })
      .immediate();
  }

  /** Reads the session under the lease and learns where appends continue. */
  load(): LoadedSession | undefined {
    const row = this.db.prepare("SELECT * FROM sessions WHERE id = ?").get(this.id) as SessionRow | undefined;
    const lines = readLines(this.db, this.id);
    const last = this.db.prepare("SELECT max(seq) FROM entries WHERE session_id = ?").pluck().get(this.id) as number | null;
    this.nextSeq = last === null ? 0 : last + 1;
    if (row) this.meta = { title: row.title, cwd: row.cwd, created: row.created, bytes: row.bytes, entryCount: row.entry_count };
    return lines === undefined ? undefined : loadLines(lines, this.location);
  }

  /** Refreshes the heartbeat; a lease someone took over stops every later write. */
  private fence(): void {
    if (this.statements.fence.run(Date.now(), this.id, this.lease.token).changes === 0) {
      this.stopped = storeLockedError(
        this.location,
        undefined,
        "this writer's lease was taken over (its heartbeat stopped for too long); open the session again",
      );
      throw this.stopped;
    }
  }

  private beat(): void {
    if (this.stopped) return;
    try {
      this.fence();
    } catch {
      // a busy database skips one beat; a lost lease is kept in `stopped` for the next write
    }
  }

  private writable(): void {
    if (this.stopped) throw this.stopped;
  }

  append(lines: readonly string[]): void {
    this.writable();
    if (lines.length === 0) return;
    checkStorableLines(lines, this.location);
    const digest = digestLines(lines, this.nextSeq === 0);
    const meta = applyDigest(this.meta, digest, false);
    this.db
      .transaction(() => {
        this.fence();
        for (let i = 0; i < lines.length; i++) this.statements.insert.run(this.id, this.nextSeq + i, lines[i]);
        this.statements.upsert.run(sessionRow(this.id, meta));
      })
      .immediate();
    this.nextSeq += lines.length;
    this.meta = meta;
  }

  rewrite(lines: readonly string[]): void {
    this.writable();
    checkStorableLines(lines, this.location);
    const meta = applyDigest(EMPTY_META, digestLines(lines, true), true);
    this.db
      .transaction(() => {
        this.fence();
        this.statements.clear.run(this.id);
        for (let i = 0; i < lines.length; i++) this.statements.insert.run(this.id, i, lines[i]);
        if (lines.length === 0) this.statements.forget.run(this.id);
        else this.statements.upsert.run(sessionRow(this.id, meta));
      })
      .immediate();
    this.nextSeq = lines.length;
    this.meta = meta;
  }

  private appendArchive(lines: readonly string[]): void {
    this.writable();
    checkStorableLines(lines, this.location);
    this.db
      .transaction(() => {
        this.fence();
        const last = this.db.prepare("SELECT max(seq) FROM pruned WHERE session_id = ?").pluck().get(this.id) as number | null;
        const insert = this.db.prepare("INSERT INTO pruned (session_id, seq, line) VALUES (?, ?, ?)");
        for (let i = 0; i < lines.length; i++) insert.run(this.id, (last ?? -1) + 1 + i, lines[i]);
      })
      .immediate();
  }

  private replaceArchive(lines: readonly string[]): void {
    this.writable();
    checkStorableLines(lines, this.location);
    this.db
      .transaction(() => {
        this.fence();
        this.db.prepare("DELETE FROM pruned WHERE session_id = ?").run(this.id);
        const insert = this.db.prepare("INSERT INTO pruned (session_id, seq, line) VALUES (?, ?, ?)");
        for (let i = 0; i < lines.length; i++) insert.run(this.id, i, lines[i]);
      })
      .immediate();
  }

  backup(): string {
    this.writable();
    const backupId = `${this.id}.bak-${backupStamp()}`;
    this.db
      .transaction(() => {
        this.fence();
        this.db.prepare("INSERT INTO entries (session_id, seq, line) SELECT ?, seq, line FROM entries WHERE session_id = ?").run(backupId, this.id);
        this.db
          .prepare(
            `INSERT INTO sessions (id, title, cwd, created, updated, bytes, entry_count)
             SELECT ?, title, cwd, created, updated, bytes, entry_count FROM sessions WHERE id = ?`,
          )
          .run(backupId, this.id);
      })
      .immediate();
    return formatLocation({ kind: "sqlite", path: this.path, sessionId: backupId });
  }

  openSibling(header: { id: string }): { backend: SessionBackend; location: string } {
    const { loaded, backend } = openSqliteSession(this.path, header.id, { fsyncEachAppend: this.fsyncEachAppend });
    if (loaded) {
      backend?.close();
      throw new Error(`${formatLocation({ kind: "sqlite", path: this.path, sessionId: header.id })}: a session with this id already exists`);
    }
    return { backend: backend!, location: formatLocation({ kind: "sqlite", path: this.path, sessionId: header.id }) };
  }

  /** Makes every committed append durable: one commit with synchronous=FULL syncs the whole WAL. */
  flush(): void {
    this.writable();
    if (this.fsyncEachAppend) return;
    this.db.pragma("synchronous = FULL");
    try {
      this.db.transaction(() => this.fence()).immediate();
    } finally {
      this.db.pragma("synchronous = NORMAL");
    }
  }

  close(): void {
    if (!this.db.open) return;
    clearInterval(this.heartbeat);
    try {
      if (!this.stopped) this.flush();
    } finally {
      this.stopped ??= new Error(`${this.location}: session is closed; open it again to write`);
      try {
        this.statements.dropLease.run(this.id, this.lease.token);
      } finally {
        this.db.close();
      }
    }
  }
}

const sessionRow = (id: string, meta: SessionMeta): SessionRow => ({
  id,
  title: meta.title,
  cwd: meta.cwd,
  created: meta.created,
  updated: new Date().toISOString(),
  bytes: meta.bytes,
  entry_count: meta.entryCount,
});

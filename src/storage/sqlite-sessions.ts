/**
 * SQLite's sessions: the `entries` rows of each session and its `sessions` row (what `bonsai ls`
 * shows), opened, listed and read, and the writer that holds a session's lease. One database file
 * holds many sessions, in WAL mode so readers never wait for the writer and several processes can
 * append to different sessions at once (each append is one short IMMEDIATE transaction;
 * busy_timeout queues them).
 *
 * Durability: synchronous=NORMAL, like the file's append without fsync: a committed append
 * survives a crash of the process; flush() (or fsyncEachAppend) makes it survive a power loss.
 */
import { missingSession } from "./database.js";
import { located } from "../util/error-text.js";
import { applyDigest, backupStamp, checkStorableLines, digestLines, EMPTY_META, type SessionMeta } from "./lines.js";
import { READ_ENTRIES } from "./reads.js";
import { sqliteArchive } from "./sqlite-archive.js";
import { SqliteLease } from "./sqlite-leases.js";
import { type Database, immediateTransaction, openSqliteDatabase, sqliteLocation, sqliteValue, withSqliteDatabase } from "./sqlite-schema.js";
import type { OpenedSession, OpenSessionOptions, PrunedArchive, RewriteOutcome, SessionBackend, SessionRead, SessionSummary } from "./types.js";

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
  return withSqliteDatabase(path, (db) => {
    const rows = db.prepare("SELECT * FROM sessions ORDER BY updated DESC, id").all() as SessionRow[];
    return rows.map((row) => ({
      id: row.id,
      location: sqliteLocation(path, row.id),
      title: row.title,
      cwd: row.cwd,
      created: row.created,
      updated: row.updated,
      bytes: row.bytes,
      entryCount: row.entry_count,
    }));
  });
}

function readLines(db: Database, id: string): string[] | undefined {
  const lines = db.prepare("SELECT line FROM entries WHERE session_id = ? ORDER BY seq").pluck().all(id) as string[];
  if (lines.length > 0) return lines;
  return db.prepare("SELECT 1 FROM sessions WHERE id = ?").get(id) ? lines : undefined;
}

/** The lines of one session exactly as stored; undefined when there is no such session. */
export function readSqliteLines(path: string, id: string): string[] | undefined {
  return withSqliteDatabase(path, (db) => readLines(db, id));
}

/**
 * Opens one session: takes its lease (unless read-only), then reads it. The lease comes first so
 * nothing can change between the read and the first append.
 */
export function openSqliteSession<T extends { endsWithNewline: boolean }>(
  path: string,
  id: string,
  read: SessionRead<T>,
  options: OpenSessionOptions = {},
): OpenedSession<T> {
  const location = sqliteLocation(path, id);
  const db = openSqliteDatabase(path, { mustExist: options.mustExist === true, readOnly: options.readOnly === true });
  try {
    if (options.readOnly) {
      // one statement: a consistent snapshot even while a writer appends
      const lines = readLines(db, id);
      if (lines === undefined && options.mustExist) throw missingSession(location);
      return { loaded: lines === undefined ? undefined : read.lines(lines, location), backend: undefined };
    }
    const backend = new SqliteBackend(db, path, id, location, options);
    try {
      const loaded = backend.load(read);
      if (loaded === undefined && options.mustExist) throw missingSession(location);
      return { loaded, backend };
    } catch (error) {
      backend.close();
      throw error;
    }
  } catch (error) {
    if (db.open) db.close();
    throw located(error, location); // SQLite's "attempt to write a readonly database" names none
  } finally {
    if (options.readOnly && db.open) db.close();
  }
}

/** A session written by this process; it owns its database connection. */
class SqliteBackend implements SessionBackend {
  readonly kind = "sqlite" as const;
  readonly writes = "immediate" as const;
  private nextSeq = 0;
  private meta: SessionMeta = EMPTY_META;
  private readonly lease: SqliteLease;
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
    this.lease = new SqliteLease(db, id, location);
    this.archive = sqliteArchive(db, id, location, this.lease);
  }

  /** Reads the session under the lease and learns where appends continue. */
  load<T extends { endsWithNewline: boolean }>(read: SessionRead<T>): T | undefined {
    const row = this.db.prepare("SELECT * FROM sessions WHERE id = ?").get(this.id) as SessionRow | undefined;
    const lines = readLines(this.db, this.id);
    const last = sqliteValue(this.db.prepare("SELECT max(seq) FROM entries WHERE session_id = ?"), this.id) as number | null;
    this.nextSeq = last === null ? 0 : last + 1;
    if (row) this.meta = { title: row.title, cwd: row.cwd, created: row.created, bytes: row.bytes, entryCount: row.entry_count };
    return lines === undefined ? undefined : read.lines(lines, this.location);
  }

  /** Runs `write` in one IMMEDIATE transaction that first checks the lease is still this writer's. */
  private fenced(write: () => void): void {
    try {
      immediateTransaction(this.db, () => {
        this.lease.fence();
        write();
      });
    } catch (error) {
      throw located(error, this.location);
    }
  }

  append(lines: readonly string[]): void {
    this.lease.writable();
    if (lines.length === 0) return;
    checkStorableLines(lines, this.location);
    const digest = digestLines(lines, this.nextSeq === 0);
    const meta = applyDigest(this.meta, digest, false);
    this.fenced(() => {
      for (let i = 0; i < lines.length; i++) this.statements.insert.run(this.id, this.nextSeq + i, lines[i]);
      this.statements.upsert.run(sessionRow(this.id, meta));
    });
    this.nextSeq += lines.length;
    this.meta = meta;
  }

  rewrite(lines: readonly string[]): RewriteOutcome {
    this.lease.writable();
    checkStorableLines(lines, this.location);
    const meta = applyDigest(EMPTY_META, digestLines(lines, true), true);
    this.fenced(() => {
      this.statements.clear.run(this.id);
      for (let i = 0; i < lines.length; i++) this.statements.insert.run(this.id, i, lines[i]);
      if (lines.length === 0) this.statements.forget.run(this.id);
      else this.statements.upsert.run(sessionRow(this.id, meta));
    });
    this.nextSeq = lines.length;
    this.meta = meta;
    return { leafDisplaced: false };
  }

  backup(): string {
    this.lease.writable();
    const backupId = `${this.id}.bak-${backupStamp()}`;
    this.fenced(() => {
      this.db.prepare("INSERT INTO entries (session_id, seq, line) SELECT ?, seq, line FROM entries WHERE session_id = ?").run(backupId, this.id);
      this.db
        .prepare(
          `INSERT INTO sessions (id, title, cwd, created, updated, bytes, entry_count)
           SELECT ?, title, cwd, created, updated, bytes, entry_count FROM sessions WHERE id = ?`,
        )
        .run(backupId, this.id);
    });
    this.backups.set(sqliteLocation(this.path, backupId), backupId);
    return sqliteLocation(this.path, backupId);
  }

  discardBackup(location: string): void {
    const backupId = this.backups.get(location);
    if (backupId === undefined) throw new Error(`${location}: not a backup this writer made`);
    this.lease.writable();
    this.fenced(() => {
      this.statements.clear.run(backupId);
      this.statements.forget.run(backupId);
    });
    this.backups.delete(location);
  }

  /** the backups made by this writer (location to id), which alone it may discard */
  private readonly backups = new Map<string, string>();

  openSibling(header: { id: string }): { backend: SessionBackend; location: string } {
    const { loaded, backend } = openSqliteSession(this.path, header.id, READ_ENTRIES, { fsyncEachAppend: this.fsyncEachAppend });
    if (loaded) {
      backend?.close();
      throw new Error(`${sqliteLocation(this.path, header.id)}: a session with this id already exists`);
    }
    return { backend: backend!, location: sqliteLocation(this.path, header.id) };
  }

  /** Makes every committed append durable: one commit with synchronous=FULL syncs the whole WAL. */
  flush(): void {
    this.lease.writable();
    if (this.fsyncEachAppend) return;
    this.db.pragma("synchronous = FULL");
    try {
      this.fenced(() => {});
    } finally {
      this.db.pragma("synchronous = NORMAL");
    }
  }

  close(): void {
    if (!this.db.open) return;
    try {
      if (this.lease.held) this.flush();
    } finally {
      try {
        this.lease.release();
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

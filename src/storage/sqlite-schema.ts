/**
 * The SQLite store's database file: the driver loaded on first use, WAL mode, and the schema,
 * created on first use and upgraded step by step, refused when a newer bonsai wrote it.
 *
 * Tables: `bonsai_meta(version)`, `sessions` (what `bonsai ls` shows, kept up to date by every
 * write), `entries(session_id, seq, line)` with each line stored exactly as written, `leases`
 * (one writer per session, sqlite-leases.ts) and `pruned` (archives of pruned tool output,
 * sqlite-archive.ts).
 */
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type Libsql from "libsql";
import { fragment } from "./database.js";
import { StoreVersionError } from "./types.js";

export type Database = Libsql.Database;

/**
 * The first column of the statement's first row, `undefined` when there is none. libsql's get()
 * ignores pluck() (and its pragma's `simple`, built on it), so the row is read as an array.
 */
export function sqliteValue(statement: Libsql.Statement, ...params: unknown[]): unknown {
  return (statement.raw().get(...params) as unknown[] | undefined)?.[0];
}

/**
 * Runs `work` in one BEGIN IMMEDIATE transaction (the write lock taken up front, so two writers
 * queue on busy_timeout instead of failing at COMMIT). On failure the transaction is rolled back if
 * SQLite has not already done so itself (it has after a full disk or an I/O error), and the error
 * thrown is the one that failed: libsql's own transaction() issues ROLLBACK unconditionally, and
 * "no transaction is active" then hides the real cause.
 */
export function immediateTransaction<T>(db: Database, work: () => T): T {
  db.exec("BEGIN IMMEDIATE");
  try {
    const result = work();
    db.exec("COMMIT");
    return result;
  } catch (error) {
    try {
      if (db.inTransaction) db.exec("ROLLBACK");
    } catch {
      // the error to report is the one that made the transaction fail
    }
    throw error;
  }
}

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

/** A SQLite location as text: `sqlite:PATH`, with `#ID` when it names a session. */
export const sqliteLocation = (path: string, sessionId?: string) => `sqlite:${path}${fragment(sessionId)}`;

let driver: typeof Libsql | undefined;

/** Loaded on first use, so commands that never touch SQLite never load the native module. */
function sqliteDriver(): typeof Libsql {
  driver ??= createRequire(import.meta.url)("libsql") as typeof Libsql;
  return driver;
}

/**
 * Opens the database file through an SQLite URI: libsql ignores better-sqlite3's `readonly` and
 * `fileMustExist` options, SQLite's `mode` does the same (ro: read-only, rw: must exist, rwc:
 * created when missing). A file that cannot be opened throws an error with code SQLITE_CANTOPEN,
 * as better-sqlite3 did (libsql reports it as `ConnectionFailed("…: 14")` with no code).
 */
function openDriver(file: string, mode: "ro" | "rw" | "rwc"): Database {
  const Driver = sqliteDriver();
  try {
    return new Driver(`${pathToFileURL(file).href}?mode=${mode}`);
  } catch (error) {
    const { code, message = "" } = error as { code?: string; message?: string };
    if (code === "" && /^ConnectionFailed\(.*: 14"\)$/s.test(message)) {
      throw Object.assign(new Error("unable to open database file"), { code: "SQLITE_CANTOPEN" });
    }
    throw error;
  }
}

/** Whether SQLite refused a write as read-only: libsql names only some SQLITE_READONLY_* codes, its rawCode has them all. */
const isReadOnlyError = (error: unknown) => ((error as { rawCode?: number }).rawCode ?? 0) % 256 === 8;

/**
 * The one line for a SQLite driver that cannot load: libsql is bonsai's only native module, its
 * binary comes in an optional package for each platform (@libsql/linux-x64-gnu, …), and when that
 * is missing or does not load here, its own error names a package or a shared object.
 * `undefined` for any other error.
 */
export function sqliteDriverError(where: string, error: unknown): Error | undefined {
  const { code, message = "" } = error as { code?: string; message?: string };
  const missing = code === "MODULE_NOT_FOUND" && /'(libsql|@libsql\/[^']+|@neon-rs\/load|detect-libc)'/.test(message);
  const unsupported = /^Neon: unsupported system/.test(message);
  if (code !== "ERR_DLOPEN_FAILED" && !missing && !unsupported) return undefined;
  return new Error(
    `${where}: the SQLite driver (libsql) has no binary that loads on this system (${process.platform}-${process.arch}, Node ${process.version}); reinstall bonsai without omitting optional dependencies`,
  );
}

/** Opens (creating when allowed) a bonsai SQLite database, upgrading its schema when it is older. */
export function openSqliteDatabase(path: string, options: { mustExist?: boolean; readOnly?: boolean } = {}): Database {
  const file = resolve(path);
  const where = sqliteLocation(path);
  const mustExist = options.mustExist === true || options.readOnly === true;
  if (!mustExist) mkdirSync(dirname(file), { recursive: true });
  let db: Database;
  try {
    db = openDriver(file, options.readOnly ? "ro" : mustExist ? "rw" : "rwc");
  } catch (error) {
    const driverError = sqliteDriverError(where, error);
    if (driverError) throw driverError;
    const reason = (error as { code?: string }).code === "SQLITE_CANTOPEN" ? "no such database file" : (error as Error).message;
    throw new Error(`${where}: cannot open the SQLite store: ${reason}`);
  }
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    if (options.readOnly) {
      // a reader changes nothing: no WAL switch, no schema made or upgraded, only checked
      try {
        checkSchemaForReading(db, where);
      } catch (error) {
        if (!isReadOnlyError(error)) throw error;
        db.close();
        return openSnapshot(file, where);
      }
      return db;
    }
    // another application's database is refused before anything about it changes (WAL is the file's)
    refuseForeign(db, where);
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

/**
 * A WAL database can be read only where SQLite may create its `-shm` file: beside the database.
 * For a store in a folder this user cannot write, the database (and its `-wal`, if any) is copied
 * to a private temp folder and read there, the copy unlinked once open: the store is never touched.
 */
function openSnapshot(file: string, where: string): Database {
  const dir = mkdtempSync(join(tmpdir(), "bonsai-sqlite-"));
  try {
    const copy = join(dir, "snapshot.db");
    copyFileSync(file, copy);
    chmodSync(copy, 0o600); // the mode came along with the bytes
    if (existsSync(`${file}-wal`)) {
      copyFileSync(`${file}-wal`, `${copy}-wal`);
      chmodSync(`${copy}-wal`, 0o600);
    }
    const writable = openDriver(copy, "rw");
    writable.pragma("journal_mode = DELETE"); // folds the WAL in: the copy then needs no other file
    writable.close();
    const db = openDriver(copy, "ro");
    checkSchemaForReading(db, where);
    return db;
  } finally {
    rmSync(dir, { recursive: true, force: true }); // an open database keeps its file until closed
  }
}

/** Runs `read` on the database at `path` (which must exist), opened read-only, closing it after. */
export function withSqliteDatabase<T>(path: string, read: (db: Database) => T): T {
  const db = openSqliteDatabase(path, { readOnly: true });
  try {
    return read(db);
  } finally {
    db.close();
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
      if (sqliteValue(db.prepare("PRAGMA journal_mode")) === "wal") return;
      if (sqliteValue(db.prepare("PRAGMA journal_mode = WAL")) === "wal") return;
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
  return (sqliteValue(db.prepare("SELECT version FROM bonsai_meta WHERE id = 1")) as number | undefined) ?? 0;
}

/** What a read-only open accepts: a bonsai store of this schema version (an older one is upgraded by the first writer). */
function checkSchemaForReading(db: Database, where: string): void {
  const seen = schemaVersion(db);
  if (seen === undefined) {
    const empty = (sqliteValue(db.prepare("SELECT count(*) FROM sqlite_master")) as number) === 0;
    throw new Error(empty ? `${where}: holds no bonsai sessions yet (an empty database)` : `${where}: not a bonsai store (it holds other tables); use a new database file`);
  }
  if (seen > SQLITE_SCHEMA_VERSION) throw new StoreVersionError(where, seen, SQLITE_SCHEMA_VERSION);
  if (seen < SQLITE_SCHEMA_VERSION) {
    throw new Error(`${where}: written by an older bonsai (schema ${seen}, this one reads ${SQLITE_SCHEMA_VERSION}); open a session in it for writing once to upgrade it`);
  }
}

/**
 * A database with tables and no bonsai_meta belongs to another application: not a store to write.
 * One statement reads both facts from one snapshot: asked in two, another process creating the
 * store could commit between them, and its tables would be seen without its bonsai_meta.
 */
function refuseForeign(db: Database, where: string): void {
  const [meta, tables] = db
    .prepare("SELECT count(*) FILTER (WHERE name = 'bonsai_meta'), count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
    .raw()
    .get() as [number, number];
  if (meta === 0 && tables > 0) throw new Error(`${where}: not a bonsai store (it holds other tables); use a new database file`);
}

function ensureSchema(db: Database, where: string): void {
  const seen = schemaVersion(db);
  if (seen !== undefined && seen > SQLITE_SCHEMA_VERSION) throw new StoreVersionError(where, seen, SQLITE_SCHEMA_VERSION);
  if (seen === SQLITE_SCHEMA_VERSION) return;
  // IMMEDIATE: two processes creating the same new database take turns, the second sees it done
  immediateTransaction(db, () => {
    let version = schemaVersion(db);
    if (version === undefined) {
      refuseForeign(db, where); // again inside the transaction: another process may have made tables
      db.exec("CREATE TABLE bonsai_meta (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)");
      db.prepare("INSERT INTO bonsai_meta (id, version) VALUES (1, 0)").run();
      version = 0;
    }
    if (version > SQLITE_SCHEMA_VERSION) throw new StoreVersionError(where, version, SQLITE_SCHEMA_VERSION);
    for (let v = version; v < SQLITE_SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]);
    db.prepare("UPDATE bonsai_meta SET version = ? WHERE id = 1").run(SQLITE_SCHEMA_VERSION);
  });
}

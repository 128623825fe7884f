/**
 * The storage interface under SessionManager. A session is a sequence of lines, each one JSON
 * value without its newline: the header first, then one entry per line. Every store keeps those
 * lines exactly as they were written (a file byte for byte, a database as text rows in order), so
 * a session moves between stores without a single character changing.
 *
 * Three stores implement it, each as one Store object (a driver, below) in its own file: the JSONL
 * file (file.ts, the default), SQLite (sqlite.ts: one database file, many sessions) and
 * PostgreSQL (postgres.ts: many processes on many machines), found through STORES in stores.ts.
 * Each keeps one writer per session: a lock file, a lease row, an advisory lock held by the
 * writer's connection.
 *
 * Durability contract (docs/stores.md says the same):
 * - file and SQLite write synchronously: when append() returns, the line is in the file (the
 *   page cache) or committed to the database (the WAL), and survives a crash of the process.
 *   flush() makes it survive a power loss as well (fsync, WAL checkpoint).
 * - PostgreSQL is asynchronous (pg has no synchronous client): append() queues the lines and
 *   returns; a background loop writes them in order, batched. flush() resolves once everything
 *   queued so far is committed. A write that fails is never dropped: the first failure is kept,
 *   every later append() throws it, and flush() and close() reject with it. A process that exits
 *   without awaiting close() can lose what was still queued, and says so on stderr.
 */
import type { LoadedSession } from "./load.js";
import { type LockOwner, SessionLockedError } from "./lock.js";

/** The locations of each kind of store, by kind. */
export interface StoreLocations {
  file: { kind: "file"; path: string };
  sqlite: { kind: "sqlite"; path: string; sessionId?: string };
  postgres: { kind: "postgres"; connectionString: string; sessionId?: string };
}

export type StoreKind = keyof StoreLocations;

/** The locations of one kind of store (an indexed type, so a Store<"file"> is a Store). */
export type LocationOf<K extends StoreKind> = StoreLocations[K];

/** Where a session or a whole store is, as parseLocation (location.ts) reads it. */
export type StoreLocation = LocationOf<StoreKind>;

/** A location that cannot be parsed; the message says what was wrong and the accepted forms. */
export class LocationError extends Error {
  constructor(
    readonly location: string,
    reason: string,
  ) {
    super(`${location}: ${reason}`);
    this.name = "LocationError";
  }
}

/** What a store knows about one of its sessions without reading it (bonsai ls). */
export interface SessionSummary {
  /** the session's key in its store: the file path for files, the session id for databases */
  id: string;
  /** a location that opens it (database passwords left out) */
  location: string;
  /** the newest session_info name, else the header title */
  title: string | null;
  cwd: string | null;
  /** the header's timestamp */
  created: string | null;
  /** when a line was last written (ISO time) */
  updated: string | null;
  /** the size the session has as a JSONL file: its lines and their newlines, in UTF-8 bytes */
  bytes: number;
  /** lines after the header */
  entryCount: number;
}

/** What a rewrite did beyond replacing the lines. */
export interface RewriteOutcome {
  /**
   * Lines another program appended to a file during the rewrite were carried to the end of the
   * new file (storage/foreign-lines.ts), and one had come before bonsai's last line: the file's
   * last line, which readers take as the leaf, is now another program's where it was bonsai's.
   * Always false for a database (one writer, and no other program's rows).
   */
  leafDisplaced: boolean;
  /**
   * The rewrite is done, but lines another program appended to the old file just after it (a
   * descriptor opened before the rename) could not be carried into the new one: why.
   */
  notCarried?: string;
}

/**
 * One session open for writing in one store; it holds the session's single-writer lease from the
 * moment it is opened until close().
 */
export interface SessionBackend {
  readonly kind: StoreKind;
  /** where the session lives, printable (no password) */
  readonly location: string;
  /** "immediate": append() and rewrite() have reached the store when they return; "queued": flush() says when */
  readonly writes: "immediate" | "queued";
  /** Adds lines after the last one, in one write or one transaction. */
  append(lines: readonly string[]): void;
  /**
   * Replaces every line at once: a reader sees the old lines or the new ones, never a mix. No
   * lines: the session is removed (a copy that failed half way takes back what it wrote).
   */
  rewrite(lines: readonly string[]): RewriteOutcome;
  /**
   * Keeps the session as it is now under a new name beside it (before a migration or a lossy
   * rewrite): `<file>.bak-<time>` for files, session `<id>.bak-<time>` in a database. Ordered
   * with the writes around it. Returns the backup's location.
   */
  backup(): string;
  /**
   * Removes a backup this writer made (its location, as backup() gave it) and no longer needs: the
   * rewrite after it failed, so the session is still what the backup holds, and a retry on a full
   * disk would pile them up. Ordered with the writes around it; refuses any other location.
   */
  discardBackup(location: string): void;
  /**
   * The session's archive of pruned tool output, in a database. Undefined for files: a session
   * file's archive is a sidecar file, which Store.archive() reads and writes (file-archive.ts).
   */
  readonly archive?: PrunedArchive;
  /** Starts a new, empty session in the same store (a file in the same directory), holding its lease. */
  openSibling(header: { id: string; timestamp: string }): { backend: SessionBackend; location: string };
  /** Everything written so far is durable when it returns (or its promise resolves). */
  flush(): void | Promise<void>;
  /** Flushes, then gives up the lease. Safe to call twice. */
  close(): void | Promise<void>;
}

/**
 * An append-only list of lines kept beside a session in its database. An append is ordered with
 * the session's writes: a rewrite after it is never stored without it.
 */
export interface PrunedArchive {
  /** printable: where the lines are */
  readonly location: string;
  append(lines: readonly string[]): void;
  /**
   * Replaces every line at once, in one transaction (no lines: the session has no archive), when
   * a copy puts a session and its archive in place of another. Ordered like append.
   */
  replace(lines: readonly string[]): void;
  /** every line, oldest first */
  lines(): string[];
}

/**
 * A session as opened: what the store held once the lease was taken, and the writer. `loaded` is
 * what the open's SessionRead made of it: every entry (LoadedSession) unless told otherwise.
 */
export interface OpenedSession<T = LoadedSession> {
  /** undefined when the session does not exist yet (its first append creates it) */
  loaded: T | undefined;
  /** undefined when opened read-only */
  backend: SessionBackend | undefined;
}

export interface OpenSessionOptions {
  /** read without taking the writer lease */
  readOnly?: boolean;
  /** make every write durable before it returns (fsync, synchronous=FULL); slower */
  fsyncEachAppend?: boolean;
  /**
   * A session that is not there is an error (SessionFileError NOT_FOUND) rather than
   * `loaded: undefined`; a missing file is refused before anything is created. An empty file
   * opened for writing is still where a new session starts; read-only, its EMPTY error is thrown.
   */
  mustExist?: boolean;
}

/**
 * What an open makes of the session it read (reads.ts): its entries, or a tree index that leaves
 * message bodies in the file. A store with a file reads the file in place; a database store hands
 * over its rows as lines.
 */
export interface SessionRead<T extends { endsWithNewline: boolean } = LoadedSession> {
  /** reads a session file; throws SessionFileError (EMPTY for a file with no header) */
  file(path: string): T;
  /** reads stored lines; `location` names them in issues and errors */
  lines(lines: readonly string[], location: string): T;
}

/** What a copy's target archive held, to put back if the copy fails. */
export interface ArchiveSnapshot {
  /** lines it held (none: no archive) */
  lines: number;
  /** a sidecar's bytes, exactly */
  file?: Buffer;
  /** a table's rows, in order */
  rows?: string[];
}

/**
 * A session's archive of pruned tool output, written under the session's writer lease: what
 * ops/prune.ts appends to and restores from, and what a copy replaces, whatever the store.
 */
export interface StoreArchive extends PrunedArchive {
  /** every line, oldest first, as lines() gives them, with a sidecar's torn last line reported instead of dropped */
  stored(): StoredLines;
  /** what it holds now */
  snapshot(): ArchiveSnapshot;
  /** Puts a snapshot back, the way replace() writes. */
  restore(snapshot: ArchiveSnapshot): void;
}

/**
 * One kind of store (a driver): its location syntax, its sessions (open, list, read lines) and
 * their archives of pruned tool output, behind the same methods for every kind. STORES
 * (stores.ts) holds one per kind and storeOf() picks a location's, so code above a store's own
 * files never tests which kind it is (docs/ARCHITECTURE.md, storage). Every method takes this
 * store's own locations.
 */
export interface Store<K extends StoreKind = StoreKind> {
  readonly kind: K;

  // ------------------------------------------------------------------ locations
  /** how a location is written, for error messages: "sqlite:PATH#SESSION_ID" */
  readonly form: string;
  /** URL schemes that name this store, lower case */
  readonly schemes: readonly string[];
  /** Reads a trimmed location starting `scheme:` (one of `schemes`; undefined: a plain path). Throws LocationError. */
  parseLocation(text: string, scheme: string | undefined): LocationOf<K>;
  /** The location as text that parseLocation reads back (passwords left out). */
  formatLocation(location: LocationOf<K>): string;
  /** The session's name in messages and in SessionBackend.location: a file's absolute path, a database location without password. */
  sessionName(location: LocationOf<K>): string;
  /** The session's key in the store: a file's path, a database session's id (LocationError when the location names none). */
  sessionKey(location: LocationOf<K>): string;
  /** The id a location gives its session (a database row's key); undefined where only the header holds the id (a file). */
  sessionIdOf(location: LocationOf<K>): string | undefined;
  /** The same store, naming session `id` in it; throws for a location that holds one session only (a file). */
  withSessionId(location: LocationOf<K>, id: string): LocationOf<K>;
  /** Where a new session with `header` goes in the store `store` names: a file `<time>_<id>.jsonl` in a directory, else the location's id or the header's. */
  newSessionAt(store: LocationOf<K>, header: { id: string; timestamp: string }): LocationOf<K>;
  /** Where a copy of the session `header` goes when asked to go to `to`: `to` itself when it names one session, else a session in it (in a directory: file `fileName`). */
  copyTarget(to: LocationOf<K>, header: { id: string; timestamp: string }, fileName: string): LocationOf<K>;
  /** The file name of the session itself (a file's), to keep when copied into a directory; undefined when it has none (a database row). */
  fileNameOf(location: LocationOf<K>): string | undefined;
  /** Whether two of this store's locations name the same session. */
  sameSession(a: LocationOf<K>, b: LocationOf<K>): boolean;
  /** Whether the location names a whole store, where a new session takes a fresh id (a database without #ID), rather than one session. */
  namesStore(location: LocationOf<K>): boolean;
  /** The location with its relative paths resolved against `cwd`; the same object when it has none. */
  resolvedAgainst(location: LocationOf<K>, cwd: string): LocationOf<K>;

  // ------------------------------------------------------------------ sessions
  /** Opens a session: the writer lease first (unless read-only), then the read, so nothing changes in between. */
  open<T extends { endsWithNewline: boolean }>(location: LocationOf<K>, read: SessionRead<T>, options?: OpenSessionOptions): Promise<OpenedSession<T>>;
  /** The same without waiting; a store that can only open asynchronously (PostgreSQL) throws LocationError. */
  openSync<T extends { endsWithNewline: boolean }>(location: LocationOf<K>, read: SessionRead<T>, options?: OpenSessionOptions): OpenedSession<T>;
  /** The sessions the store holds, most recently written first; `onWarning` hears what could not be read and was left out (an unreadable folder). */
  list(store: LocationOf<K>, onWarning?: (message: string) => void): Promise<SessionSummary[]>;
  /** A session's lines exactly as stored, read without the lease; undefined when there is no such session. */
  readLines(location: LocationOf<K>): Promise<StoredLines | undefined>;
  /** Refuses lines the store cannot keep as they are (a database: a newline or a NUL inside a line) before anything is written. */
  checkLines(lines: readonly string[], where: string): void;

  // ------------------------------------------------------------------ pruned archive
  /** Where the session's archive of pruned tool output is, printable (no password). */
  archiveLocation(location: LocationOf<K>): string;
  /**
   * The archive's lines, oldest first, exactly as stored and read without the lease; none when
   * there is no archive. An unterminated last line that is not JSON is reported in `tornTail`.
   */
  readArchive(location: LocationOf<K>): Promise<StoredLines>;
  /** The archive of the session `backend` holds open at `location`: read, append and replace under its lease. */
  archive(location: LocationOf<K>, backend: SessionBackend): StoreArchive;
}

/** Lines of a session exactly as stored, for copying and comparing. */
export interface StoredLines {
  lines: string[];
  /** the last line had no newline after it and is not JSON: an interrupted write, not part of the session */
  tornTail?: { line: number; bytes: number };
}

/**
 * The same error a second writer gets from a session file. Stores whose lock cannot be deleted
 * by hand (a lease row, an advisory lock) say what to do instead.
 */
export function storeLockedError(location: string, owner: LockOwner | undefined, remedy: string): SessionLockedError {
  const error = new SessionLockedError(location, owner);
  const who = owner ? `process ${owner.pid} on ${owner.host} (since ${owner.since})` : "another process";
  error.message = `${location}: session is being written by ${who}; ${remedy}`;
  return error;
}

/** A database that a newer bonsai created or upgraded: refused rather than misread. */
export class StoreVersionError extends Error {
  constructor(
    readonly location: string,
    readonly found: number,
    readonly supported: number,
  ) {
    super(
      `${location}: the store's schema is version ${found}, this bonsai knows up to ${supported}; upgrade bonsai to use it`,
    );
    this.name = "StoreVersionError";
  }
}

/** A session id as a store key: what an id may hold so it round-trips through every location syntax. */
export function checkSessionId(id: string, where: string): string {
  if (id.length === 0) throw new Error(`${where}: empty session id after "#"; give the session's id, e.g. ${where}#<id>`);
  if (id.length > 200) throw new Error(`${where}: session id longer than 200 characters`);
  if (/[\u0000-\u001f\u007f]/.test(id)) throw new Error(`${where}: session id holds control characters`);
  return id;
}

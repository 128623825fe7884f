/**
 * The storage interface under SessionManager. A session is a sequence of lines, each one JSON
 * value without its newline: the header first, then one entry per line. Every store keeps those
 * lines exactly as they were written (a file byte for byte, a database as text rows in order), so
 * a session moves between stores without a single character changing.
 *
 * Three stores implement it: the JSONL file (the default), SQLite (one database file, many
 * sessions) and PostgreSQL (many processes on many machines). Each keeps one writer per session:
 * a lock file, a lease row, an advisory lock held by the writer's connection.
 *
 * Durability contract (the README's "Stores" section says the same):
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

export type StoreKind = "file" | "sqlite" | "postgres";

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
  /** Replaces every line at once: a reader sees the old lines or the new ones, never a mix. */
  rewrite(lines: readonly string[]): void;
  /**
   * Keeps the session as it is now under a new name beside it (before a migration or a lossy
   * rewrite): `<file>.bak-<time>` for files, session `<id>.bak-<time>` in a database. Ordered
   * with the writes around it. Returns the backup's location.
   */
  backup(): string;
  /**
   * The session's archive of pruned tool output, in a database (a session file keeps it in a
   * sidecar file instead; see src/ops/prune.ts). Undefined for files.
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

/** A session as opened: what the store held once the lease was taken, and the writer. */
export interface OpenedSession {
  /** undefined when the session does not exist yet (its first append creates it) */
  loaded: LoadedSession | undefined;
  /** undefined when opened read-only */
  backend: SessionBackend | undefined;
}

export interface OpenSessionOptions {
  /** read without taking the writer lease */
  readOnly?: boolean;
  /** make every write durable before it returns (fsync, synchronous=FULL); slower */
  fsyncEachAppend?: boolean;
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

/**
 * How a SessionManager comes to be: read a file or a database session under its writer lock,
 * migrate an older format (a backup first), or start a new session. Each way ends in the same
 * SessionParts, which the manager's constructor takes as they are.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { LocationError, parseLocation } from "../storage/location.js";
import { READ_ENTRIES, readIntoIndex } from "../storage/reads.js";
import { storeOf } from "../storage/stores.js";
import type { OpenedSession, OpenSessionOptions, SessionBackend, Store, StoreLocation } from "../storage/types.js";
import { generateSessionId } from "../format/ids.js";
import { toJsonLines } from "../format/lines.js";
import type { BodyLoading, LoadedIndex, LoadIssue } from "../storage/load.js";
import { migrateSessionEntries, sessionVersion } from "../format/migrate.js";
import type { AppendOptions } from "../storage/file-writer.js";
import { TreeIndex } from "./tree.js";
import { rewriteAfterBackup } from "../storage/backup.js";
import { CURRENT_SESSION_VERSION, type FileEntry, type SessionEntry, type SessionHeader } from "../format/entry-types.js";

export interface OpenOptions extends AppendOptions {
  /** read without taking the writer lock; every write then throws */
  readOnly?: boolean;
  /** fail (SessionFileError NOT_FOUND) rather than start a new session where there is none */
  mustExist?: boolean;
  /** hears every skipped or suspicious line and every path problem */
  onWarning?: (message: string) => void;
  /**
   * A v1/v2 session opened for writing is migrated in memory, and on disk (a backup first) only
   * before its first write, so a program that only reads leaves it as it was (the default);
   * `true` writes the migration at once, `false` keeps the old format and refuses writes until
   * persistMigration().
   */
  migrate?: boolean;
  /** hears that a v1/v2 file was migrated: in memory (no `backupPath`), and again when written to the store (`backupPath` set) */
  onMigrate?: (migration: { fromVersion: number; backupPath?: string }) => void;
  /**
   * How message bodies are loaded (default "checked"): message lines are checked to be
   * well-formed JSON at open but parsed only when used (the file stays open until close()), so
   * opening costs little more than reading the bytes; a message with wrong fields, found when
   * first read, makes the session read the file again as "parsed" (that line skipped and
   * reported). "parsed" parses and validates every line at open (a bad message is skipped and
   * reported there); "trusted" skips the JSON check as well; "eager" keeps every parsed entry in
   * memory. See BodyLoading. Database sessions are always read eagerly.
   */
  bodies?: BodyLoading;
}

/** Everything a SessionManager starts from. */
export interface SessionParts {
  /** a file path or a store location (database password left out); undefined in memory */
  location: string | undefined;
  /** the same as its store reads it, to reach the store's archive through (storeOf); undefined in memory */
  at?: StoreLocation;
  header: SessionHeader;
  entries: SessionEntry[] | TreeIndex;
  /** false until the first append writes the header */
  headerWritten: boolean;
  issues?: LoadIssue[];
  /** the writer; undefined in memory and when read-only */
  backend?: SessionBackend;
  /** the store still holds this older format: writes are refused (migrate: false) or write the migration first */
  unmigratedVersion?: number;
  /** with unmigratedVersion: the first write writes the migration (a backup first), then goes ahead */
  migrateOnFirstWrite?: boolean;
}

/** Where bonsai keeps sessions: `$BONSAI_DIR` or `~/.bonsai`, then `sessions/--<cwd>--/`. */
export function defaultSessionDir(cwd: string): string {
  const root = process.env.BONSAI_DIR ?? join(homedir(), ".bonsai");
  const encoded = `--${cwd.replace(/^[/\\]/, "").replace(/[/\\:]/g, "-")}--`;
  return join(root, "sessions", encoded);
}

export function newHeader(cwd: string): SessionHeader {
  const now = Date.now();
  return {
    type: "session",
    version: CURRENT_SESSION_VERSION,
    id: generateSessionId(now),
    timestamp: new Date(now).toISOString(),
    cwd,
  };
}

/** How OpenOptions open a store's session: read-only, a session must be there already. */
const storeOptions = (options: OpenOptions): OpenSessionOptions => ({
  readOnly: options.readOnly,
  fsyncEachAppend: options.fsyncEachAppend,
  mustExist: options.mustExist || options.readOnly,
});

/** A session file, or a new session at that path when there is no file (or an empty one). */
export function openFileParts(path: string, options: OpenOptions): SessionParts {
  const where: StoreLocation = { kind: "file", path };
  const read = readIntoIndex(new TreeIndex(), options.bodies ?? "checked");
  return openedParts(where, storeOf(where).openSync(where, read, storeOptions(options)), options);
}

/** A session at any location: a file fills the index as it reads, a database session goes into it whole. */
export async function openLocationParts(location: string, options: OpenOptions): Promise<SessionParts> {
  const where = parseLocation(location);
  const read = readIntoIndex(new TreeIndex(), options.bodies ?? "checked");
  return openedParts(where, await storeOf(where).open(where, read, storeOptions(options)), options);
}

function openedParts(where: StoreLocation, opened: OpenedSession<LoadedIndex<TreeIndex>>, options: OpenOptions): SessionParts {
  const store = storeOf(where);
  const name = store.sessionName(where);
  const { loaded, backend } = opened;
  if (!loaded) {
    // mustExist has refused a missing session: this is a new one, under the lease, with the location's id if it gives one
    const header = newHeader(process.cwd());
    header.id = store.sessionIdOf(where) ?? header.id;
    return { location: name, at: where, header, entries: [], headerWritten: false, backend };
  }
  try {
    for (const issue of loaded.issues) options.onWarning?.(`${name}:${issue.line}: ${issue.message}`);
    const header = loaded.header;
    let entries: SessionEntry[] | TreeIndex = loaded.index;
    let unmigratedVersion: number | undefined;
    if (loaded.unmigrated) {
      // older formats were read in full and left out of the index, to be migrated first
      const fileEntries: FileEntry[] = [header, ...loaded.unmigrated];
      const fromVersion = sessionVersion([header]);
      unmigratedVersion = settleMigration(migrateSessionEntries(fileEntries), fromVersion, fileEntries, backend, options);
      entries = fileEntries.slice(1) as SessionEntry[];
    }
    const migrateOnFirstWrite = unmigratedVersion !== undefined && options.migrate === undefined;
    return { location: name, at: where, header, entries, headerWritten: true, issues: loaded.issues, backend, unmigratedVersion, migrateOnFirstWrite };
  } catch (error) {
    loaded.index.close();
    backend?.close();
    throw error;
  }
}

/** Where a new session for `cwd` goes in the store `where` names, and its header. */
function newSession(where: StoreLocation, cwd: string): { store: Store; header: SessionHeader; target: StoreLocation } {
  const store = storeOf(where);
  const header = newHeader(cwd);
  header.id = store.sessionIdOf(where) ?? header.id;
  return { store, header, target: store.newSessionAt(where, header) };
}

function newParts(store: Store, target: StoreLocation, header: SessionHeader, backend: SessionBackend | undefined): SessionParts {
  return { location: store.sessionName(target), at: target, header, entries: [], headerWritten: false, backend };
}

const alreadyThere = (store: Store, target: StoreLocation) =>
  new LocationError(store.formatLocation(target), "a session with this id already exists; open it with SessionManager.openUrl");

/** A new session file for `cwd` in `dir`, named `<time>_<id>.jsonl`. */
export function createFileParts(cwd: string, dir: string, options: AppendOptions): SessionParts {
  const { store, header, target } = newSession({ kind: "file", path: dir }, cwd);
  const { loaded, backend } = store.openSync(target, READ_ENTRIES, { fsyncEachAppend: options.fsyncEachAppend });
  if (loaded) {
    backend?.close();
    throw alreadyThere(store, target);
  }
  return newParts(store, target, header, backend);
}

/** A new session in a store: a directory, or a database (under the location's #ID or a fresh id). */
export async function createInStoreParts(location: string, cwd: string, options: AppendOptions): Promise<SessionParts> {
  const { store, header, target } = newSession(parseLocation(location), cwd);
  const { loaded, backend } = await store.open(target, READ_ENTRIES, { fsyncEachAppend: options.fsyncEachAppend });
  if (loaded) {
    await backend?.close();
    throw alreadyThere(store, target);
  }
  return newParts(store, target, header, backend);
}

/**
 * After an older format was migrated in memory: writes the migration (a backup first) at once when
 * the session is open for writing with migrate: true. Returns the version still in the store
 * otherwise: written before the first write by default, refused writes with migrate: false.
 */
function settleMigration(
  migrated: boolean,
  fromVersion: number,
  fileEntries: FileEntry[],
  backend: SessionBackend | undefined,
  options: OpenOptions,
): number | undefined {
  if (!migrated) return undefined;
  if (backend && options.migrate === true) {
    const backupPath = rewriteAfterBackup(backend, toJsonLines(fileEntries)).backup;
    options.onMigrate?.({ fromVersion, backupPath });
    return undefined;
  }
  options.onMigrate?.({ fromVersion });
  return backend ? fromVersion : undefined;
}

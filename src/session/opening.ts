/**
 * How a SessionManager comes to be: read a file or a database session under its writer lock,
 * migrate an older format (a backup first), or start a new session. Each way ends in the same
 * SessionParts, which the manager's constructor takes as they are.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { FileBackend, sessionFileName } from "../storage/file.js";
import { formatLocation, LocationError, parseLocation, withSessionId } from "../storage/location.js";
import { openSessionAt } from "../storage/open.js";
import type { SessionBackend, StoreKind } from "../storage/types.js";
import { generateSessionId } from "../format/ids.js";
import { type BodyLoading, type LoadedIndex, type LoadIssue, loadSessionIndex, SessionFileError } from "../storage/load.js";
import { migrateSessionEntries, sessionVersion } from "../format/migrate.js";
import { type AppendOptions, SessionFileWriter } from "../storage/file-writer.js";
import { TreeIndex } from "./tree.js";
import { CURRENT_SESSION_VERSION, type FileEntry, type SessionEntry, type SessionHeader } from "../format/entry-types.js";

export interface OpenOptions extends AppendOptions {
  /** read without taking the writer lock; every write then throws */
  readOnly?: boolean;
  /** fail (SessionFileError NOT_FOUND) rather than start a new session where there is none */
  mustExist?: boolean;
  /** hears every skipped or suspicious line and every path problem */
  onWarning?: (message: string) => void;
  /** migrate a v1/v2 file on disk when opened for writing (default true); a backup is kept */
  migrate?: boolean;
  /** hears that a v1/v2 file was migrated: in memory, and on disk when `backupPath` is set */
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
  kind?: StoreKind;
  header: SessionHeader;
  entries: SessionEntry[] | TreeIndex;
  /** false until the first append writes the header */
  headerWritten: boolean;
  issues?: LoadIssue[];
  /** the writer; undefined in memory and when read-only */
  backend?: SessionBackend;
  /** the store still holds this older format (opened with migrate: false): writes are refused */
  unmigratedVersion?: number;
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

/** Each value as one JSON line, without its newline: what a store appends or rewrites. */
export const toLines = (values: readonly unknown[]): string[] => values.map((v) => JSON.stringify(v));

/** A session file, or a new session at that path when there is no file (or an empty one). */
export function openFileParts(path: string, options: OpenOptions): SessionParts {
  const file = resolve(path);
  const fresh = (backend: FileBackend): SessionParts => ({
    location: file,
    header: newHeader(process.cwd()),
    entries: [],
    headerWritten: false,
    backend,
  });
  if (!existsSync(file)) {
    if (options.readOnly || options.mustExist) throw new SessionFileError("NOT_FOUND", file, "no such file");
    return fresh(new FileBackend(new SessionFileWriter(file, { ...options, endsWithNewline: true })));
  }
  // Take the lock before reading, so no other writer changes the file between read and append.
  const backend = options.readOnly ? undefined : new FileBackend(new SessionFileWriter(file, { ...options, lock: true }));
  let loaded: LoadedIndex<TreeIndex> | undefined;
  try {
    try {
      loaded = loadSessionIndex(file, options.bodies ?? "checked", new TreeIndex());
    } catch (error) {
      // An empty file holds nothing to lose: start a fresh session in it.
      if (error instanceof SessionFileError && error.code === "EMPTY" && backend) return fresh(backend);
      throw error;
    }
    for (const issue of loaded.issues) options.onWarning?.(`${file}:${issue.line}: ${issue.message}`);
    const header = loaded.header;
    let entries: SessionEntry[] | TreeIndex = loaded.index;
    let unmigratedVersion: number | undefined;
    if (backend && !loaded.endsWithNewline) backend.markUnterminated();
    if (loaded.unmigrated) {
      // older formats were read in full and left out of the index, to be migrated first
      const fileEntries: FileEntry[] = [header, ...loaded.unmigrated];
      const fromVersion = sessionVersion([header]);
      unmigratedVersion = settleMigration(migrateSessionEntries(fileEntries), fromVersion, fileEntries, backend, options);
      entries = fileEntries.slice(1) as SessionEntry[];
    }
    return { location: file, header, entries, headerWritten: true, issues: loaded.issues, backend, unmigratedVersion };
  } catch (error) {
    loaded?.index.close();
    backend?.close();
    throw error;
  }
}

/** A new session file for `cwd` in `dir`, named `<time>_<id>.jsonl`. */
export function createFileParts(cwd: string, dir: string, options: AppendOptions): SessionParts {
  const header = newHeader(cwd);
  const file = join(resolve(dir), sessionFileName(header));
  const backend = new FileBackend(new SessionFileWriter(file, { ...options, endsWithNewline: true }));
  return { location: file, header, entries: [], headerWritten: false, backend };
}

/** A session at any location; a database session is read whole (it is a set of rows, not a file to seek in). */
export async function openLocationParts(location: string, options: OpenOptions): Promise<SessionParts> {
  const where = parseLocation(location);
  if (where.kind === "file") return openFileParts(where.path, options);
  const name = formatLocation(where);
  const { loaded, backend } = await openSessionAt(where, { readOnly: options.readOnly, fsyncEachAppend: options.fsyncEachAppend });
  if (!loaded) {
    if (!backend || options.mustExist) {
      await backend?.close();
      throw new SessionFileError("NOT_FOUND", name, "no such session");
    }
    // a new session takes the id it is stored under
    const header = { ...newHeader(process.cwd()), id: where.sessionId! };
    return { location: name, kind: where.kind, header, entries: [], headerWritten: false, backend };
  }
  try {
    for (const issue of loaded.issues) options.onWarning?.(`${name}:${issue.line}: ${issue.message}`);
    const fileEntries = loaded.fileEntries;
    const fromVersion = sessionVersion(fileEntries);
    const migrated = fromVersion < CURRENT_SESSION_VERSION && migrateSessionEntries(fileEntries);
    const unmigratedVersion = settleMigration(migrated, fromVersion, fileEntries, backend, options);
    const [header, ...entries] = fileEntries as [SessionHeader, ...SessionEntry[]];
    return { location: name, kind: where.kind, header, entries, headerWritten: true, issues: loaded.issues, backend, unmigratedVersion };
  } catch (error) {
    backend?.close();
    throw error;
  }
}

/** A new session in a store: a directory, or a database (under the location's #ID or a fresh id). */
export async function createInStoreParts(store: string, cwd: string, options: AppendOptions): Promise<SessionParts> {
  const where = parseLocation(store);
  if (where.kind === "file") return createFileParts(cwd, where.path, options);
  const header = newHeader(cwd);
  if (where.sessionId !== undefined) header.id = where.sessionId;
  const target = withSessionId(where, header.id);
  const { loaded, backend } = await openSessionAt(target, options);
  if (loaded) {
    await backend?.close();
    throw new LocationError(formatLocation(target), "a session with this id already exists; open it with SessionManager.openUrl");
  }
  return { location: formatLocation(target), kind: where.kind, header, entries: [], headerWritten: false, backend };
}

/**
 * After an older format was migrated in memory: writes the migration (a backup first) when the
 * session is open for writing and migration is allowed. Returns the version still in the store
 * when it keeps the old format for now (migrate: false), which blocks writes until persistMigration().
 */
function settleMigration(
  migrated: boolean,
  fromVersion: number,
  fileEntries: FileEntry[],
  backend: SessionBackend | undefined,
  options: OpenOptions,
): number | undefined {
  if (!migrated) return undefined;
  if (backend && options.migrate !== false) {
    const backupPath = backend.backup();
    backend.rewrite(toLines(fileEntries));
    options.onMigrate?.({ fromVersion, backupPath });
    return undefined;
  }
  options.onMigrate?.({ fromVersion });
  return backend ? fromVersion : undefined;
}

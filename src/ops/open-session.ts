/**
 * Opening the session an operation names: a file path, or a session in a database store
 * (`sqlite:PATH#ID`, `postgres://…#ID`). A file must be an existing regular file, and a database
 * session must exist as well: an operation never starts a new session because of a typo. Every
 * operation also takes a SessionManager its caller already holds (SessionTarget); that one it
 * uses as it is and leaves open.
 */
import { statSync } from "node:fs";
import { type OpenOptions, SessionManager } from "../session/manager.js";
import { SessionFileError } from "../storage/load.js";
import { formatLocation, parseLocation, sessionIdOf, storeLocationOf, withSessionId } from "../storage/location.js";
import { listSessionsAt, readLinesAt } from "../storage/open.js";
import { CliError } from "../util/cli-error.js";

/** A session to work on: its location, or a SessionManager the caller opened (and closes). */
export type SessionTarget = string | SessionManager;

/** Hears what does not stop an operation: skipped lines, an upgraded format, a failed short summary. */
export type WarningListener = (message: string) => void;

export async function openSession(location: string, options: OpenOptions = {}): Promise<SessionManager> {
  try {
    return await SessionManager.openUrl(location, { ...options, mustExist: true });
  } catch (error) {
    const completed = error instanceof SessionFileError && error.code === "NOT_FOUND" ? await completeSessionId(location) : undefined;
    if (completed === undefined) throw error;
    return SessionManager.openUrl(completed, { ...options, mustExist: true });
  }
}

/**
 * The one session id in `ids` that starts with `prefix`, as `bonsai tree` and `ls` show ids
 * shortened; undefined when none does; a CliError naming the candidates when several do.
 */
export function sessionIdForPrefix(ids: readonly string[], prefix: string, where: string): string | undefined {
  const matches = ids.filter((id) => id.startsWith(prefix));
  if (matches.length <= 1) return matches[0];
  const shown = matches.slice(0, 5).join(", ");
  const more = matches.length > 5 ? ` and ${matches.length - 5} more` : "";
  throw new CliError(`${where}: ${matches.length} sessions have ids starting with "${prefix}" (${shown}${more}); give more of the id`);
}

/** A database location whose `#ID` is the start of exactly one session's id, completed; otherwise undefined. */
async function completeSessionId(text: string): Promise<string | undefined> {
  const location = parseLocation(text);
  const prefix = sessionIdOf(location);
  if (prefix === undefined) return undefined;
  const sessions = await listSessionsAt(storeLocationOf(location));
  const id = sessionIdForPrefix(
    sessions.map((s) => s.id),
    prefix,
    formatLocation(location),
  );
  return id === undefined ? undefined : formatLocation(withSessionId(location, id));
}

/** Opens without the writer lock; skipped lines and path problems go to `onWarning`. */
export function openForReading(location: string, onWarning?: WarningListener): Promise<SessionManager> {
  return openSession(location, { readOnly: true, ...(onWarning ? { onWarning } : {}) });
}

/** How an operation names the session in its report: its location, or "(in memory)". */
export function sessionName(session: SessionManager, location?: string): string {
  return session.getLocation() ?? location ?? "(in memory)";
}

/** A session an operation opened (`owned`: it closes it) or was handed (the caller closes it). */
export interface OpenedSession {
  session: SessionManager;
  owned: boolean;
  /** how reports name the session: sessionName() */
  file: string;
}

export interface WritableSession extends OpenedSession {
  /** set when the store is in an older format: migrated in memory only, until persistMigration() */
  fromVersion?: number;
}

/**
 * Opens a session for writing without touching it: an older format is migrated in memory only,
 * so an operation that ends up writing nothing (cancelled, nothing to do) leaves it as it was.
 */
export async function openForWriting(target: SessionTarget, onWarning?: WarningListener): Promise<WritableSession> {
  if (typeof target !== "string") return { session: target, file: sessionName(target), owned: false };
  let fromVersion: number | undefined;
  const session = await openSession(target, {
    ...(onWarning ? { onWarning } : {}),
    migrate: false,
    onMigrate: (migration) => {
      fromVersion = migration.fromVersion;
    },
  });
  return { session, file: sessionName(session, target), owned: true, ...(fromVersion !== undefined ? { fromVersion } : {}) };
}

/**
 * Writes an in-memory migration to the store (the manager keeps a backup) right before the first
 * write. A SessionManager passed in may hold one too; its old version is not known here.
 */
export function persistMigration(target: WritableSession, onWarning?: WarningListener): void {
  const backup = target.session.persistMigration();
  if (backup === undefined) return;
  const from = target.fromVersion !== undefined ? `from format v${target.fromVersion} ` : "";
  onWarning?.(`${target.file}: upgraded ${from}to v3 to record the change; the original is at ${backup}`);
  delete target.fromVersion;
}

/**
 * Opens for writing but refuses older formats: their ids are made up on each read, so an id the
 * user typed now means nothing. `purpose` ends the refusal, e.g. "to label".
 */
export async function openWithStableIds(target: SessionTarget, options: { purpose?: string; onWarning?: WarningListener } = {}): Promise<WritableSession> {
  const opened = await openForWriting(target, options.onWarning);
  if (opened.fromVersion === undefined || typeof target !== "string") return opened;
  await opened.session.close();
  const { purpose } = options;
  throw new CliError(
    `${opened.file}: format v${opened.fromVersion} has no stable entry ids${purpose ? ` ${purpose}` : ""}; run \`bonsai migrate ${target}\` first`,
  );
}

/** Runs `work` on the target and closes the session afterwards, unless the caller owns it. */
export async function withSession<T>(opened: OpenedSession, work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } finally {
    if (opened.owned) await opened.session.close();
  }
}

/** Opens a target for reading: a location read-only, a SessionManager as it is. */
export async function readTarget(target: SessionTarget, onWarning?: WarningListener): Promise<OpenedSession> {
  if (typeof target !== "string") return { session: target, owned: false, file: sessionName(target) };
  const session = await openForReading(target, onWarning);
  return { session, owned: true, file: sessionName(session, target) };
}

/** Bytes the session takes: the file's size, or its stored lines and their newlines in UTF-8. */
export async function storedSize(session: SessionManager): Promise<number> {
  const file = session.getSessionFile();
  if (file) return statSync(file).size;
  const location = session.getLocation();
  const stored = location ? await readLinesAt(location) : undefined;
  return (stored?.lines ?? []).reduce((n, line) => n + Buffer.byteLength(line, "utf8") + 1, 0);
}

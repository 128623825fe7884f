/**
 * Opening the session a command names: a file path, or a session in a database store
 * (`sqlite:PATH#ID`, `postgres://…#ID`). A file must be an existing regular file, and a database
 * session must exist as well: a command never starts a new session because of a typo.
 */
import { statSync } from "node:fs";
import { readLinesAt } from "../storage/open.js";
import { parseLocation } from "../storage/location.js";
import { type OpenOptions, SessionManager } from "../session/manager.js";
import { CliError, requireSessionFile, warn } from "./output.js";

export async function openSession(location: string, options: OpenOptions = {}): Promise<SessionManager> {
  const where = parseLocation(location);
  if (where.kind === "file") return SessionManager.open(requireSessionFile(where.path), options);
  return SessionManager.openUrl(location, { ...options, mustExist: true });
}

/** Opens without the writer lock; skipped lines and path problems become warnings. */
export function openForReading(location: string): Promise<SessionManager> {
  return openSession(location, { readOnly: true, onWarning: warn });
}

export interface WritableSession {
  session: SessionManager;
  file: string;
  /** set when the file is in an older format: migrated in memory only, until persistMigration() */
  fromVersion?: number;
}

/**
 * Opens a session for writing without touching the file: an older format is migrated in memory
 * only, so a command that ends up writing nothing (cancelled, nothing to do) leaves it as it was.
 */
export async function openForWriting(path: string): Promise<WritableSession> {
  let fromVersion: number | undefined;
  const session = await openSession(path, {
    onWarning: warn,
    migrate: false,
    onMigrate: (migration) => {
      fromVersion = migration.fromVersion;
    },
  });
  return { session, file: session.getLocation() ?? path, ...(fromVersion !== undefined ? { fromVersion } : {}) };
}

/** Writes the in-memory migration to disk (the manager keeps a backup) right before the first write. */
export function persistMigration(target: WritableSession): void {
  if (target.fromVersion === undefined) return;
  const backup = target.session.persistMigration();
  warn(`${target.file}: upgraded from format v${target.fromVersion} to v3 to record the change; the original is at ${backup}`);
  delete target.fromVersion;
}

/**
 * Opens for writing but refuses older formats: their ids are made up on each read, so an id the
 * user typed now means nothing. `purpose` ends the refusal, e.g. "to label".
 */
export async function openWithStableIds(path: string, purpose?: string): Promise<SessionManager> {
  const { session, file, fromVersion } = await openForWriting(path);
  if (fromVersion !== undefined) {
    await session.close();
    throw new CliError(
      `${file}: format v${fromVersion} has no stable entry ids${purpose ? ` ${purpose}` : ""}; run \`bonsai migrate ${path}\` first`,
    );
  }
  return session;
}

/** Bytes the session takes: the file's size, or its stored lines and their newlines in UTF-8. */
export async function storedSize(session: SessionManager): Promise<number> {
  const file = session.getSessionFile();
  if (file) return statSync(file).size;
  const location = session.getLocation();
  const stored = location ? await readLinesAt(location) : undefined;
  return (stored?.lines ?? []).reduce((n, line) => n + Buffer.byteLength(line, "utf8") + 1, 0);
}

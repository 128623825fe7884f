/**
 * Opening the session a command names: a file path, or a session in a database store
 * (`sqlite:PATH#ID`, `postgres://…#ID`). A file must be an existing regular file, and a database
 * session must exist as well: a command never starts a new session because of a typo.
 */
import { statSync } from "node:fs";
import { readLinesAt } from "../storage/open.js";
import { parseLocation } from "../storage/location.js";
import { type OpenOptions, SessionManager } from "../session/manager.js";
import { requireSessionFile, warn } from "./output.js";

export async function openSession(location: string, options: OpenOptions = {}): Promise<SessionManager> {
  const where = parseLocation(location);
  if (where.kind === "file") return SessionManager.open(requireSessionFile(where.path), options);
  return SessionManager.openUrl(location, { ...options, mustExist: true });
}

/** Opens without the writer lock; skipped lines and path problems become warnings. */
export function openForReading(location: string): Promise<SessionManager> {
  return openSession(location, { readOnly: true, onWarning: warn });
}

/** Bytes the session takes: the file's size, or its stored lines and their newlines in UTF-8. */
export async function storedSize(session: SessionManager): Promise<number> {
  const file = session.getSessionFile();
  if (file) return statSync(file).size;
  const location = session.getLocation();
  const stored = location ? await readLinesAt(location) : undefined;
  return (stored?.lines ?? []).reduce((n, line) => n + Buffer.byteLength(line, "utf8") + 1, 0);
}

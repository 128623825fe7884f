/**
 * What the two database stores (sqlite.ts, postgres.ts) share: a location's `#SESSION_ID`, the
 * password left out of every location they print, a session that must exist, and the archive of
 * pruned tool output kept in a table and written through the session's writer.
 */
import { SessionFileError } from "./load.js";
import { checkSessionId, LocationError, type SessionBackend, type StoreArchive } from "./types.js";

/** Leaves the password out of a PostgreSQL URL (PGPASSWORD or ~/.pgpass supply it again). */
export function redactPassword(connectionString: string): string {
  return connectionString.replace(/^([a-z0-9+.-]+:\/\/)([^@/?#]*)@/i, (_all, prefix: string, auth: string) => {
    const colon = auth.indexOf(":");
    return `${prefix}${colon === -1 ? auth : auth.slice(0, colon)}@`;
  });
}

/** Splits off the session id after the last `#`, which may be percent-encoded. Errors name the location without its password. */
export function splitFragment(text: string): { base: string; id?: string } {
  const hash = text.lastIndexOf("#");
  if (hash === -1) return { base: text };
  const base = text.slice(0, hash);
  let id: string;
  try {
    id = decodeURIComponent(text.slice(hash + 1));
  } catch {
    throw new LocationError(redactPassword(text), "the session id after # is not valid percent-encoding");
  }
  return { base, id: checkSessionId(id, redactPassword(base)) };
}

/** `#ID` of a location that names one session; nothing for the whole store. */
export const fragment = (sessionId: string | undefined): string => (sessionId === undefined ? "" : `#${encodeURIComponent(sessionId)}`);

/** A database location must name a session for anything but listing; `formatted` is the location as printed. */
export function requireId(location: { sessionId?: string }, formatted: string): string {
  if (location.sessionId === undefined) {
    throw new LocationError(formatted, `which session? add #SESSION_ID (bonsai ls ${formatted} lists them)`);
  }
  return location.sessionId;
}

/** What an open with mustExist throws for a session the database does not hold. */
export const missingSession = (name: string) => new SessionFileError("NOT_FOUND", name, "no such session");

/** A database session's archive (`where`), through the writer that holds the session's lease. */
export function tableArchive(where: string, session: string, backend: SessionBackend): StoreArchive {
  const archive = backend.archive;
  if (!archive) throw new Error(`${session}: this store keeps no archive of pruned tool output; nothing copied`);
  return {
    location: where,
    append: (lines) => archive.append(lines),
    replace: (lines) => archive.replace(lines),
    lines: () => archive.lines(),
    snapshot: () => {
      const rows = archive.lines();
      return { lines: rows.length, rows };
    },
    restore: (snapshot) => archive.replace(snapshot.rows ?? []),
  };
}

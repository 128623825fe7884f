/**
 * What the two database stores (sqlite.ts, postgres.ts) share: a location's `#SESSION_ID`, the
 * password left out of every location they print, a session that must exist, the location
 * methods of a store whose sessions are rows keyed by id (databaseStore), and the archive of
 * pruned tool output kept in a table and written through the session's writer.
 */
import { SessionFileError } from "./load.js";
import { checkSessionId, LocationError, type LocationOf, type SessionBackend, type Store, type StoreArchive } from "./types.js";

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
    // rows are whole lines: a table has no torn tail
    stored: () => ({ lines: archive.lines() }),
    snapshot: () => {
      const rows = archive.lines();
      return { lines: rows.length, rows };
    },
    restore: (snapshot) => archive.replace(snapshot.rows ?? []),
  };
}

/** The kinds of store whose sessions are rows of one database, each named by `#SESSION_ID`. */
type DatabaseKind = "sqlite" | "postgres";

/** The Store methods every database store has alike: its locations, and its archive table. */
export type DatabaseStoreParts<K extends DatabaseKind> = Pick<
  Store<K>,
  | "formatLocation"
  | "sessionName"
  | "sessionKey"
  | "sessionIdOf"
  | "withSessionId"
  | "newSessionAt"
  | "copyTarget"
  | "fileNameOf"
  | "sameSession"
  | "archiveLocation"
  | "archive"
>;

/**
 * A database store's location methods and archive, from how it prints a location (`format`,
 * password left out) and the table its archives live in. A session is the row a location's id
 * names: a store location without one takes the new session's id, a location prints the same
 * for the same session, and there is no file name to keep on a copy (docs/ARCHITECTURE.md,
 * storage: code above a store never tests its kind, so both databases answer alike).
 */
export function databaseStore<K extends DatabaseKind>(format: (location: LocationOf<K>) => string, archiveTable: string): DatabaseStoreParts<K> {
  const key = (location: LocationOf<K>) => requireId(location, format(location));
  const named = (location: LocationOf<K>, sessionId: string): LocationOf<K> => ({ ...location, sessionId });
  const archiveLocation = (location: LocationOf<K>) => `${format(location)} (table ${archiveTable})`;
  return {
    formatLocation: format,
    sessionName: format,
    sessionKey: key,
    sessionIdOf: (location) => location.sessionId,
    withSessionId: named,
    newSessionAt: (store, header) => named(store, store.sessionId ?? header.id),
    copyTarget: (to, header) => (to.sessionId === undefined ? named(to, header.id) : to),
    fileNameOf: () => undefined,
    sameSession: (a, b) => format(a) === format(b),
    archiveLocation,
    archive: (location, backend) => tableArchive(archiveLocation(location), format(location), backend),
  };
}

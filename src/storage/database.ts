/**
 * What the two database stores (sqlite.ts, postgres.ts) share: a location's `#SESSION_ID`, the
 * password left out of every location they print, a session that must exist, the location
 * Store built from a driver whose sessions are rows keyed by id (databaseStore), and the archive of
 * pruned tool output kept in a table and written through the session's writer.
 */
import { checkStorableLines } from "./lines.js";
import { SessionFileError } from "./load.js";
import {
  checkSessionId,
  LocationError,
  type LocationOf,
  type OpenedSession,
  type OpenSessionOptions,
  type SessionBackend,
  type SessionRead,
  type Store,
  type StoreArchive,
} from "./types.js";

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

/**
 * What one database driver supplies (sqlite.ts, postgres.ts): how its locations are written and
 * read, and its sessions and archives, each addressed by the database location and the session's
 * key. Everything else a Store has, a database store has alike (databaseStore).
 */
export interface DatabaseDriver<K extends DatabaseKind> {
  kind: K;
  form: string;
  schemes: readonly string[];
  parseLocation: Store<K>["parseLocation"];
  /** the location as text, password left out */
  format(location: LocationOf<K>): string;
  /** the location with relative paths resolved (a database file's); none: locations have no paths */
  resolvedAgainst?: Store<K>["resolvedAgainst"];
  /** the table its archives of pruned output live in, for messages */
  archiveTable: string;
  open<T extends { endsWithNewline: boolean }>(location: LocationOf<K>, key: string, read: SessionRead<T>, options?: OpenSessionOptions): Promise<OpenedSession<T>>;
  /** a driver that can only open asynchronously throws LocationError */
  openSync<T extends { endsWithNewline: boolean }>(location: LocationOf<K>, key: string, read: SessionRead<T>, options?: OpenSessionOptions): OpenedSession<T>;
  list: Store<K>["list"];
  /** the session's lines as stored, or undefined when there is no such session */
  readLines(location: LocationOf<K>, key: string): Promise<string[] | undefined>;
  readArchive(location: LocationOf<K>, key: string): Promise<string[]>;
}

/**
 * A database store from its driver. A session is the row a location's id names: a store location
 * without one takes the new session's id, a location prints the same for the same session, and
 * there is no file name to keep on a copy (docs/ARCHITECTURE.md, storage: code above a store never
 * tests its kind, so both databases answer alike).
 */
export function databaseStore<K extends DatabaseKind>(driver: DatabaseDriver<K>): Store<K> {
  const { format } = driver;
  const key = (location: LocationOf<K>) => requireId(location, format(location));
  const named = (location: LocationOf<K>, sessionId: string): LocationOf<K> => ({ ...location, sessionId });
  const archiveLocation = (location: LocationOf<K>) => `${format(location)} (table ${driver.archiveTable})`;
  return {
    kind: driver.kind,
    form: driver.form,
    schemes: driver.schemes,
    parseLocation: driver.parseLocation,
    formatLocation: format,
    sessionName: format,
    sessionKey: key,
    sessionIdOf: (location) => location.sessionId,
    withSessionId: named,
    newSessionAt: (store, header) => named(store, store.sessionId ?? header.id),
    copyTarget: (to, header) => (to.sessionId === undefined ? named(to, header.id) : to),
    fileNameOf: () => undefined,
    sameSession: (a, b) => format(a) === format(b),
    namesStore: (location) => location.sessionId === undefined,
    resolvedAgainst: driver.resolvedAgainst ?? ((location) => location),
    open: (location, read, options) => driver.open(location, key(location), read, options),
    openSync: (location, read, options) => driver.openSync(location, key(location), read, options),
    list: driver.list,
    async readLines(location) {
      const lines = await driver.readLines(location, key(location));
      return lines && { lines };
    },
    checkLines: checkStorableLines,
    archiveLocation,
    readArchive: async (location) => ({ lines: await driver.readArchive(location, key(location)) }),
    archive: (location, backend) => tableArchive(archiveLocation(location), format(location), backend),
  };
}

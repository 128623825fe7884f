/**
 * The SQLite store (libsql, synchronous): one database file holding many sessions, each
 * `sqlite:PATH#SESSION_ID`. Split by concern: the database file and its schema
 * (sqlite-schema.ts), sessions and their writer (sqlite-sessions.ts), one writer's lease
 * (sqlite-leases.ts) and archives of pruned tool output (sqlite-archive.ts); this is its Store.
 */
import { resolve } from "node:path";
import { databaseStore, splitFragment } from "./database.js";
import { readSqliteArchive } from "./sqlite-archive.js";
import { sqliteLocation } from "./sqlite-schema.js";
import { listSqliteSessions, openSqliteSession, readSqliteLines } from "./sqlite-sessions.js";
import { LocationError, type LocationOf, type Store } from "./types.js";

export { openSqliteDatabase, SQLITE_SCHEMA_VERSION, sqliteDriverError } from "./sqlite-schema.js";
export { listSqliteSessions, openSqliteSession, readSqliteLines };

/** `sqlite:PATH#ID`, `sqlite://PATH#ID` or `sqlite3:…`; the id is optional (a whole database). */
function parseSqliteLocation(text: string, scheme = "sqlite"): LocationOf<"sqlite"> {
  const { base, id } = splitFragment(text);
  let path = base.slice(scheme.length + 1);
  if (path.startsWith("//")) path = path.slice(2);
  if (path === "") throw new LocationError(text, "no database path after sqlite:; write sqlite:PATH#SESSION_ID");
  return id === undefined ? { kind: "sqlite", path } : { kind: "sqlite", path, sessionId: id };
}

export const SQLITE_STORE: Store<"sqlite"> = databaseStore({
  kind: "sqlite",
  form: "sqlite:PATH#SESSION_ID",
  schemes: ["sqlite", "sqlite3"],
  parseLocation: parseSqliteLocation,
  format: (location) => sqliteLocation(location.path, location.sessionId),
  archiveTable: "pruned",
  resolvedAgainst: (location, cwd) => ({ ...location, path: resolve(cwd, location.path) }),
  open: async (location, key, read, options) => openSqliteSession(location.path, key, read, options),
  openSync: (location, key, read, options) => openSqliteSession(location.path, key, read, options),
  list: async (store) => listSqliteSessions(store.path),
  readLines: async (location, key) => readSqliteLines(location.path, key),
  readArchive: async (location, key) => readSqliteArchive(location.path, key),
});

/**
 * One entry point per operation for every store: open a session, list a store, read a session's
 * lines. Each goes to the location's store (stores.ts). File and SQLite sessions also open
 * synchronously; PostgreSQL only asynchronously.
 */
import { parseLocation, type StoreLocation } from "./location.js";
import { READ_ENTRIES } from "./reads.js";
import { storeOf } from "./stores.js";
import type { OpenedSession, OpenSessionOptions, SessionSummary, StoredLines } from "./types.js";

const asLocation = (location: string | StoreLocation): StoreLocation =>
  typeof location === "string" ? parseLocation(location) : location;

/** Opens a session in any store, reading every entry (see OpenedSession). */
export async function openSessionAt(location: string | StoreLocation, options: OpenSessionOptions = {}): Promise<OpenedSession> {
  const where = asLocation(location);
  return storeOf(where).open(where, READ_ENTRIES, options);
}

/** Opens a file or SQLite session without waiting; PostgreSQL needs openSessionAt. */
export function openSessionAtSync(location: string | StoreLocation, options: OpenSessionOptions = {}): OpenedSession {
  const where = asLocation(location);
  return storeOf(where).openSync(where, READ_ENTRIES, options);
}

/** The sessions a store holds (a directory of files, a SQLite file, a PostgreSQL database). */
export async function listSessionsAt(store: string | StoreLocation, options: { onWarning?: (message: string) => void } = {}): Promise<SessionSummary[]> {
  const where = asLocation(store);
  return storeOf(where).list(where, options.onWarning);
}

/** A session's lines exactly as stored; undefined when there is no such session. */
export async function readLinesAt(location: string | StoreLocation): Promise<StoredLines | undefined> {
  const where = asLocation(location);
  return storeOf(where).readLines(where);
}

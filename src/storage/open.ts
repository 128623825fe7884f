/**
 * One entry point per operation for every store: open a session, list a store, read a session's
 * lines. File and SQLite sessions also open synchronously; PostgreSQL only asynchronously.
 */
import { listFileSessions, openFileSession, readFileLines } from "./file.js";
import { formatLocation, LocationError, parseLocation, requireSessionId, type StoreLocation } from "./location.js";
import { listPostgresSessions, openPostgresSession, readPostgresLines } from "./postgres.js";
import { listSqliteSessions, openSqliteSession, readSqliteLines } from "./sqlite.js";
import type { OpenedSession, OpenSessionOptions, SessionSummary, StoredLines } from "./types.js";

const asLocation = (location: string | StoreLocation): StoreLocation =>
  typeof location === "string" ? parseLocation(location) : location;

/** Opens a session in any store (see OpenedSession). */
export async function openSessionAt(location: string | StoreLocation, options: OpenSessionOptions = {}): Promise<OpenedSession> {
  const where = asLocation(location);
  if (where.kind === "postgres") return openPostgresSession(where.connectionString, requireSessionId(where), options);
  return openSessionAtSync(where, options);
}

/** Opens a file or SQLite session without waiting; PostgreSQL needs openSessionAt. */
export function openSessionAtSync(location: string | StoreLocation, options: OpenSessionOptions = {}): OpenedSession {
  const where = asLocation(location);
  switch (where.kind) {
    case "file":
      return openFileSession(where.path, options);
    case "sqlite":
      return openSqliteSession(where.path, requireSessionId(where), options);
    case "postgres":
      throw new LocationError(
        formatLocation(where),
        "PostgreSQL sessions open asynchronously: use `await SessionManager.openUrl(location)`",
      );
  }
}

/** The sessions a store holds (a directory of files, a SQLite file, a PostgreSQL database). */
export async function listSessionsAt(store: string | StoreLocation): Promise<SessionSummary[]> {
  const where = asLocation(store);
  switch (where.kind) {
    case "file":
      return listFileSessions(where.path);
    case "sqlite":
      return listSqliteSessions(where.path);
    case "postgres":
      return listPostgresSessions(where.connectionString);
  }
}

/** A session's lines exactly as stored; undefined when there is no such session. */
export async function readLinesAt(location: string | StoreLocation): Promise<StoredLines | undefined> {
  const where = asLocation(location);
  switch (where.kind) {
    case "file":
      try {
        return readFileLines(where.path);
      } catch (error) {
        if ((error as { code?: string }).code === "NOT_FOUND") return undefined;
        throw error;
      }
    case "sqlite": {
      const lines = readSqliteLines(where.path, requireSessionId(where));
      return lines && { lines };
    }
    case "postgres": {
      const lines = await readPostgresLines(where.connectionString, requireSessionId(where));
      return lines && { lines };
    }
  }
}

/**
 * PostgreSQL store (pg): many processes on many machines share one database. Tables live in the
 * `bonsai` schema: `meta(version)`, `sessions` (what `bonsai ls` shows), `entries(session_id,
 * seq, line)` with each line stored as `text`, byte for byte (not jsonb, which would reorder keys
 * and drop whitespace), and `pruned` (archives of pruned tool output, postgres-archive.ts).
 *
 * One writer per session: the writer's own connection holds `pg_try_advisory_lock` on a 64-bit
 * key derived from the session id (postgres-writer.ts). A writer that crashes loses its
 * connection and with it the lock, so a lock is never stale.
 */
import { databaseStore, missingSession, redactPassword, splitFragment } from "./database.js";
import { readPostgresArchive } from "./postgres-archive.js";
import { connect, ensureSchema, postgresLocation, readLines, type SessionRow, storeName } from "./postgres-schema.js";
import { PostgresBackend } from "./postgres-writer.js";
import { LocationError, type OpenedSession, type LocationOf, type OpenSessionOptions, type SessionRead, type SessionSummary, type Store } from "./types.js";

export { lockKey, POSTGRES_SCHEMA_VERSION } from "./postgres-schema.js";

/** Every session in the store, most recently written first. */
export async function listPostgresSessions(connectionString: string): Promise<SessionSummary[]> {
  const client = await connect(connectionString);
  try {
    if (!(await ensureSchema(client, storeName(connectionString), false))) return [];
    const { rows } = await client.query<SessionRow>("SELECT * FROM bonsai.sessions ORDER BY updated DESC, id");
    return rows.map((row) => ({
      id: row.id,
      location: postgresLocation(connectionString, row.id),
      title: row.title,
      cwd: row.cwd,
      created: row.created,
      updated: row.updated.toISOString(),
      bytes: Number(row.bytes),
      entryCount: Number(row.entry_count),
    }));
  } finally {
    await client.end().catch(() => {});
  }
}

/** The lines of one session exactly as stored; undefined when there is no such session. */
export async function readPostgresLines(connectionString: string, id: string): Promise<string[] | undefined> {
  const client = await connect(connectionString);
  try {
    if (!(await ensureSchema(client, storeName(connectionString), false))) return undefined;
    return await readLines(client, id);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Opens one session: its own connection takes the advisory lock (unless read-only), then reads it. */
export async function openPostgresSession<T extends { endsWithNewline: boolean }>(
  connectionString: string,
  id: string,
  read: SessionRead<T>,
  options: OpenSessionOptions = {},
): Promise<OpenedSession<T>> {
  const location = postgresLocation(connectionString, id);
  if (options.readOnly) {
    const lines = await readPostgresLines(connectionString, id);
    if (lines === undefined && options.mustExist) throw missingSession(location);
    return { loaded: lines === undefined ? undefined : read.lines(lines, location), backend: undefined };
  }
  const backend = new PostgresBackend(connectionString, id);
  try {
    await backend.start();
    const loaded = await backend.load(read);
    if (loaded === undefined && options.mustExist) throw missingSession(location);
    return { loaded, backend };
  } catch (error) {
    await backend.close().catch(() => {});
    throw error;
  }
}

/** `postgres://…#ID` or `postgresql://…#ID`; the id is optional (a whole database). Errors never show the password. */
function parsePostgresLocation(text: string, scheme = "postgres"): LocationOf<"postgres"> {
  const { base, id } = splitFragment(text);
  let connectionString = base;
  if (connectionString === `${scheme}:`) connectionString = `${scheme}://`;
  if (!connectionString.startsWith(`${scheme}://`)) {
    throw new LocationError(redactPassword(text), `expected ${scheme}://[user@host:port/db]#SESSION_ID`);
  }
  try {
    // pg parses it again; this catches what it would choke on, with our own message
    if (connectionString.length > `${scheme}://`.length) new URL(connectionString);
  } catch {
    throw new LocationError(redactPassword(text), "not a valid PostgreSQL URL");
  }
  return id === undefined ? { kind: "postgres", connectionString } : { kind: "postgres", connectionString, sessionId: id };
}

const format = (location: LocationOf<"postgres">) => postgresLocation(location.connectionString, location.sessionId);

export const POSTGRES_STORE: Store<"postgres"> = databaseStore({
  kind: "postgres",
  form: "postgres://[user@host:port/db]#SESSION_ID",
  schemes: ["postgres", "postgresql"],
  parseLocation: parsePostgresLocation,
  format,
  archiveTable: "bonsai.pruned",
  open: async (location, key, read, options) => openPostgresSession(location.connectionString, key, read, options),
  openSync(location) {
    throw new LocationError(format(location), "PostgreSQL sessions open asynchronously: use `await SessionManager.openUrl(location)`");
  },
  list: async (store) => listPostgresSessions(store.connectionString),
  readLines: async (location, key) => readPostgresLines(location.connectionString, key),
  readArchive: async (location, key) => readPostgresArchive(location.connectionString, key),
});

/**
 * PostgreSQL store (pg): many processes on many machines share one database. Tables live in the
 * `bonsai` schema: `meta(version)`, `sessions` (what `bonsai ls` shows) and `entries(session_id,
 * seq, line)` with each line stored as `text`, byte for byte (not jsonb, which would reorder keys
 * and drop whitespace).
 *
 * One writer per session: the writer's own connection holds `pg_try_advisory_lock` on a 64-bit
 * key derived from the session id (postgres-writer.ts). A writer that crashes loses its
 * connection and with it the lock, so a lock is never stale.
 */
import { loadLines } from "./lines.js";
import { formatLocation } from "./location.js";
import { connect, ensureSchema, readLines, type SessionRow, storeName } from "./postgres-schema.js";
import { PostgresBackend } from "./postgres-writer.js";
import type { OpenedSession, OpenSessionOptions, SessionSummary } from "./types.js";

export { lockKey, POSTGRES_SCHEMA_VERSION } from "./postgres-schema.js";

/** Every session in the store, most recently written first. */
export async function listPostgresSessions(connectionString: string): Promise<SessionSummary[]> {
  const client = await connect(connectionString);
  try {
    if (!(await ensureSchema(client, storeName(connectionString), false))) return [];
    const { rows } = await client.query<SessionRow>("SELECT * FROM bonsai.sessions ORDER BY updated DESC, id");
    return rows.map((row) => ({
      id: row.id,
      location: formatLocation({ kind: "postgres", connectionString, sessionId: row.id }),
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
export async function openPostgresSession(
  connectionString: string,
  id: string,
  options: OpenSessionOptions = {},
): Promise<OpenedSession> {
  const location = formatLocation({ kind: "postgres", connectionString, sessionId: id });
  if (options.readOnly) {
    const lines = await readPostgresLines(connectionString, id);
    return { loaded: lines === undefined ? undefined : loadLines(lines, location), backend: undefined };
  }
  const backend = new PostgresBackend(connectionString, id);
  try {
    await backend.start();
    return { loaded: await backend.load(), backend };
  } catch (error) {
    await backend.close().catch(() => {});
    throw error;
  }
}

/**
 * The PostgreSQL store's connection, names and schema: tables in the `bonsai` schema, created on
 * first use and upgraded step by step under an advisory lock, and refused when a newer bonsai
 * wrote them.
 */
import { createHash } from "node:crypto";
import type pg from "pg";
import { fragment, redactPassword } from "./database.js";
import { StoreVersionError } from "./types.js";

/** Schema upgrades, in order: MIGRATIONS[v] takes the schema from version v to v + 1. Never edit a released step. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE bonsai.sessions (
     id text PRIMARY KEY,
     title text,
     cwd text,
     created text,
     updated timestamptz NOT NULL,
     bytes bigint NOT NULL DEFAULT 0,
     entry_count bigint NOT NULL DEFAULT 0
   );
   CREATE INDEX sessions_updated ON bonsai.sessions (updated);
   CREATE TABLE bonsai.entries (
     session_id text NOT NULL,
     seq bigint NOT NULL,
     line text NOT NULL,
     PRIMARY KEY (session_id, seq)
   );`,
  // 2: archives of pruned tool output, one line per record
  `CREATE TABLE bonsai.pruned (
     session_id text NOT NULL,
     seq bigint NOT NULL,
     line text NOT NULL,
     PRIMARY KEY (session_id, seq)
   );`,
];

export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** At most this many lines per INSERT (the writer also caps a batch's bytes). */
export const BATCH_LINES = 1000;

/** Key of the advisory lock that serializes schema creation and upgrades. */
const SCHEMA_LOCK: [number, number] = [0x626f6e73, 0x61690000];

export type Client = pg.Client;

let driver: typeof pg | undefined;

async function pgDriver(): Promise<typeof pg> {
  driver ??= (await import("pg")).default;
  return driver;
}

/** A PostgreSQL location as text, without its password, with `#ID` when it names a session. */
export const postgresLocation = (connectionString: string, sessionId?: string) => `${redactPassword(connectionString)}${fragment(sessionId)}`;

export const storeName = (connectionString: string) => postgresLocation(connectionString);

/** A connected client; connection settings missing from the URL come from PG* variables. */
export async function connect(connectionString: string, applicationName?: string): Promise<Client> {
  const { Client } = await pgDriver();
  const client = new Client({ connectionString, application_name: applicationName ?? "bonsai", connectionTimeoutMillis: 15_000 });
  try {
    await client.connect();
  } catch (error) {
    throw new Error(`${storeName(connectionString)}: cannot connect to PostgreSQL: ${(error as Error).message}`);
  }
  return client;
}

async function schemaVersion(client: Client): Promise<number | undefined> {
  const exists = await client.query("SELECT to_regclass('bonsai.meta') IS NOT NULL AS ok");
  if (!exists.rows[0].ok) return undefined;
  const row = await client.query("SELECT version FROM bonsai.meta WHERE id = 1");
  return row.rows[0]?.version ?? 0;
}

/** Creates or upgrades the schema (one process at a time); refuses a schema from a newer bonsai. */
export async function ensureSchema(client: Client, where: string, create: boolean): Promise<boolean> {
  const seen = await schemaVersion(client);
  if (seen !== undefined && seen > POSTGRES_SCHEMA_VERSION) throw new StoreVersionError(where, seen, POSTGRES_SCHEMA_VERSION);
  if (seen === POSTGRES_SCHEMA_VERSION) return true;
  if (!create) return seen !== undefined;
  // A session lock taken before BEGIN: the transaction then starts after the previous holder's
  // commit and sees its tables (a lock taken inside it could leave a stale catalog cache).
  await client.query("SELECT pg_advisory_lock($1, $2)", SCHEMA_LOCK);
  try {
    await client.query("BEGIN");
    let version = await schemaVersion(client);
    if (version === undefined) {
      await client.query("CREATE SCHEMA IF NOT EXISTS bonsai");
      await client.query("CREATE TABLE bonsai.meta (id int PRIMARY KEY CHECK (id = 1), version int NOT NULL)");
      await client.query("INSERT INTO bonsai.meta (id, version) VALUES (1, 0)");
      version = 0;
    }
    if (version > POSTGRES_SCHEMA_VERSION) throw new StoreVersionError(where, version, POSTGRES_SCHEMA_VERSION);
    for (let v = version; v < POSTGRES_SCHEMA_VERSION; v++) await client.query(MIGRATIONS[v]);
    await client.query("UPDATE bonsai.meta SET version = $1 WHERE id = 1", [POSTGRES_SCHEMA_VERSION]);
    await client.query("COMMIT");
    return true;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    await client.query("SELECT pg_advisory_unlock($1, $2)", SCHEMA_LOCK).catch(() => {});
  }
}

/** The session's advisory lock key: 64 bits of a hash, so two sessions practically never share one. */
export function lockKey(id: string): [number, number] {
  const hash = createHash("sha256").update(`bonsai-session:${id}`).digest();
  return [hash.readInt32BE(0), hash.readInt32BE(4)];
}

export interface SessionRow {
  id: string;
  title: string | null;
  cwd: string | null;
  created: string | null;
  updated: Date;
  bytes: string;
  entry_count: string;
}

export async function readLines(client: Client, id: string): Promise<string[] | undefined> {
  // one statement: a consistent snapshot even while the writer appends
  const result = await client.query({
    text: `SELECT e.line, s.id FROM bonsai.sessions s LEFT JOIN bonsai.entries e ON e.session_id = s.id
           WHERE s.id = $1 ORDER BY e.seq`,
    values: [id],
    rowMode: "array",
  });
  if (result.rows.length === 0) return undefined;
  return result.rows.filter((row) => row[0] !== null).map((row) => row[0] as string);
}


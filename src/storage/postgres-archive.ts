/**
 * PostgreSQL's archives of pruned tool output: rows of `bonsai.pruned`, keyed by session id and
 * ordered by seq, in the session's database. The session's writer runs these statements on its
 * own connection, in its queue, so an archive write is ordered with the session's writes.
 */
import { BATCH_LINES, type Client, connect, ensureSchema, storeName } from "./postgres-schema.js";

const INSERT = "INSERT INTO bonsai.pruned (session_id, seq, line) SELECT $1, s, l FROM unnest($2::bigint[], $3::text[]) AS t(s, l)";

/** The archive's lines, oldest first. */
export async function selectArchive(client: Client, id: string): Promise<string[]> {
  const result = await client.query({ text: "SELECT line FROM bonsai.pruned WHERE session_id = $1 ORDER BY seq", values: [id], rowMode: "array" });
  return result.rows.map((row) => row[0] as string);
}

/** The same without the lease, on a connection of its own; none when the store or the table is not there. */
export async function readPostgresArchive(connectionString: string, id: string): Promise<string[]> {
  const client = await connect(connectionString);
  try {
    if (!(await ensureSchema(client, storeName(connectionString), false))) return [];
    // a schema from before archives (version 1) has no table yet: nothing was ever pruned there
    const table = await client.query("SELECT to_regclass('bonsai.pruned') IS NOT NULL AS ok");
    if (!table.rows[0].ok) return [];
    return await selectArchive(client, id);
  } finally {
    await client.end().catch(() => {});
  }
}

/** Adds lines from seq `firstSeq` on, in one statement. */
export async function insertArchive(client: Client, id: string, firstSeq: number, lines: readonly string[]): Promise<void> {
  await client.query(INSERT, [id, lines.map((_, i) => firstSeq + i), lines]);
}

/** Replaces every line in one transaction (no lines: no archive). */
export async function replaceArchive(client: Client, id: string, lines: readonly string[]): Promise<void> {
  await client.query("BEGIN");
  try {
    await client.query("DELETE FROM bonsai.pruned WHERE session_id = $1", [id]);
    for (let start = 0; start < lines.length; start += BATCH_LINES) {
      const batch = lines.slice(start, start + BATCH_LINES);
      await client.query(INSERT, [id, batch.map((_, i) => start + i), batch]);
    }
    await client.query("COMMIT");
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}

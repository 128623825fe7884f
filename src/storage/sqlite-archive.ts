/**
 * SQLite's archives of pruned tool output: rows of `pruned`, keyed by session id and ordered by
 * seq, in the session's own database. Written under the session's lease, each in one IMMEDIATE
 * transaction that passes the lease's fence first, so an append is ordered with the session's
 * writes around it.
 */
import { checkStorableLines } from "./lines.js";
import type { SqliteLease } from "./sqlite-leases.js";
import { type Database, immediateTransaction, sqliteValue, withSqliteDatabase } from "./sqlite-schema.js";
import type { PrunedArchive } from "./types.js";

const SELECT = "SELECT line FROM pruned WHERE session_id = ? ORDER BY seq";
const INSERT = "INSERT INTO pruned (session_id, seq, line) VALUES (?, ?, ?)";

/** The archive's lines, oldest first, read without the lease; none when the session has none. */
export function readSqliteArchive(path: string, id: string): string[] {
  return withSqliteDatabase(path, (db) => db.prepare(SELECT).pluck().all(id) as string[]);
}

/** The archive of the session `lease` holds, on the writer's connection. */
export function sqliteArchive(db: Database, id: string, location: string, lease: SqliteLease): PrunedArchive {
  const write = (lines: readonly string[], run: () => void) => {
    lease.writable();
    checkStorableLines(lines, location);
    immediateTransaction(db, () => {
      lease.fence();
      run();
    });
  };
  return {
    location: `${location} (table pruned)`,
    append: (lines) =>
      write(lines, () => {
        const last = sqliteValue(db.prepare("SELECT max(seq) FROM pruned WHERE session_id = ?"), id) as number | null;
        const insert = db.prepare(INSERT);
        for (let i = 0; i < lines.length; i++) insert.run(id, (last ?? -1) + 1 + i, lines[i]);
      }),
    replace: (lines) =>
      write(lines, () => {
        db.prepare("DELETE FROM pruned WHERE session_id = ?").run(id);
        const insert = db.prepare(INSERT);
        for (let i = 0; i < lines.length; i++) insert.run(id, i, lines[i]);
      }),
    lines: () => db.prepare(SELECT).pluck().all(id) as string[],
  };
}

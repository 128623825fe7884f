/**
 * A session's archive of pruned tool output (DESIGN.md section 4) as the lines its store keeps
 * them, for copying a session with its archive. Where it lives depends on the store:
 *   - a session file: the sidecar `<file>.pruned.jsonl` beside it, one JSON record per line;
 *   - SQLite: rows of the `pruned` table, PostgreSQL: rows of `bonsai.pruned`, keyed by session id
 *     and ordered by seq, in the same database as the session.
 * ops/prune.ts appends and reads records through a session; here the archive is
 * read without the writer lease, and replaced whole at a copy's target under its lease.
 */
import { readFileSync, statSync, unlinkSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { SessionFileError } from "./load.js";
import { fsyncDirectory, writeFileAtomic } from "./file-writer.js";
import { readFileLines } from "./file.js";
import { formatLocation, requireSessionId, type StoreLocation } from "./location.js";
import { connect, ensureSchema, storeName } from "./postgres-schema.js";
import { openSqliteDatabase } from "./sqlite.js";
import type { SessionBackend, StoredLines } from "./types.js";

/** The sidecar file that holds a session file's pruned originals. */
export function prunedArchivePath(sessionFile: string): string {
  return `${sessionFile}.pruned.jsonl`;
}

/** Where the archive of the session at `location` is, printable (no password). */
export function archiveLocation(location: StoreLocation): string {
  switch (location.kind) {
    case "file":
      return prunedArchivePath(resolve(location.path));
    case "sqlite":
      return `${formatLocation(location)} (table pruned)`;
    case "postgres":
      return `${formatLocation(location)} (table bonsai.pruned)`;
  }
}

/**
 * The archive's lines, oldest first, exactly as stored; no lines when the session has no archive.
 * A sidecar's unterminated last line that is not JSON (an append cut short) is reported in
 * `tornTail`, not returned, as with a session file.
 */
export async function readArchiveAt(location: StoreLocation): Promise<StoredLines> {
  switch (location.kind) {
    case "file":
      return readSidecar(archiveLocation(location));
    case "sqlite": {
      const db = openSqliteDatabase(location.path, { mustExist: true });
      try {
        const lines = db.prepare("SELECT line FROM pruned WHERE session_id = ? ORDER BY seq").pluck().all(requireSessionId(location)) as string[];
        return { lines };
      } finally {
        db.close();
      }
    }
    case "postgres": {
      const client = await connect(location.connectionString);
      try {
        if (!(await ensureSchema(client, storeName(location.connectionString), false))) return { lines: [] };
        // a schema from before archives (version 1) has no table yet: nothing was ever pruned there
        const table = await client.query("SELECT to_regclass('bonsai.pruned') IS NOT NULL AS ok");
        if (!table.rows[0].ok) return { lines: [] };
        const result = await client.query({
          text: "SELECT line FROM bonsai.pruned WHERE session_id = $1 ORDER BY seq",
          values: [requireSessionId(location)],
          rowMode: "array",
        });
        return { lines: result.rows.map((row) => row[0] as string) };
      } finally {
        await client.end().catch(() => {});
      }
    }
  }
}

function readSidecar(path: string): StoredLines {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return { lines: [] };
  try {
    return readFileLines(path);
  } catch (error) {
    if (!(error instanceof SessionFileError)) throw error;
    const where = `${path}${error.line ? `:${error.line}` : ""}`;
    const reason = error.code === "UNREADABLE" ? "holds bytes that are not UTF-8" : error.reason;
    throw new Error(`${where}: cannot read this archive of pruned tool output: ${reason}; nothing copied`);
  }
}

/** What a target's archive held before a copy replaced it, to put back if the copy fails. */
export interface ArchiveSnapshot {
  /** lines it held (none: no archive) */
  lines: number;
  /** a sidecar's bytes, exactly */
  file?: Buffer;
  /** a table's rows, in order */
  rows?: string[];
}

/** A copy target's archive, written under the target session's writer lease. */
export interface TargetArchive {
  readonly location: string;
  /** what it holds now */
  snapshot(): ArchiveSnapshot;
  /**
   * Replaces every line at once (no lines: no archive): a sidecar through a synced temp file
   * renamed over it, a table in one transaction. A PostgreSQL write is queued; the backend's
   * flush() reports it.
   */
  replace(lines: readonly string[]): void;
  /** Puts a snapshot back, the same way. */
  restore(snapshot: ArchiveSnapshot): void;
}

/** The archive of the session `backend` holds open at `location`. */
export function targetArchive(location: StoreLocation, backend: SessionBackend): TargetArchive {
  const where = archiveLocation(location);
  if (location.kind === "file") {
    return {
      location: where,
      snapshot: () => {
        const file = readExisting(where);
        return file ? { lines: file.toString("utf8").split("\n").filter((l) => l !== "").length, file } : { lines: 0 };
      },
      replace: (lines) => writeSidecar(where, lines.length === 0 ? undefined : Buffer.from(`${lines.join("\n")}\n`, "utf8")),
      restore: (snapshot) => writeSidecar(where, snapshot.file),
    };
  }
  const archive = backend.archive;
  if (!archive) throw new Error(`${formatLocation(location)}: this store keeps no archive of pruned tool output; nothing copied`);
  return {
    location: where,
    snapshot: () => {
      const rows = archive.lines();
      return { lines: rows.length, rows };
    },
    replace: (lines) => archive.replace(lines),
    restore: (snapshot) => archive.replace(snapshot.rows ?? []),
  };
}

/** The sidecar's bytes; undefined when there is none (an empty file holds no archive either). */
function readExisting(path: string): Buffer | undefined {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return undefined;
  if (!stat.isFile()) throw new Error(`${path}: not a regular file where the archive of pruned tool output belongs; move it away`);
  const bytes = readFileSync(path);
  return bytes.length === 0 ? undefined : bytes;
}

function writeSidecar(path: string, bytes: Buffer | undefined): void {
  if (bytes) {
    writeFileAtomic(path, bytes);
    return;
  }
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") return;
    throw error;
  }
  fsyncDirectory(dirname(path));
}

/**
 * A session's archive of pruned tool output (docs/ARCHITECTURE.md, pruning) as the lines its store
 * keeps them, for copying a session with its archive. Each store keeps it its own way (its
 * Store's archive methods): a session file in the sidecar `<file>.pruned.jsonl` beside it
 * (file-archive.ts); SQLite and PostgreSQL in a table of the session's database, keyed by session
 * id and ordered by seq (sqlite-archive.ts, postgres-archive.ts). ops/prune.ts appends and reads
 * records through a session; here the archive is read without the writer lease, and replaced
 * whole at a copy's target under its lease.
 */
import type { ImageContent, TextContent } from "../format/message-types.js";
import { parseLocation, type StoreLocation } from "./location.js";
import { storeOf } from "./stores.js";
import type { ArchiveSnapshot, SessionBackend, StoreArchive, StoredLines } from "./types.js";

/**
 * A session file's sidecar read by its path, without the session (readPrunedRecords, for tools
 * and tests that look at a sidecar on disk); a session's own archive is reached through its store.
 */
export { prunedArchivePath, readSidecar } from "./file-archive.js";
export type { ArchiveSnapshot };

/** Where the archive of the session at `location` is, printable (no password). */
export function archiveLocation(location: StoreLocation): string {
  return storeOf(location).archiveLocation(location);
}

/**
 * The archive's lines, oldest first, exactly as stored; no lines when the session has no archive.
 * A sidecar's unterminated last line that is not JSON (an append cut short) is reported in
 * `tornTail`, not returned, as with a session file.
 */
export async function readArchiveAt(location: StoreLocation): Promise<StoredLines> {
  return storeOf(location).readArchive(location);
}

/**
 * A copy target's archive, written under the target session's writer lease. replace() and
 * restore() write every line at once (no lines: no archive): a sidecar through a synced temp file
 * renamed over it, a table in one transaction. A PostgreSQL write is queued; the backend's
 * flush() reports it.
 */
export type TargetArchive = StoreArchive;

/** The archive of the session `backend` holds open at `location`. */
export function targetArchive(location: StoreLocation, backend: SessionBackend): TargetArchive {
  return storeOf(location).archive(location, backend);
}

/** The originals of pruned results in the session's archive, newest record per entry. */
export async function archivedOriginals(location: string, onWarning?: (message: string) => void): Promise<Map<string, (TextContent | ImageContent)[]>> {
  const originals = new Map<string, (TextContent | ImageContent)[]>();
  let lines: string[];
  try {
    lines = (await readArchiveAt(parseLocation(location))).lines;
  } catch (error) {
    onWarning?.(`${location}: the archive of pruned output could not be read (${error instanceof Error ? error.message : String(error)})`);
    return originals;
  }
  for (const line of lines) {
    if (!line.trim()) continue;
    try {
      const record = JSON.parse(line) as { entryId?: unknown; content?: unknown };
      if (typeof record.entryId === "string" && Array.isArray(record.content)) originals.set(record.entryId, record.content);
    } catch {
      // a torn line: the store reports those itself
    }
  }
  return originals;
}

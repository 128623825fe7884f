/**
 * Copying a session between any two stores, exactly: the target ends up with the same lines, in
 * the same order, character for character, and the copy is read back and compared before it is
 * reported done. The target's single-writer lease is held for the whole write.
 *
 * The session's archive of pruned tool output goes along, in the target store's form (archive.ts):
 * without it, pruned results in the copy could never be restored once the original is gone. It is
 * written after the session: a copy cut short in between (a kill) leaves the target's old archive
 * beside the new session, whose records restore refuses (they carry another prunedAt or
 * toolCallId), never a stranger's archive beside the old session. A copy that fails in between
 * puts the target's session back as it was (or removes the one it wrote).
 */
import { headerLineIndex } from "../format/title-slot.js";
import { type ArchiveSnapshot, archiveLocation, readArchiveAt, type TargetArchive, targetArchive } from "./archive.js";
import { foreignSessionFormat, foreignSessionMessage } from "../format/foreign.js";
import { sessionFileName } from "./file.js";
import { formatLocation, LocationError, parseLocation, type StoreLocation } from "./location.js";
import { openSessionAt, readLinesAt } from "./open.js";
import { storeOf } from "./stores.js";
import type { StoredLines } from "./types.js";

export interface CopyOptions {
  /** replace a session (and its archive of pruned tool output) that already exists at the target (default: refuse) */
  overwrite?: boolean;
}

/** The archive of pruned tool output that went along with the session. */
export interface CopiedArchive {
  from: string;
  to: string;
  lines: number;
  /** UTF-8 bytes of the lines and their newlines */
  bytes: number;
  /** a torn last line of the source sidecar (an interrupted append) that was not copied */
  skippedTornTail?: { line: number; bytes: number };
}

export interface CopyResult {
  from: string;
  to: string;
  sessionId: string;
  lines: number;
  /** UTF-8 bytes of the lines and their newlines */
  bytes: number;
  /** a torn last line of the source file (an interrupted write) that was not copied */
  skippedTornTail?: { line: number; bytes: number };
  /** the source's archive of pruned tool output, copied along; absent when it has none */
  archive?: CopiedArchive;
  /** the archive that was at the target before (only with overwrite) and was replaced */
  replacedArchive?: { location: string; lines: number };
}

function headerOf(lines: readonly string[], where: string): { id: string; timestamp: string } {
  const first = lines.slice(headerLineIndex(lines)).find((line) => line.trim() !== "");
  let header: { type?: unknown; id?: unknown; timestamp?: unknown } | undefined;
  try {
    header = first === undefined ? undefined : JSON.parse(first);
  } catch {
    header = undefined;
  }
  if (header?.type !== "session" || typeof header.id !== "string") {
    const foreign = foreignSessionFormat(header);
    if (foreign) throw new Error(`${where}: ${foreignSessionMessage(foreign)}; nothing copied`);
    throw new Error(`${where}: not a session: the first line is not a session header; nothing copied`);
  }
  return { id: header.id, timestamp: typeof header.timestamp === "string" ? header.timestamp : "" };
}

/**
 * Where the copy goes: a database location gets the session id, a directory a file named as the
 * source file is (`<time>_<id>.jsonl` for a source with no file name of its own).
 */
function resolveTarget(to: StoreLocation, from: StoreLocation, header: { id: string; timestamp: string }): StoreLocation {
  return storeOf(to).copyTarget(to, header, storeOf(from).fileNameOf(from) ?? sessionFileName(header));
}

const sameLocation = (a: StoreLocation, b: StoreLocation) => storeOf(a) === storeOf(b) && storeOf(a).sameSession(a, b);

/**
 * Copies the session at `from` to `to` (any two stores) with its archive of pruned tool output,
 * and checks both line by line. Everything that can be refused is refused before anything is written.
 */
export async function copySession(from: string | StoreLocation, to: string | StoreLocation, options: CopyOptions = {}): Promise<CopyResult> {
  const source = typeof from === "string" ? parseLocation(from) : from;
  const sourceName = formatLocation(source);
  const stored: StoredLines | undefined = await readLinesAt(source);
  if (!stored) throw new Error(`${sourceName}: no such session; nothing copied`);
  const header = headerOf(stored.lines, sourceName);
  // After the lines: pruning archives before it rewrites, so an archive read later holds every
  // original those lines refer to.
  const archived = await readArchiveAt(source);
  const target = resolveTarget(typeof to === "string" ? parseLocation(to) : to, source, header);
  const targetName = formatLocation(target);
  if (sameLocation(source, target)) throw new LocationError(targetName, "source and target are the same session");
  storeOf(target).checkLines(stored.lines, targetName);
  storeOf(target).checkLines(archived.lines, archiveLocation(target));

  const { loaded, backend } = await openSessionAt(target);
  let archive: TargetArchive | undefined;
  let before: ArchiveSnapshot | undefined;
  let previous: readonly string[] | undefined; // the target's session as it was, once replaced
  try {
    if (!backend) throw new Error(`${targetName}: opened without a writer`);
    if (loaded && !options.overwrite) {
      throw new Error(`${targetName}: a session already exists there; choose another target or overwrite it (--force)`);
    }
    archive = targetArchive(target, backend);
    const existing = archive.snapshot();
    if (existing.lines > 0 && !options.overwrite) {
      throw new Error(
        `${archive.location}: an archive of pruned tool output already exists there; choose another target or overwrite it (--force)`,
      );
    }
    const old = loaded ? ((await readLinesAt(target))?.lines ?? []) : [];
    backend.rewrite(stored.lines);
    await backend.flush();
    previous = old;
    if (archived.lines.length > 0 || existing.lines > 0) {
      before = existing;
      archive.replace(archived.lines);
      await backend.flush();
    }
  } catch (error) {
    try {
      await backend?.close();
    } catch {
      // the write's own failure is the one to report
    }
    if (previous) await putBack(target, previous, before, error as Error);
    throw error;
  }
  await backend.close();

  const copied = await readLinesAt(target);
  const mismatch = firstDifference(stored.lines, copied?.lines ?? []);
  if (mismatch !== undefined) {
    throw new Error(`${targetName}: the copy differs from ${sourceName} at line ${mismatch + 1}; do not rely on it`);
  }
  const result: CopyResult = { from: sourceName, to: targetName, sessionId: header.id, lines: stored.lines.length, bytes: byteLength(stored.lines) };
  if (stored.tornTail) result.skippedTornTail = stored.tornTail;
  if (before && archive) {
    const archiveMismatch = firstDifference(archived.lines, (await readArchiveAt(target)).lines);
    if (archiveMismatch !== undefined) {
      throw new Error(
        `${archive.location}: the copied archive of pruned tool output differs from ${archiveLocation(source)} at line ${archiveMismatch + 1}; do not rely on it`,
      );
    }
  }
  if (archived.lines.length > 0 && archive) {
    result.archive = { from: archiveLocation(source), to: archive.location, lines: archived.lines.length, bytes: byteLength(archived.lines) };
    if (archived.tornTail) result.archive.skippedTornTail = archived.tornTail;
  }
  if (before && before.lines > 0 && archive) result.replacedArchive = { location: archive.location, lines: before.lines };
  return result;
}

/**
 * The archive could not be written after the session was: the target's session goes back to the
 * lines it had (none: the copy's session is removed) and its archive to what it held, under a
 * fresh lease (a failed PostgreSQL writer takes no more writes). If even that fails, the error
 * says what was left where.
 */
async function putBack(target: StoreLocation, lines: readonly string[], before: ArchiveSnapshot | undefined, failure: Error): Promise<void> {
  try {
    const { backend } = await openSessionAt(target);
    if (!backend) return;
    try {
      backend.rewrite(lines);
      if (before) targetArchive(target, backend).restore(before);
      await backend.flush();
    } finally {
      await backend.close();
    }
  } catch (error) {
    failure.message += `; the session at ${formatLocation(target)} could not be put back as it was (${(error as Error).message}): it holds the copy, without its archive of pruned tool output`;
  }
}

const byteLength = (lines: readonly string[]) => lines.reduce((n, line) => n + Buffer.byteLength(line, "utf8") + 1, 0);

/** Index of the first line that differs (a missing line counts), or undefined when equal. */
export function firstDifference(a: readonly string[], b: readonly string[]): number | undefined {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return undefined;
}

/**
 * A session file's archive of pruned tool output (docs/ARCHITECTURE.md, pruning): the sidecar
 * `<file>.pruned.jsonl` beside it, one JSON record per line, written under the session file's
 * lock. An append is one write, synced, that first closes off a torn last line; a replace is a
 * synced temp file renamed over the sidecar (no lines: no sidecar).
 */
import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, readFileSync, readSync, statSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";
import { forEachBufferLine, jsonlText } from "../format/lines.js";
import { readFileLines } from "./file-lines.js";
import { fsyncDirectory, keepAccess, writeAll, writeFileAtomic } from "./file-writer.js";
import { SessionFileError } from "./load.js";
import type { StoreArchive, StoredLines } from "./types.js";

/** The sidecar file that holds a session file's pruned originals. */
export function prunedArchivePath(sessionFile: string): string {
  return `${sessionFile}.pruned.jsonl`;
}

/**
 * The sidecar's lines as readFileLines gives a session file's (none when there is no sidecar);
 * `after` ends the message of one that cannot be read.
 */
export function readSidecar(path: string, after = ""): StoredLines {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return { lines: [] };
  try {
    return readFileLines(path);
  } catch (error) {
    if (!(error instanceof SessionFileError)) throw error;
    const where = `${path}${error.line ? `:${error.line}` : ""}`;
    const reason = error.code === "UNREADABLE" ? "holds bytes that are not UTF-8" : error.reason;
    throw new Error(`${where}: cannot read this archive of pruned tool output: ${reason}${after}`);
  }
}

/** The archive of the session file `sessionFile` (an absolute path), for its writer. */
export function sidecarArchive(sessionFile: string): StoreArchive {
  const path = prunedArchivePath(sessionFile);
  return {
    location: path,
    lines: () => readSidecar(path).lines,
    stored: () => readSidecar(path),
    append: (lines) => appendSidecar(path, lines, sessionFile),
    replace: (lines) => writeSidecar(path, lines.length === 0 ? undefined : Buffer.from(jsonlText(lines), "utf8"), sessionFile),
    snapshot: () => {
      const file = readExisting(path);
      return file ? { lines: countFilledLines(file), file } : { lines: 0 };
    },
    restore: (snapshot) => writeSidecar(path, snapshot.file, sessionFile),
  };
}

/**
 * `session` is the session file: a new archive gets its mode and owner (it holds the same
 * outputs). A write the disk cannot take leaves the archive as it was (a new one not at all):
 * a torn line would be reported by every later restore.
 */
function appendSidecar(path: string, lines: readonly string[], session: string): void {
  if (lines.length === 0) return;
  const existed = statSync(path, { throwIfNoEntry: false }) !== undefined;
  const fd = openSync(path, "a+", 0o644);
  let failed = false;
  try {
    if (!existed) keepAccess(fd, statSync(session, { throwIfNoEntry: false }));
    const size = fstatSync(fd).size;
    let prefix = "";
    if (size > 0) {
      const last = Buffer.alloc(1);
      readSync(fd, last, 0, 1, size - 1);
      if (last[0] !== 0x0a) prefix = "\n";
    }
    try {
      writeAll(fd, Buffer.from(`${prefix}${jsonlText(lines)}`, "utf8"));
      fsyncSync(fd);
    } catch (error) {
      failed = true;
      ftruncateSync(fd, size);
      throw error;
    }
  } finally {
    closeSync(fd);
    if (failed && !existed) unlinkSync(path);
  }
}

/** Lines of `data` that hold anything: the records a snapshot reports. */
function countFilledLines(data: Buffer): number {
  let count = 0;
  forEachBufferLine(data, (line) => {
    if (line.end > line.start) count++;
  });
  return count;
}

/** The sidecar's bytes; undefined when there is none (an empty file holds no archive either). */
function readExisting(path: string): Buffer | undefined {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return undefined;
  if (!stat.isFile()) throw new Error(`${path}: not a regular file where the archive of pruned tool output belongs; move it away`);
  const bytes = readFileSync(path);
  return bytes.length === 0 ? undefined : bytes;
}

function writeSidecar(path: string, bytes: Buffer | undefined, session: string): void {
  if (bytes) {
    writeFileAtomic(path, bytes, undefined, session);
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

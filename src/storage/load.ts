/**
 * Reading session files. The header must be readable or the open fails with the line and reason
 * (and the file is never touched). Every later line that cannot be used is skipped and reported
 * with its line number; nothing valid is dropped.
 */
import { closeSync, openSync, statSync } from "node:fs";
import { BodyReader } from "./bodies.js";
import { forEachBufferLine } from "../format/lines.js";
import { forEachDescriptorLine } from "./read-lines.js";
import type { FileEntry, SessionEntry } from "../format/entry-types.js";
import { type BodyLoading, type EntrySink, type LoadedSession, SessionFileError } from "./load-types.js";
import { readThroughOpenIndex } from "./open-index-file.js";
import { SessionReader } from "./session-reader.js";

export type { BodyLoading, EntrySink, LoadedSession, LoadIssue, LoadIssueKind, SessionFileErrorCode } from "./load-types.js";
export { SessionFileError } from "./load-types.js";

function finish(reader: SessionReader, path: string, size: number): LoadedSession {
  if (reader.headerProblem) {
    throw new SessionFileError("BAD_HEADER", path, reader.headerProblem.reason, reader.headerProblem.line);
  }
  if (!reader.header) {
    if (reader.titleSlot) throw new SessionFileError("EMPTY", path, "holds only oh-my-pi's title line, no session header");
    throw new SessionFileError("EMPTY", path, "empty file: no session header");
  }
  return {
    header: reader.header,
    fileEntries: reader.fileEntries,
    issues: reader.issues,
    endsWithNewline: reader.lastTerminated,
    size,
    ...(!reader.lastTerminated && reader.tornTailAt !== undefined && { tornTailAt: reader.tornTailAt }),
    ...(reader.titleSlot && { titleSlot: { line: reader.titleSlot.line, text: reader.titleSlot.text } }),
  };
}

/** Reads and validates a session file. Throws SessionFileError when it cannot be used at all. */
export function loadSessionFile(path: string): LoadedSession {
  const { reader, size, fd } = readFile(path, "eager");
  closeSync(fd);
  return finish(reader, path, size);
}

/** A session read into a tree index as it was read. */
export interface LoadedIndex<Index extends EntrySink = EntrySink> extends Omit<LoadedSession, "fileEntries"> {
  /** the entries of a current (v3) file, some of them with their bodies still on disk */
  index: Index;
  /** the entries of a v1/v2 file, read in full and left out of the index: they need migrating first */
  unmigrated: SessionEntry[] | undefined;
}

/**
 * Reads a session file into `index` (a TreeIndex), keeping message bodies on disk where it can (see
 * BodyLoading); the index then holds the file open until it is closed. Same errors and issues as
 * loadSessionFile, except that "checked" reports a message with wrong fields, and "trusted" any
 * damaged message line, only when its body is read.
 */
export function loadSessionIndex<Index extends EntrySink>(path: string, bodies: BodyLoading, index: Index): LoadedIndex<Index> {
  const { reader, size, fd } = readFile(path, bodies, index);
  let loaded: LoadedSession;
  try {
    loaded = finish(reader, path, size);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  const { fileEntries, ...rest } = loaded;
  if (reader.deferred > 0) index.attachBodies(new BodyReader(path, fd, bodies === "parsed"));
  else closeSync(fd);
  return { ...rest, index, unmigrated: reader.indexed ? undefined : (fileEntries.slice(1) as SessionEntry[]) };
}

/** Reads every line through one descriptor, which the caller closes or keeps for deferred bodies. */
function readFile(path: string, bodies: BodyLoading, index?: EntrySink): { reader: SessionReader; size: number; fd: number; scanned?: number } {
  let stat: ReturnType<typeof statSync>;
  try {
    stat = statSync(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw new SessionFileError("NOT_FOUND", path, "no such file");
    throw new SessionFileError("UNREADABLE", path, `cannot read: ${(error as Error).message}`);
  }
  if (stat.isDirectory()) throw new SessionFileError("NOT_A_FILE", path, "is a directory, not a session file");
  if (!stat.isFile()) throw new SessionFileError("NOT_A_FILE", path, "is not a regular file");
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    // a current file read for its index, bodies left in the file, can start from its open index
    if (index && bodies === "checked") return { ...readThroughOpenIndex(path, fd, bodies, index), fd };
    const reader = new SessionReader(bodies, index);
    return { reader, size: forEachDescriptorLine(fd, reader.onLine).size, fd };
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    if (error instanceof SessionFileError) throw error;
    throw new SessionFileError("UNREADABLE", path, `cannot read: ${(error as Error).message}`);
  }
}

/** Reads session text held in memory (same rules as a file). */
export function loadSessionText(text: string | Buffer, name = "<text>"): LoadedSession {
  const data = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  const reader = new SessionReader();
  forEachBufferLine(data, reader.onLine);
  return finish(reader, name, data.length);
}

/** Session text held in memory, read into `index` with every body parsed (there is no file to leave them in). */
export function loadTextIndex<Index extends EntrySink>(text: string | Buffer, name: string, index: Index): LoadedIndex<Index> {
  const data = typeof text === "string" ? Buffer.from(text, "utf8") : text;
  const reader = new SessionReader("eager", index);
  forEachBufferLine(data, reader.onLine);
  const { fileEntries, ...rest } = finish(reader, name, data.length);
  return { ...rest, index, unmigrated: reader.indexed ? undefined : (fileEntries.slice(1) as SessionEntry[]) };
}

/**
 * The reference's lenient parser: every line that is JSON, in order, nothing validated.
 * Kept for compatibility with code written against the reference.
 */
export function parseSessionEntries(content: string): FileEntry[] {
  const entries: FileEntry[] = [];
  for (const line of content.split("\n")) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line));
    } catch {
      // malformed lines are skipped, as in the reference
    }
  }
  return entries;
}

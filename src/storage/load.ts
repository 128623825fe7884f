/**
 * Reading session files. The header must be readable or the open fails with the line and reason
 * (and the file is never touched). Every later line that cannot be used is skipped and reported
 * with its line number; nothing valid is dropped.
 */
import { closeSync, openSync, statSync } from "node:fs";
import { BodyReader, readMessagePrefix } from "./bodies.js";
import type { LineSource } from "./line-source.js";
import { finishesJsonObjects, splitGluedObjects } from "../format/json-syntax.js";
import { decodeRange, forEachBufferLine, isUtf8Range, type RawLine } from "../format/lines.js";
import { forEachDescriptorLine } from "./read-lines.js";
import { isKnownEntryType, validateEntry, validateHeader } from "../format/validate.js";
import { isTitleSlot } from "../format/title-slot.js";
import { CURRENT_SESSION_VERSION, type FileEntry, type SessionEntry, type SessionHeader } from "../format/entry-types.js";
import { errorText } from "../util/error-text.js";

export type LoadIssueKind =
  | "malformed-json"
  | "torn-tail"
  | "invalid-utf8"
  | "invalid-entry"
  | "duplicate-header"
  | "duplicate-id"
  | "unknown-type"
  | "glued-objects";

export interface LoadIssue {
  kind: LoadIssueKind;
  line: number;
  message: string;
  /** true when the line was left out of the session */
  skipped: boolean;
}

export type SessionFileErrorCode = "NOT_FOUND" | "NOT_A_FILE" | "EMPTY" | "BAD_HEADER" | "UNREADABLE";

/** A session file that cannot be opened at all. `message` is one line: path, line, reason. */
export class SessionFileError extends Error {
  constructor(
    readonly code: SessionFileErrorCode,
    readonly path: string,
    readonly reason: string,
    readonly line?: number,
  ) {
    super(`${path}${line ? `:${line}` : ""}: ${reason}`);
    this.name = "SessionFileError";
  }
}

export interface LoadedSession {
  header: SessionHeader;
  /** header first, then entries in file order (v1 entries have no ids until migrated) */
  fileEntries: FileEntry[];
  issues: LoadIssue[];
  /** false when the last byte is not a newline: the next append must start a new line */
  endsWithNewline: boolean;
  size: number;
  /** oh-my-pi's title slot, the line before the header, as read (format/title-slot.ts) */
  titleSlot?: { line: number; text: string };
}

const MAX_REASON = 120;

function jsonReason(error: unknown): string {
  const text = errorText(error);
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}…` : text;
}

/**
 * How entry bodies are loaded. v1/v2 files are always loaded eagerly: migration rewrites them.
 * - "eager": every entry parsed, validated and kept in memory.
 * - "parsed": every line parsed and validated at open; message and custom-message bodies are
 *   then dropped and read back from the file when used.
 * - "checked" (the default): message lines in the shape pi and bonsai write are checked to be
 *   well-formed JSON without being parsed, and indexed by the type, ids and role read off their
 *   start; each body is parsed and validated when first read. Every other line is parsed. A line
 *   that is not JSON is still reported and skipped at open; a message whose JSON is well formed
 *   but whose fields are wrong throws InvalidBodyError when it is read, and SessionManager then
 *   reads the file again as "parsed" (the line skipped and reported).
 * - "trusted": like "checked" without the well-formedness check, for files bonsai wrote itself.
 */
export type BodyLoading = "eager" | "parsed" | "checked" | "trusted";

/**
 * Where the entries of a current (v3) file go as they are read: the session layer's tree index
 * implements it, so storage reads into it without depending on it (docs/ARCHITECTURE.md, layers).
 */
export interface EntrySink {
  /**
   * adds a parsed entry, read from line `line` at byte `offset` for `length` bytes (where a
   * rewrite copies it from while it is unchanged); false when its id is already there
   */
  addIfNew(entry: SessionEntry, line?: number, offset?: number, length?: number): boolean;
  /** adds an entry whose body stays in the file at `offset`, `length` bytes; false on a duplicate id */
  addDeferred(type: string, id: string, parentId: string | null, role: string | undefined, line: number, offset: number, length: number): boolean;
  /** hands over the reader that fetches deferred bodies */
  attachBodies(bodies: BodyReader): void;
  /** where the header's line is (a current file's only: an older one is migrated, every line rewritten) */
  headerAt?(line: number, offset: number, length: number): void;
  /** where oh-my-pi's title slot is, the line before the header (format/title-slot.ts), which a rewrite copies first */
  titleSlotAt?(line: number, offset: number, length: number, text: string): void;
  /** hands over where the lines are, so a rewrite copies the unchanged ones (line-source.ts) */
  attachLines?(lines: LineSource): void;
}

/** Accumulates lines into a LoadedSession; shared by the file and the text entry points. */
class SessionReader {
  header: SessionHeader | undefined;
  headerProblem: { line: number; reason: string } | undefined;
  titleSlot: { line: number; offset: number; length: number; text: string } | undefined;
  readonly fileEntries: FileEntry[] = [];
  readonly issues: LoadIssue[] = [];
  private readonly ids = new Set<string>();
  private readonly unknownTypes = new Map<string, { issue: LoadIssue; lines: number }>();
  private requireTreeFields = true;
  /** where entries of a current (v3) file go, when the caller indexes them as they are read */
  private into: EntrySink | undefined;
  deferred = 0;
  /** the id of the last message indexed from its prefix: usually the next one's parent */
  private lastDeferredId: string | undefined;
  lastTerminated = true;

  /** whether the entries went into the index (a current file) rather than into fileEntries */
  get indexed(): boolean {
    return this.into !== undefined;
  }

  /** whether message lines are indexed from their prefix instead of parsed */
  private readonly scansMessages: boolean;

  constructor(
    private readonly bodies: BodyLoading = "eager",
    private readonly index?: EntrySink,
  ) {
    this.scansMessages = bodies === "checked" || bodies === "trusted";
  }

  onLine = (line: RawLine): void => {
    this.lastTerminated = line.terminated;
    if (line.end === line.start || this.headerProblem) return;
    // the torn-tail check needs the full parse, so an unterminated last line never takes this path
    if (this.into && this.scansMessages && line.terminated && this.deferMessageLine(line)) return;
    const { text, validUtf8 } = decodeRange(line.buffer, line.start, line.end, line.knownUtf8);
    if (text.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      if (!this.header && text.startsWith("\uFEFF")) {
        // invisible in the JSON error: name it, and how to remove it
        this.headerProblem = {
          line: line.lineNo,
          reason: "starts with a UTF-8 byte order mark (bytes EF BB BF), which session files never have; remove those 3 bytes (e.g. `sed -i '1s/^\\xEF\\xBB\\xBF//' FILE`) and open it again",
        };
      } else if (!this.header) {
        this.headerProblem = { line: line.lineNo, reason: `not a session file: the first line is not JSON (${jsonReason(error)})` };
      } else if (line.terminated && this.readGluedObjects(line)) {
        return;
      } else if (!line.terminated) {
        this.issue("torn-tail", line.lineNo, `last line is incomplete (${line.end - line.start} bytes, likely a torn write); skipped, the next append starts on a new line`);
      } else {
        this.issue("malformed-json", line.lineNo, `malformed JSON (${jsonReason(error)}); line skipped`);
      }
      return;
    }
    if (!this.header) {
      // the first line read (an earlier one would have set headerProblem) may be omp's title slot
      if (!this.titleSlot && isTitleSlot(value)) {
        this.titleSlot = { line: line.lineNo, offset: line.offset, length: line.end - line.start, text };
        return;
      }
      const problem = validateHeader(value);
      if (problem) {
        this.headerProblem = { line: line.lineNo, reason: problem };
        return;
      }
      this.header = value as SessionHeader;
      this.requireTreeFields = typeof this.header.version === "number" && this.header.version >= 2;
      const current = typeof this.header.version === "number" && this.header.version >= CURRENT_SESSION_VERSION;
      if (current) this.into = this.index;
      const slot = this.titleSlot;
      if (slot) this.into?.titleSlotAt?.(slot.line, slot.offset, slot.length, slot.text);
      this.into?.headerAt?.(line.lineNo, line.offset, line.end - line.start);
      this.fileEntries.push(this.header);
      if (!validUtf8) this.issue("invalid-utf8", line.lineNo, "header has bytes that are not UTF-8; read with replacement characters", false);
      return;
    }
    if ((value as { type?: unknown })?.type === "session") {
      this.issue("duplicate-header", line.lineNo, "a second session header; line skipped");
      return;
    }
    const problem = validateEntry(value, this.requireTreeFields);
    if (problem) {
      this.issue("invalid-entry", line.lineNo, `invalid entry: ${problem}; line skipped`);
      return;
    }
    const entry = value as SessionEntry;
    let added: boolean;
    if (!this.into) {
      added = !this.requireTreeFields || !this.ids.has(entry.id);
      if (added) {
        if (this.requireTreeFields) this.ids.add(entry.id);
        this.fileEntries.push(entry);
      }
    } else if (this.bodies !== "eager" && (entry.type === "message" || entry.type === "custom_message")) {
      const role = entry.type === "message" ? entry.message.role : undefined;
      added = this.into.addDeferred(entry.type, entry.id, entry.parentId, role, line.lineNo, line.offset, line.end - line.start);
      if (added) this.deferred++;
    } else added = this.into.addIfNew(entry, line.lineNo, line.offset, line.end - line.start);
    if (!added) {
      this.duplicate(entry.id, line.lineNo);
      return;
    }
    if (!validUtf8) this.issue("invalid-utf8", line.lineNo, "bytes that are not UTF-8, read with replacement characters", false);
    if (!isKnownEntryType(entry.type)) this.unknownType(entry.type, line.lineNo);
  };

  /**
   * A line of two or more complete objects written back to back (two programs appending at once):
   * each is read as its own entry, in order, at its own byte range, so a rewrite copies each to a
   * line of its own; reported, not skipped. False when the line is not such a run.
   */
  private readGluedObjects(line: RawLine): boolean {
    const pieces = splitGluedObjects(line.buffer, line.start, line.end);
    if (!pieces) return false;
    this.issue("glued-objects", line.lineNo, `${pieces.length} JSON objects on one line (two writes at once?); each read as its own entry, a rewrite puts them on separate lines`, false);
    const { buffer, lineNo, knownUtf8 } = line;
    for (const [start, end] of pieces) {
      const offset = line.offset + (start - line.start);
      this.onLine({ lineNo, offset, buffer, start, end, knownUtf8, terminated: true, bytes: buffer.subarray(start, end) });
    }
    return true;
  }

  /** An entry type no dialect knows: reported once per type, at its first line, with how many lines have it. */
  private unknownType(type: string, lineNo: number): void {
    const seen = this.unknownTypes.get(type);
    const lines = (seen?.lines ?? 0) + 1;
    const message = `unknown entry type "${type}"${lines > 1 ? ` (${lines} lines, the first here)` : ""}; kept, ignored in context`;
    if (seen) {
      seen.lines = lines;
      seen.issue.message = message;
      return;
    }
    this.issue("unknown-type", lineNo, message, false);
    this.unknownTypes.set(type, { issue: this.issues[this.issues.length - 1], lines });
  }

  private duplicate(id: string, lineNo: number): void {
    this.issue("duplicate-id", lineNo, `duplicate entry id ${id}; the later line is skipped`);
  }

  /** A message line whose prefix is in the usual shape (and, when checking, whose JSON is well formed) is indexed without a parse. */
  private deferMessageLine(line: RawLine): boolean {
    const prefix = readMessagePrefix(line.buffer, line.start, line.end, this.lastDeferredId);
    if (!prefix) return false;
    // a line that is not JSON goes on to the full parse, which reports and skips it
    if (this.bodies === "checked" && !finishesJsonObjects(line.buffer, prefix.bodyAt, line.end, 2)) return false;
    if (!this.into!.addDeferred("message", prefix.id, prefix.parentId, prefix.role, line.lineNo, line.offset, line.end - line.start)) {
      this.duplicate(prefix.id, line.lineNo);
      return true;
    }
    this.lastDeferredId = prefix.id;
    this.deferred++;
    if (!isUtf8Range(line)) this.issue("invalid-utf8", line.lineNo, "bytes that are not UTF-8, read with replacement characters", false);
    return true;
  }

  private issue(kind: LoadIssueKind, line: number, message: string, skipped = true): void {
    this.issues.push({ kind, line, message, skipped });
  }
}

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
function readFile(path: string, bodies: BodyLoading, index?: EntrySink): { reader: SessionReader; size: number; fd: number } {
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
  const reader = new SessionReader(bodies, index);
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
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

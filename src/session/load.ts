/**
 * Reading session files. The header must be readable or the open fails with the line and reason
 * (and the file is never touched). Every later line that cannot be used is skipped and reported
 * with its line number; nothing valid is dropped.
 */
import { isUtf8 } from "node:buffer";
import { closeSync, openSync, statSync } from "node:fs";
import { BodyReader, DeferredEntry, readMessagePrefix } from "./bodies.js";
import { decodeLine, forEachBufferLine, forEachDescriptorLine, type RawLine } from "./jsonl.js";
import { isKnownEntryType, validateEntry, validateHeader } from "./validate.js";
import { CURRENT_SESSION_VERSION, type FileEntry, type SessionEntry, type SessionHeader } from "./types.js";

export type LoadIssueKind =
  | "malformed-json"
  | "torn-tail"
  | "invalid-utf8"
  | "invalid-entry"
  | "duplicate-header"
  | "duplicate-id"
  | "unknown-type";

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
}

const MAX_REASON = 120;

function jsonReason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.length > MAX_REASON ? `${text.slice(0, MAX_REASON)}…` : text;
}

/**
 * How entry bodies are loaded. "eager": every entry parsed and kept. "checked": every line parsed
 * and validated, but message and custom-message bodies are dropped and read back from the file
 * when used (DeferredEntry). "trusted": message lines in the shape pi and bonsai write are not
 * parsed at all, only their type, ids and role are read; their bodies are validated when read
 * back. v1/v2 files are always loaded eagerly: migration rewrites their entries.
 */
export type BodyLoading = "eager" | "checked" | "trusted";

/** Accumulates lines into a LoadedSession; shared by the file and the text entry points. */
class SessionReader {
  header: SessionHeader | undefined;
  headerProblem: { line: number; reason: string } | undefined;
  readonly fileEntries: (FileEntry | DeferredEntry)[] = [];
  readonly issues: LoadIssue[] = [];
  private readonly ids = new Set<string>();
  private requireTreeFields = true;
  /** bodies stay on disk: set once the header says the file is current (v3) */
  private defer: BodyLoading = "eager";
  deferred = 0;
  lastTerminated = true;

  constructor(private readonly bodies: BodyLoading = "eager") {}

  onLine = (line: RawLine): void => {
    this.lastTerminated = line.terminated;
    if (line.bytes.length === 0 || this.headerProblem) return;
    // the torn-tail check needs the full parse, so an unterminated last line never takes this path
    if (this.defer === "trusted" && line.terminated && this.deferMessageLine(line)) return;
    const { text, validUtf8 } = decodeLine(line.bytes);
    if (text.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      if (!this.header) {
        this.headerProblem = { line: line.lineNo, reason: `not a session file: the first line is not JSON (${jsonReason(error)})` };
      } else if (!line.terminated) {
        this.issue("torn-tail", line.lineNo, `last line is incomplete (${line.bytes.length} bytes, likely a torn write); skipped, the next append starts on a new line`);
      } else {
        this.issue("malformed-json", line.lineNo, `malformed JSON (${jsonReason(error)}); line skipped`);
      }
      return;
    }
    if (!this.header) {
      const problem = validateHeader(value);
      if (problem) {
        this.headerProblem = { line: line.lineNo, reason: problem };
        return;
      }
      this.header = value as SessionHeader;
      this.requireTreeFields = typeof this.header.version === "number" && this.header.version >= 2;
      if (typeof this.header.version === "number" && this.header.version >= CURRENT_SESSION_VERSION) this.defer = this.bodies;
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
    if (this.requireTreeFields) {
      if (this.ids.has(entry.id)) {
        this.issue("duplicate-id", line.lineNo, `duplicate entry id ${entry.id}; the later line is skipped`);
        return;
      }
      this.ids.add(entry.id);
    }
    if (!validUtf8) this.issue("invalid-utf8", line.lineNo, "bytes that are not UTF-8, read with replacement characters", false);
    if (!isKnownEntryType(entry.type)) {
      this.issue("unknown-type", line.lineNo, `unknown entry type "${entry.type}"; kept, ignored in context`, false);
    }
    if (this.defer !== "eager" && (entry.type === "message" || entry.type === "custom_message")) {
      const role = entry.type === "message" ? entry.message.role : undefined;
      this.fileEntries.push(new DeferredEntry(entry.type, entry.id, entry.parentId, role, line.lineNo, line.offset, line.bytes.length));
      this.deferred++;
      return;
    }
    this.fileEntries.push(entry);
  };

  /** A message line whose prefix is in the usual shape becomes a DeferredEntry without a parse. */
  private deferMessageLine(line: RawLine): boolean {
    const prefix = readMessagePrefix(line.bytes);
    if (!prefix) return false;
    if (this.ids.has(prefix.id)) {
      this.issue("duplicate-id", line.lineNo, `duplicate entry id ${prefix.id}; the later line is skipped`);
      return true;
    }
    this.ids.add(prefix.id);
    if (!isUtf8(line.bytes)) this.issue("invalid-utf8", line.lineNo, "bytes that are not UTF-8, read with replacement characters", false);
    this.fileEntries.push(new DeferredEntry("message", prefix.id, prefix.parentId, prefix.role, line.lineNo, line.offset, line.bytes.length));
    this.deferred++;
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
  if (!reader.header) throw new SessionFileError("EMPTY", path, "empty file: no session header");
  return {
    header: reader.header,
    fileEntries: reader.fileEntries as FileEntry[],
    issues: reader.issues,
    endsWithNewline: reader.lastTerminated,
    size,
  };
}

/** Reads and validates a session file. Throws SessionFileError when it cannot be used at all. */
export function loadSessionFile(path: string): LoadedSession {
  const { reader, size, fd } = readFile(path, "eager");
  closeSync(fd);
  return finish(reader, path, size);
}

/** A session as the tree index takes it: entries in file order, some of them deferred. */
export interface LoadedIndex extends Omit<LoadedSession, "fileEntries"> {
  /** entries in file order, without the header */
  entries: (SessionEntry | DeferredEntry)[];
  /** reads deferred bodies back (it holds the file open); undefined when nothing was deferred */
  bodies: BodyReader | undefined;
}

/**
 * Reads a session file keeping message bodies on disk where it can (see BodyLoading). Same
 * errors and issues as loadSessionFile; "trusted" reports a damaged message body only when it is read.
 */
export function loadSessionIndex(path: string, bodies: BodyLoading): LoadedIndex {
  const { reader, size, fd } = readFile(path, bodies);
  let loaded: LoadedSession;
  try {
    loaded = finish(reader, path, size);
  } catch (error) {
    closeSync(fd);
    throw error;
  }
  const [, ...entries] = loaded.fileEntries as unknown as [SessionHeader, ...(SessionEntry | DeferredEntry)[]];
  const { fileEntries: _all, ...rest } = loaded;
  if (reader.deferred === 0) {
    closeSync(fd);
    return { ...rest, entries, bodies: undefined };
  }
  return { ...rest, entries, bodies: new BodyReader(path, fd, bodies === "checked") };
}

/** Reads every line through one descriptor, which the caller closes or keeps for deferred bodies. */
function readFile(path: string, bodies: BodyLoading): { reader: SessionReader; size: number; fd: number } {
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
  const reader = new SessionReader(bodies);
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

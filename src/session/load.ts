/**
 * Reading session files. The header must be readable or the open fails with the line and reason
 * (and the file is never touched). Every later line that cannot be used is skipped and reported
 * with its line number; nothing valid is dropped.
 */
import { statSync } from "node:fs";
import { decodeLine, forEachBufferLine, forEachFileLine, type RawLine } from "./jsonl.js";
import { isKnownEntryType, validateEntry, validateHeader } from "./validate.js";
import type { FileEntry, SessionEntry, SessionHeader } from "./types.js";

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

/** Accumulates lines into a LoadedSession; shared by the file and the text entry points. */
class SessionReader {
  header: SessionHeader | undefined;
  headerProblem: { line: number; reason: string } | undefined;
  readonly fileEntries: FileEntry[] = [];
  readonly issues: LoadIssue[] = [];
  private readonly ids = new Set<string>();
  private requireTreeFields = true;
  lastTerminated = true;

  onLine = (line: RawLine): void => {
    this.lastTerminated = line.terminated;
    if (line.bytes.length === 0 || this.headerProblem) return;
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
    this.fileEntries.push(entry);
  };

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
    fileEntries: reader.fileEntries,
    issues: reader.issues,
    endsWithNewline: reader.lastTerminated,
    size,
  };
}

/** Reads and validates a session file. Throws SessionFileError when it cannot be used at all. */
export function loadSessionFile(path: string): LoadedSession {
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
  const reader = new SessionReader();
  let size: number;
  try {
    size = forEachFileLine(path, reader.onLine).size;
  } catch (error) {
    if (error instanceof SessionFileError) throw error;
    throw new SessionFileError("UNREADABLE", path, `cannot read: ${(error as Error).message}`);
  }
  return finish(reader, path, size);
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

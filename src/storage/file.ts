/**
 * The JSONL file store, behind the same interface as the databases: an adapter over the file
 * shell (SessionFileWriter: one write per append, atomic rewrites, the lock file) and the file
 * reader. The format is unchanged: one session per file, one line per entry.
 */
import { isUtf8 } from "node:buffer";
import { closeSync, copyFileSync, existsSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { forEachFileLine } from "./read-lines.js";
import { type LoadedSession, loadSessionFile, SessionFileError } from "./load.js";
import { SessionFileWriter } from "./file-writer.js";
import type { OpenedSession, OpenSessionOptions, SessionBackend, SessionSummary, StoredLines } from "./types.js";

/** A backup's time suffix: the current time, safe in file names and session ids. */
export const backupStamp = () => new Date().toISOString().replace(/[:.]/g, "-");

/** The name bonsai gives a session file: `<header time>_<session id>.jsonl`, so names sort by creation. */
export const sessionFileName = (header: { id: string; timestamp: string }) =>
  `${header.timestamp.replace(/[:.]/g, "-")}_${header.id}.jsonl`;

const joinLines = (lines: readonly string[]) => (lines.length === 0 ? "" : `${lines.join("\n")}\n`);

/** A session file open for writing; holds `<file>.lock` until close(). */
export class FileBackend implements SessionBackend {
  readonly kind = "file" as const;
  readonly writes = "immediate" as const;

  constructor(
    readonly writer: SessionFileWriter,
    readonly location: string = writer.path,
  ) {}

  append(lines: readonly string[]): void {
    if (lines.length > 0) this.writer.append(joinLines(lines));
  }

  rewrite(lines: readonly string[]): void {
    this.writer.rewrite(joinLines(lines));
  }

  backup(): string {
    const target = `${this.writer.path}.bak-${backupStamp()}`;
    copyFileSync(this.writer.path, target);
    return target;
  }

  openSibling(header: { id: string; timestamp: string }): { backend: SessionBackend; location: string } {
    const file = join(dirname(this.writer.path), sessionFileName(header));
    return { backend: new FileBackend(new SessionFileWriter(file, { endsWithNewline: true })), location: file };
  }

  /** The file ends without a newline: the next append starts a new line. */
  markUnterminated(): void {
    this.writer.markUnterminated();
  }

  flush(): void {
    this.writer.flush();
  }

  close(): void {
    this.writer.close();
  }
}

/**
 * Opens a session file: the lock first (unless read-only), then the read, so nothing changes in
 * between. A missing or empty file is a session that does not exist yet.
 */
export function openFileSession(path: string, options: OpenSessionOptions = {}): OpenedSession {
  const file = resolve(path);
  if (!existsSync(file)) {
    if (options.readOnly) return { loaded: undefined, backend: undefined };
    const writer = new SessionFileWriter(file, { fsyncEachAppend: options.fsyncEachAppend, endsWithNewline: true });
    return { loaded: undefined, backend: new FileBackend(writer) };
  }
  const writer = options.readOnly ? undefined : new SessionFileWriter(file, { fsyncEachAppend: options.fsyncEachAppend, lock: true });
  try {
    let loaded: LoadedSession | undefined;
    try {
      loaded = loadSessionFile(file);
    } catch (error) {
      if (!(error instanceof SessionFileError && error.code === "EMPTY")) throw error;
    }
    const backend = writer ? new FileBackend(writer) : undefined;
    if (backend && loaded && !loaded.endsWithNewline) backend.markUnterminated();
    return { loaded, backend };
  } catch (error) {
    writer?.close();
    throw error;
  }
}

/**
 * The lines of a session file exactly as stored (a CR before a newline stays part of its line). A
 * last line with no newline that is not JSON is an interrupted write: reported, not returned.
 * Bytes that are not UTF-8 cannot become database text, so they are refused with the line number.
 */
export function readFileLines(path: string): StoredLines {
  const file = resolve(path);
  const data = readWhole(file);
  const lines: string[] = [];
  let start = 0;
  let lineNo = 0;
  while (start < data.length) {
    let end = data.indexOf(0x0a, start);
    const terminated = end !== -1;
    if (!terminated) end = data.length;
    lineNo++;
    const bytes = data.subarray(start, end);
    if (!isUtf8(bytes)) {
      throw new SessionFileError("UNREADABLE", file, "holds bytes that are not UTF-8; open it with bonsai and rewrite it (bonsai migrate) before copying", lineNo);
    }
    const text = bytes.toString("utf8");
    if (!terminated && !isJson(text)) return { lines, tornTail: { line: lineNo, bytes: bytes.length } };
    lines.push(text);
    start = end + 1;
  }
  return { lines };
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

function readWhole(file: string): Buffer {
  let size: number;
  try {
    const stat = statSync(file);
    if (!stat.isFile()) throw new SessionFileError("NOT_A_FILE", file, "is not a regular file");
    size = stat.size;
  } catch (error) {
    if (error instanceof SessionFileError) throw error;
    throw new SessionFileError("NOT_FOUND", file, "no such file");
  }
  const data = Buffer.allocUnsafe(size);
  const fd = openSync(file, "r");
  try {
    let done = 0;
    while (done < size) {
      const n = readSync(fd, data, done, size - done, done);
      if (n === 0) break;
      done += n;
    }
    return data.subarray(0, done);
  } finally {
    closeSync(fd);
  }
}

const SESSION_INFO = Buffer.from('"session_info"');

/** What `ls` shows for one file, read in one pass that parses only the header and session_info lines. */
export function summarizeFile(path: string): SessionSummary | undefined {
  const file = resolve(path);
  let header: Record<string, unknown> | undefined;
  let infoTitle: string | null | undefined;
  let entries = 0;
  let notSession = false;
  const { size } = forEachFileLine(file, (line) => {
    if (notSession || line.bytes.length === 0) return;
    if (!header) {
      try {
        const value = JSON.parse(line.bytes.toString("utf8"));
        if (value?.type === "session" && typeof value.id === "string") header = value;
        else notSession = true;
      } catch {
        notSession = true;
      }
      return;
    }
    entries++;
    if (line.bytes.indexOf(SESSION_INFO) === -1) return;
    try {
      const value = JSON.parse(line.bytes.toString("utf8"));
      if (value?.type === "session_info") infoTitle = (typeof value.name === "string" ? value.name : "").trim() || null;
    } catch {
      // a malformed line is the reader's to report
    }
  });
  if (!header || notSession) return undefined;
  const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);
  return {
    id: file,
    location: file,
    title: infoTitle !== undefined ? infoTitle : str(header.title),
    cwd: str(header.cwd),
    created: str(header.timestamp),
    updated: statSync(file).mtime.toISOString(),
    bytes: size,
    entryCount: entries,
  };
}

/**
 * The sessions in a directory and its subdirectories (bonsai's session directory holds one per
 * working directory), most recently written first. Sidecars (`.pruned.jsonl`) and files that do
 * not start with a session header are left out.
 */
export function listFileSessions(dir: string): SessionSummary[] {
  const root = resolve(dir);
  const stat = statSync(root, { throwIfNoEntry: false });
  if (!stat) throw new SessionFileError("NOT_FOUND", root, "no such directory");
  if (!stat.isDirectory()) {
    const one = summarizeFile(root);
    if (!one) throw new SessionFileError("BAD_HEADER", root, "not a session file", 1);
    return [one];
  }
  const found: SessionSummary[] = [];
  const walk = (d: string, depth: number) => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      if (entry.name.startsWith(".")) continue;
      const path = join(d, entry.name);
      if (entry.isDirectory() && depth < 3) walk(path, depth + 1);
      else if (entry.isFile() && entry.name.endsWith(".jsonl") && !entry.name.endsWith(".pruned.jsonl")) {
        try {
          const summary = summarizeFile(path);
          if (summary) found.push(summary);
        } catch {
          // unreadable files are not sessions we can list
        }
      }
    }
  };
  walk(root, 0);
  return found.sort((a, b) => (b.updated ?? "").localeCompare(a.updated ?? "") || a.id.localeCompare(b.id));
}

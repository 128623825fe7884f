/**
 * The file shell under SessionManager: appends as single writes of whole lines, atomic rewrites
 * (temp file, fsync, rename, fsync of the directory), and the writer lock.
 */
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, join } from "node:path";
import { acquireLock, type FileLock } from "./lock.js";

export interface AppendOptions {
  /** fsync after every append (durable against power loss; slower). Default false: flush() syncs. */
  fsyncEachAppend?: boolean;
}

export function writeAll(fd: number, data: Buffer): void {
  let written = 0;
  while (written < data.length) written += writeSync(fd, data, written, data.length - written);
}

/** Serializes entries as JSONL text, one line each. */
export function toJsonl(values: readonly unknown[]): string {
  let out = "";
  for (const v of values) out += `${JSON.stringify(v)}\n`;
  return out;
}

/** Replaces `path` with `content` atomically; a crash leaves either the old or the new file. */
export function writeFileAtomic(path: string, content: string | Buffer): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${basename(path)}.${randomBytes(6).toString("hex")}.tmp`);
  const fd = openSync(tmp, "wx", 0o644);
  try {
    try {
      writeAll(fd, typeof content === "string" ? Buffer.from(content, "utf8") : content);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, path);
  } catch (error) {
    // A failed write or rename (disk full, target is a directory) must not leave the temp file behind.
    try {
      unlinkSync(tmp);
    } catch {
      // nothing to clean
    }
    throw error;
  }
  fsyncDirectory(dir);
}

/** Makes a rename or unlink in `dir` durable, where the filesystem allows fsync on a directory. */
export function fsyncDirectory(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Some filesystems refuse fsync on directories; the rename or unlink itself has happened.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** A session file open for writing by this process. */
export class SessionFileWriter {
  private fd: number | undefined;
  private lock: FileLock | undefined;
  /** the file does not end in a newline (a torn or unterminated last line): start appends on a new line */
  private needsNewline: boolean;
  private closed = false;

  constructor(
    readonly path: string,
    options: { endsWithNewline?: boolean; lock?: boolean } & AppendOptions = {},
  ) {
    this.needsNewline = options.endsWithNewline === false;
    this.fsyncEachAppend = options.fsyncEachAppend ?? false;
    if (options.lock !== false) {
      // The lock file lives next to the session, so its directory must exist before the first append.
      mkdirSync(dirname(path), { recursive: true });
      this.lock = acquireLock(path);
    }
  }

  private readonly fsyncEachAppend: boolean;

  private openFd(): number {
    if (this.fd === undefined) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.fd = openSync(this.path, "a", 0o644);
    }
    return this.fd;
  }

  /**
   * Throws once close() ran: the lock is given back then, and a write after it could interleave
   * with the next writer's (a database writer refuses the same way).
   */
  checkOpen(): void {
    if (this.closed) throw new Error(`${this.path}: session is closed; open it again to write`);
  }

  /** Appends lines in one write. */
  append(text: string): void {
    this.checkOpen();
    const fd = this.openFd();
    const data = Buffer.from(this.needsNewline ? `\n${text}` : text, "utf8");
    writeAll(fd, data);
    this.needsNewline = false;
    if (this.fsyncEachAppend) fsyncSync(fd);
  }

  /** Replaces the whole file atomically and continues appending to the new file. */
  rewrite(text: string): void {
    this.checkOpen();
    this.closeFd();
    writeFileAtomic(this.path, text);
    this.needsNewline = false;
  }

  /** The file ends without a newline: the next append must start a new line. */
  markUnterminated(): void {
    this.needsNewline = true;
  }

  flush(): void {
    if (this.fd !== undefined) fsyncSync(this.fd);
  }

  private closeFd(): void {
    if (this.fd !== undefined) {
      closeSync(this.fd);
      this.fd = undefined;
    }
  }

  close(): void {
    this.closed = true;
    try {
      this.flush();
    } finally {
      this.closeFd();
      this.lock?.release();
      this.lock = undefined;
    }
  }
}

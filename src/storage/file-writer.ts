/**
 * The file shell under SessionManager: appends as single writes of whole lines, atomic rewrites
 * (temp file, fsync, rename, fsync of the directory), and the writer lock.
 *
 * A session reached through a symlink is locked and rewritten at the file the link points to, so
 * two writers that name it differently still exclude each other and the link stays a link. A file
 * with several hard links is not written: its names cannot share one lock, and a rewrite would
 * split them. Programs that append without a lock (pi takes none) lose nothing to a rewrite: the
 * lines that reached the file since it was read are carried into the new file before the rename.
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  realpathSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { randomBytes } from "node:crypto";
import { basename, dirname, join, resolve } from "node:path";
import { errorText, located } from "../util/error-text.js";
import type { RewriteOutcome } from "./types.js";
import { pause, takeBack, writeAll } from "./fd-io.js";
import { carryForeignLines } from "./foreign-lines.js";
import { acquireLock, type FileLock, removeStaleFiles } from "./lock.js";

export { writeAll } from "./fd-io.js";

export interface AppendOptions {
  /** fsync after every append (durable against power loss; slower). Default false: flush() syncs. */
  fsyncEachAppend?: boolean;
}

// the one JSONL serializer (format/lines.ts), where tests and tools have always found it; and lineId, where file.ts finds it
export { toJsonl } from "../format/lines.js";

/** The prefix of bonsai's temporary files beside `path`; stale ones are removed on the next open. */
export const tempPrefix = (path: string) => `.${basename(path)}.`;

/**
 * Replaces `path` with `content` atomically; a crash leaves either the old or the new file.
 * `beforeRename` may add to the temporary file (its descriptor) once `content` is in it and
 * synced, and returns how many bytes it added; it is called again until it adds none.
 */
export function writeFileAtomic(path: string, content: string | Buffer, beforeRename?: (fd: number) => number, like?: string): void {
  const dir = dirname(path);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `${tempPrefix(path)}${randomBytes(6).toString("hex")}.tmp`);
  const fd = openSync(tmp, "wx", 0o644);
  try {
    try {
      keepAccess(fd, statSync(path, { throwIfNoEntry: false }) ?? (like === undefined ? undefined : statSync(like, { throwIfNoEntry: false })));
      writeAll(fd, typeof content === "string" ? Buffer.from(content, "utf8") : content);
      fsyncSync(fd);
      // the slow fsync is done: what beforeRename adds now is synced again, until it adds nothing
      while (beforeRename && beforeRename(fd) > 0) fsyncSync(fd);
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

/**
 * Gives a new file the mode and owner of the one it replaces (or stands beside): a rewrite must
 * not make a 0600 session readable by others, nor, run as root, take a user's session away from
 * them (their agent's next append would fail). Only root can give a file away; others keep theirs.
 */
export function keepAccess(fd: number, of: { mode: number; uid: number; gid: number } | undefined): void {
  if (!of) return;
  fchmodSync(fd, of.mode & 0o7777);
  if (process.getuid?.() === 0 && (of.uid !== 0 || of.gid !== 0)) fchownSync(fd, of.uid, of.gid);
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

/**
 * The file a session path names: symlinks followed (also a link to a file not made yet), so a
 * lock and a rewrite act on the real file. Any other path is returned resolved.
 */
export function sessionTarget(path: string): string {
  let current = resolve(path);
  for (let hops = 0; hops < 40; hops++) {
    let link: string;
    try {
      if (!lstatSync(current).isSymbolicLink()) break;
      link = readlinkSync(current);
    } catch {
      break; // missing: a new file at this path
    }
    current = resolve(dirname(current), link);
  }
  try {
    return join(realpathSync(dirname(current)), basename(current));
  } catch {
    return current;
  }
}

/**
 * Whether this process may write the file at `path`: opened for appending (not created) and
 * closed, as the kernel decides (root and a process with CAP_DAC_OVERRIDE may write a 0444 file,
 * which access() denies to the latter; nobody writes on a read-only file system).
 */
export function writable(path: string): boolean {
  try {
    closeSync(openSync(path, constants.O_WRONLY | constants.O_APPEND));
    return true;
  } catch (error) {
    return !["EACCES", "EPERM", "EROFS"].includes((error as NodeJS.ErrnoException).code ?? "");
  }
}

/** An error with a one-line message about a session file that bonsai refuses to write. */
export class UnwritableSessionError extends Error {
  override name = "UnwritableSessionError";
}

/** A session file open for writing by this process. */
export class SessionFileWriter {
  private fd: number | undefined;
  private lock: FileLock | undefined;
  /** the file does not end in a newline (a torn or unterminated last line): start appends on a new line */
  private needsNewline: boolean;
  private closed = false;
  /** the file the path names (symlinks followed): what is locked, appended to and rewritten */
  readonly target: string;
  /** bytes of the file that the session has read (or written in a rewrite); later bytes may be another program's */
  private readTo = 0;
  /** ids of the lines this writer appended after `readTo`: its own, not another program's */
  private readonly appendedIds = new Set<string>();

  constructor(
    readonly path: string,
    options: { endsWithNewline?: boolean; lock?: boolean } & AppendOptions = {},
  ) {
    this.needsNewline = options.endsWithNewline === false;
    this.fsyncEachAppend = options.fsyncEachAppend ?? false;
    this.target = sessionTarget(path);
    const stat = statSync(this.target, { throwIfNoEntry: false });
    if (stat && stat.nlink > 1) {
      throw new UnwritableSessionError(
        `${path}: has ${stat.nlink} hard links, so bonsai does not write it (their names cannot share one lock, and a rewrite would split them); write a copy (bonsai copy) or open it read-only`,
      );
    }
    // refused before anything is done: a rewrite would still replace it (the folder allows it),
    // and a compaction would find out only at its append, after the summary was paid for
    if (stat?.isFile() && !writable(this.target)) {
      throw new UnwritableSessionError(`${path}: is not writable by this user (mode ${(stat.mode & 0o777).toString(8)}), so bonsai does not change it; open it read-only or write a copy (bonsai copy)`);
    }
    if (options.lock !== false) {
      // The lock file lives next to the session, so its directory must exist before the first append.
      mkdirSync(dirname(this.target), { recursive: true });
      this.lock = acquireLock(this.target);
      removeStaleTemps(this.target);
    }
  }

  /**
   * How many bytes of the file the session was read from: later lines are carried over by a
   * rewrite. `tornTailAt`: where a last line that could not be read starts; if another program
   * was still writing it, the rewrite carries it over whole once it is finished (left as it was
   * read, it is a torn write, dropped with the backup that keeps it).
   */
  setReadSize(bytes: number, tornTailAt?: number): void {
    this.readTo = bytes;
    this.tornTail = tornTailAt === undefined ? undefined : { at: tornTailAt, length: bytes - tornTailAt };
  }

  /** the last line as read at open when it was torn: where it starts and how long it was */
  private tornTail: { at: number; length: number } | undefined;

  private readonly fsyncEachAppend: boolean;

  private openFd(): number {
    if (this.fd === undefined) {
      mkdirSync(dirname(this.path), { recursive: true });
      this.fd = openSync(this.target, "a", 0o644);
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

  /** Appends lines in one write; `ownIds` are the entry ids they hold. */
  append(text: string, ownIds: Iterable<string> = []): void {
    this.checkOpen();
    const fd = this.openFd();
    const data = Buffer.from(this.needsNewline ? `\n${text}` : text, "utf8");
    // where the lines start, if no other program appends meanwhile: a write that fails part way is taken back to it
    const size = fstatSync(fd).size;
    let written = 0;
    try {
      while (written < data.length) written += writeSync(fd, data, written, data.length - written);
    } catch (error) {
      // part of the lines is in the file (a full disk): taken back, so none of them is (a torn
      // header would leave a file no one can open, a torn batch a leaf part of the way through)
      if (written > 0 && takeBack(fd, size, written)) written = 0;
      // unless another program appended after them: then the next append starts a new line, so
      // the torn bytes stay a line of their own (reported and skipped on reading) and glue to nothing
      if (written > 0) this.needsNewline = true;
      throw located(error, this.path);
    }
    // a rewrite must not take these for another program's lines
    for (const id of ownIds) this.appendedIds.add(id);
    this.needsNewline = false;
    if (this.fsyncEachAppend) fsyncSync(fd);
  }

  /**
   * Replaces the whole file atomically and continues appending to the new file. `ids` are the
   * entry ids `text` holds: lines that reached the file since it was read and hold another id
   * (or none) were written by another program, and are carried over, until the file stops growing.
   * They go after bonsai's: when one of them came before a line of bonsai's, the new file's last
   * line, which readers take as the leaf, is another program's where the old one's was bonsai's,
   * and the result says so (`leafDisplaced`), for the session to put its leaf back.
   */
  rewrite(text: string, ids: ReadonlySet<string> = new Set()): RewriteOutcome {
    this.checkOpen();
    this.closeFd();
    const content = Buffer.from(text, "utf8");
    const own = new Set([...ids, ...this.appendedIds]);
    let old: number | undefined;
    let othersAppend = false; // another program's lines were carried over
    let carriedEntries = 0; // of which readers take as entries
    let lastOwn = false; // the last entry the old file was seen to end with was bonsai's
    let size = content.length; // of the new file, as bonsai wrote it
    let notCarried: string | undefined;
    try {
      old = openSync(this.target, "r");
    } catch {
      // no file yet: nobody else can have written to it
    }
    try {
      // a torn last line is looked at again: another program may have finished writing it since
      const torn = this.tornTail;
      let scanned = torn?.at ?? this.readTo;
      let renamed = false;
      const carry = (to: number) => {
        const now = fstatSync(old!);
        if (now.size < scanned || (!renamed && statSync(this.target).ino !== now.ino)) {
          throw new Error(`${this.path}: was replaced or cut short by another program while bonsai rewrote it; nothing was changed, open it again`);
        }
        const unchanged = torn !== undefined && scanned === torn.at ? torn.length : undefined;
        const carried = carryForeignLines(old!, scanned, own, to, content.length > 0 && content[content.length - 1] !== 0x0a, unchanged);
        scanned = carried.read;
        size += carried.written;
        carriedEntries += carried.entries;
        if (carried.written > 0) othersAppend = true;
        if (carried.lastOwn !== undefined) lastOwn = carried.lastOwn;
        return carried.written;
      };
      writeFileAtomic(this.target, content, old === undefined ? undefined : carry);
      renamed = true;
      if (old !== undefined) {
        // A program that opened the old file just before the rename writes to it after: its
        // lines are appended to the new file, on a second look a moment later too. When another
        // program was seen appending, the old file is looked at for longer: on a busy machine that
        // program can be paused between its open and its write for more than a few milliseconds.
        // The rewrite is done: a failure now (a full disk) loses those late lines, not the rewrite.
        try {
          for (const wait of [0, 2, 10, 40]) {
            if (wait > 2 && !othersAppend) break;
            pause(wait);
            const to = openSync(this.target, "a");
            try {
              carry(to);
            } finally {
              closeSync(to);
            }
          }
        } catch (error) {
          notCarried = errorText(error);
        }
      }
    } catch (error) {
      throw located(error, this.path);
    } finally {
      if (old !== undefined) closeSync(old);
    }
    // Carried lines are not in the session's entries: the next rewrite must find them again.
    this.readTo = content.length;
    this.tornTail = undefined;
    this.appendedIds.clear();
    this.needsNewline = false;
    // bonsai's last entry is not the file's any more, and nothing was appended to the new file
    // since (another program's newer line is the leaf then, rightly)
    const displaced = carriedEntries > 0 && lastOwn && statSync(this.target, { throwIfNoEntry: false })?.size === size;
    return { leafDisplaced: displaced, ...(notCarried ? { notCarried } : {}) };
  }

  /**
   * Removes the file the writer made, keeping the lock until close(): a copy that failed after
   * writing a session where there was none takes it back. Carries nothing over: only a copy
   * that has just written the file asks for this.
   */
  remove(): void {
    this.checkOpen();
    this.closeFd();
    try {
      unlinkSync(this.target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    fsyncDirectory(dirname(this.target));
    this.readTo = 0;
    this.appendedIds.clear();
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

/**
 * Removes the temporary files a rewrite of `path` left when its process was killed before the
 * rename (`.<name>.<12 hex>.tmp`). Called with the writer lock held: no live writer of this
 * session can be using one.
 */
export function removeStaleTemps(path: string): void {
  removeStaleFiles(dirname(path), tempPrefix(path), (rest) => /^[0-9a-f]{12}\.tmp$/.test(rest));
}




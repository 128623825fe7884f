/**
 * The JSONL file store, the default, behind the same Store as the databases: an adapter over the
 * file shell (SessionFileWriter: one write per append, atomic rewrites, the lock file) and the file
 * reader. The format is unchanged: one session per file, one line per entry. Its archive of pruned
 * tool output is a sidecar file beside it (file-archive.ts).
 */
import { constants, copyFileSync, existsSync, statSync, unlinkSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { jsonlText, lineId } from "../format/lines.js";
import { prunedArchivePath, readSidecar, sidecarArchive } from "./file-archive.js";
import { readFileLines } from "./file-lines.js";
import { listFileSessions } from "./file-list.js";
import { SessionFileWriter } from "./file-writer.js";
import { backupStamp } from "./lines.js";
import { SessionFileError } from "./load.js";
import { READ_ENTRIES } from "./reads.js";
import { LocationError, type OpenedSession, type OpenSessionOptions, type RewriteOutcome, type SessionBackend, type SessionRead, type Store } from "./types.js";

export { backupStamp, readFileLines };

/**
 * One part of a file name made from stored data (a header's id or time): characters other than
 * letters, digits, `.`, `_` and `-` become `_`, and it is cut to `max` characters. A session id
 * such as `x/../../ESCAPED` must not place a file outside the folder it is written to.
 */
export const fileNamePart = (text: string, max: number): string => text.replace(/[^A-Za-z0-9._-]/g, "_").slice(0, max);

/**
 * The name bonsai gives a session file: `<header time>_<session id>.jsonl`, so names sort by
 * creation; both parts pass through fileNamePart, so the name never leaves its folder.
 */
export const sessionFileName = (header: { id: string; timestamp: string }) =>
  `${fileNamePart(header.timestamp.replace(/[:.]/g, "-"), 40)}_${fileNamePart(header.id, 160)}.jsonl`;

/** The entry ids the lines declare (lines without one are left out). */
function idsOf(lines: readonly string[]): string[] {
  const ids: string[] = [];
  for (const line of lines) {
    const id = lineId(line);
    if (id !== undefined) ids.push(id);
  }
  return ids;
}

/** A session file open for writing; holds `<file>.lock` until close(). */
export class FileBackend implements SessionBackend {
  readonly kind = "file" as const;
  readonly writes = "immediate" as const;

  constructor(
    readonly writer: SessionFileWriter,
    readonly location: string = writer.path,
  ) {}

  append(lines: readonly string[]): void {
    if (lines.length > 0) this.writer.append(jsonlText(lines), idsOf(lines));
  }

  rewrite(lines: readonly string[]): RewriteOutcome {
    if (lines.length > 0) return this.writer.rewrite(jsonlText(lines), new Set(idsOf(lines)));
    this.writer.remove();
    return { leafDisplaced: false };
  }

  backup(): string {
    this.writer.checkOpen();
    for (;;) {
      const target = `${this.writer.target}.bak-${backupStamp()}`;
      try {
        copyFileSync(this.writer.target, target, constants.COPYFILE_EXCL); // never over another backup
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "EEXIST") continue;
        throw error;
      }
      this.backups.add(target);
      return target;
    }
  }

  discardBackup(location: string): void {
    if (!this.backups.delete(location)) throw new Error(`${location}: not a backup this writer made`);
    unlinkSync(location);
  }

  /** the backups made by this writer, which alone it may discard */
  private readonly backups = new Set<string>();

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
 * between. A missing or empty file is a session that does not exist yet (see mustExist).
 */
export function openFile<T extends { endsWithNewline: boolean }>(
  path: string,
  read: SessionRead<T>,
  options: OpenSessionOptions = {},
): OpenedSession<T> {
  const file = resolve(path);
  const found = statSync(file, { throwIfNoEntry: false });
  if (found && !found.isFile()) {
    throw new SessionFileError("NOT_A_FILE", file, found.isDirectory() ? "is a directory, not a session file" : "is not a regular file");
  }
  if (!found) {
    if (options.mustExist) throw new SessionFileError("NOT_FOUND", file, "no such file");
    if (options.readOnly) return { loaded: undefined, backend: undefined };
    const writer = new SessionFileWriter(file, { fsyncEachAppend: options.fsyncEachAppend, endsWithNewline: true });
    return { loaded: undefined, backend: new FileBackend(writer) };
  }
  const writer = options.readOnly ? undefined : new SessionFileWriter(file, { fsyncEachAppend: options.fsyncEachAppend, lock: true });
  try {
    let loaded: T | undefined;
    try {
      loaded = read.file(file);
    } catch (error) {
      // an empty file holds nothing to lose: a new session starts in it, under the lock
      if (!(error instanceof SessionFileError && error.code === "EMPTY") || (options.mustExist && !writer)) throw error;
    }
    // every read here reports the bytes it read (LoadedSession.size), which later rewrites start from
    const seen = loaded as { size?: number; tornTailAt?: number } | undefined;
    writer?.setReadSize(seen?.size ?? 0, seen?.tornTailAt);
    const backend = writer ? new FileBackend(writer) : undefined;
    if (backend && loaded && !loaded.endsWithNewline) backend.markUnterminated();
    return { loaded, backend };
  } catch (error) {
    writer?.close();
    throw error;
  }
}

/** Opens a session file and reads every entry (openFile with READ_ENTRIES). */
export function openFileSession(path: string, options: OpenSessionOptions = {}): OpenedSession {
  return openFile(path, READ_ENTRIES, options);
}

/** A file holds one session; its location is its path. */
export const FILE_STORE: Store<"file"> = {
  kind: "file",
  form: "a file path",
  schemes: ["file"],
  parseLocation(text, scheme) {
    if (scheme === undefined) return { kind: "file", path: text };
    try {
      return { kind: "file", path: fileURLToPath(text) };
    } catch (error) {
      throw new LocationError(text, `not a usable file URL (${(error as Error).message})`);
    }
  },
  formatLocation: (location) => location.path,
  sessionName: (location) => resolve(location.path),
  sessionKey: (location) => location.path,
  sessionIdOf: () => undefined,
  withSessionId(location) {
    throw new Error(`${location.path}: a file holds one session; it has no session ids`);
  },
  newSessionAt: (store, header) => ({ kind: "file", path: join(resolve(store.path), sessionFileName(header)) }),
  copyTarget(to, _header, fileName) {
    const path = resolve(to.path);
    const isDir = to.path.endsWith("/") || (existsSync(path) && statSync(path).isDirectory());
    return { kind: "file", path: isDir ? join(path, fileName) : path };
  },
  fileNameOf: (location) => basename(location.path),
  sameSession: (a, b) => resolve(a.path) === resolve(b.path),
  namesStore: () => false,
  resolvedAgainst: (location, cwd) => ({ ...location, path: resolve(cwd, location.path) }),

  open: async (location, read, options) => openFile(location.path, read, options),
  openSync: (location, read, options) => openFile(location.path, read, options),
  list: async (store, onWarning) => listFileSessions(store.path, onWarning),
  async readLines(location) {
    try {
      return readFileLines(location.path);
    } catch (error) {
      if ((error as { code?: string }).code === "NOT_FOUND") return undefined;
      throw error;
    }
  },
  // a file keeps any line it is given, byte for byte
  checkLines() {},

  archiveLocation: (location) => prunedArchivePath(resolve(location.path)),
  readArchive: async (location) => readSidecar(prunedArchivePath(resolve(location.path)), "; nothing copied"),
  // the session file's lock, which `backend` holds, covers its sidecar
  archive: (location) => sidecarArchive(resolve(location.path)),
};

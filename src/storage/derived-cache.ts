/**
 * Values worked out from a session file that stay true while the file is only appended to (what
 * each compaction dropped: its span is fixed once it is written), kept by id in the open index's
 * folder (open-index-file.ts: same place, privacy, sweep and `BONSAI_INDEX=off`) so the next
 * export or `bonsai view` of a large session does not work them out again.
 *
 * - A cache holds what its caller stores, which may be text of the session (dropped facts are
 *   sentences of it): it is private to the user like the index, and goes with the index folder.
 * - Valid only for the same file (device and inode) that still begins with the bytes it had when
 *   the values were read (its size then, and a hash of 20 blocks spread over them; when it has
 *   not grown, the same modification time too: the open index's rule, stillBegins), and for the
 *   same `version` (the caller's format and bonsai's version: an upgrade may work values out
 *   differently). Anything else (another file, a rewrite by any program, a torn or foreign cache
 *   file, a value of the wrong shape) is ignored and worked out again.
 * - The file's identity is taken when the cache is opened, before the session is read, and saved
 *   with the values: values worked out from a file that was rewritten meanwhile are never used.
 *   The caller checks that the session it read came from that file (`describes`).
 */
import { closeSync, openSync, readFileSync, realpathSync } from "node:fs";
import { type FileMark, identityAt, identityOf, openIndexPath, sampleHash, stillBegins, writeCacheFile } from "./open-index-file.js";

const FORMAT = 1;

export interface DerivedCache<T> {
  /** the values by id: those still valid from the cache, then whatever the caller adds */
  readonly values: Map<string, T>;
  /** whether `file` (a session's file, as its manager names it) is the file this cache is for */
  describes(file: string | undefined): boolean;
  /** keeps the values when the caller added any; never throws */
  save(): void;
}

interface Stored {
  format: number;
  version: string;
  path: string;
  file: FileMark & { mtimeNs: string };
  values: unknown;
}

function readStored(where: string): Stored | undefined {
  try {
    const stored = JSON.parse(readFileSync(where, "utf8")) as Stored;
    const file = stored?.file;
    if (stored.format !== FORMAT || typeof stored.version !== "string" || typeof stored.path !== "string") return undefined;
    if (typeof file !== "object" || file === null || typeof file.dev !== "string" || typeof file.ino !== "string" || typeof file.sample !== "string" || typeof file.mtimeNs !== "string") return undefined;
    if (!Number.isSafeInteger(file.bytes)) return undefined;
    return stored;
  } catch {
    return undefined;
  }
}

const noCache = <T>(): DerivedCache<T> => ({ values: new Map(), describes: () => false, save: () => undefined });

function sameFile(path: string, file: { dev: string; ino: string }): boolean {
  const now = identityAt(path);
  return now !== undefined && now.dev === file.dev && now.ino === file.ino;
}

function realPath(file: string): string | undefined {
  try {
    return realpathSync(file);
  } catch {
    return undefined;
  }
}

/**
 * The file at `real` as it is now, and the stored values of `where` when the file still begins
 * with the bytes they were read from (the open index's rule, stillBegins); undefined when the
 * file cannot be read.
 */
function markAndValues(real: string, where: string, version: string): { file: Stored["file"]; stored: Stored | undefined } | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(real, "r");
    const now = identityOf(fd);
    const read = readStored(where);
    const stored = read && read.version === version && read.path === real && stillBegins(fd, read.file, now) ? read : undefined;
    // the same bytes as the stored mark (size and samples just checked): its hash is theirs
    const sample = stored && stored.file.bytes === now.size ? stored.file.sample : sampleHash(fd, now.size);
    return { file: { dev: now.dev, ino: now.ino, mtimeNs: now.mtimeNs, bytes: now.size, sample }, stored };
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * How a cache keeps its values when not as a JSON object by id (many small values are read back
 * faster as columns): `decode` gives only the values of the right shape, and an empty map for
 * stored data it does not read.
 */
export interface ValuesCodec<T> {
  decode(stored: unknown): Map<string, T>;
  encode(values: ReadonlyMap<string, T>): unknown;
}

/** Values stored as they are, by id, each kept when `isValue` holds. */
const byId = <T>(isValue: (value: unknown) => value is T): ValuesCodec<T> => ({
  decode(stored) {
    const values = new Map<string, T>();
    if (typeof stored !== "object" || stored === null || Array.isArray(stored)) return values;
    for (const [id, value] of Object.entries(stored)) if (isValue(value)) values.set(id, value);
    return values;
  },
  encode: (values) => Object.fromEntries(values),
});

/**
 * The cache named `name` of the session file at `path`: open it before reading the session, check
 * that the session came from it (`describes`), add what is worked out to `values`, then `save()`.
 * A location that is not a file, or indexes turned off, gives an empty cache that keeps nothing.
 * `isValue` checks each value read back; a codec reads and writes them all at once.
 */
export function derivedCache<T>(path: string, name: string, version: string, isValue: ((value: unknown) => value is T) | ValuesCodec<T>, env: NodeJS.ProcessEnv = process.env): DerivedCache<T> {
  const codec = typeof isValue === "function" ? byId(isValue) : isValue;
  const at = openIndexPath(path, env);
  const where = at?.where.replace(/\.json$/, `.${name}.json`);
  const found = at && where ? markAndValues(at.real, where, version) : undefined;
  if (!at || !where || !found) return noCache();
  const { file, stored } = found;
  const values = stored ? codec.decode(stored.values) : new Map<string, T>();
  const known = values.size;
  return {
    values,
    // the same path, and still the file the values were checked against (not one renamed over it since)
    describes: (other) => other !== undefined && realPath(other) === at.real && sameFile(at.real, file),
    save() {
      // stored with the bytes as they were before the session was read: values worked out from a
      // file rewritten meanwhile are then never used, since the file no longer begins with them
      if (values.size === known) return;
      const data: Stored = { format: FORMAT, version, path: at.real, file, values: codec.encode(values) };
      writeCacheFile(where, Buffer.from(JSON.stringify(data)));
    },
  };
}

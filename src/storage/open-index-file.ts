/**
 * The open index on disk: a cache that lets the next open of a large session file replay what the
 * last one read (open-index.ts) and read only the lines appended since, instead of every line.
 *
 * - Where: `$BONSAI_INDEX_DIR`, else `$BONSAI_DIR/index` or `~/.bonsai/index`, one file per session
 *   named by a hash of its real path, private to the user (0700 folder, 0600 files). Never beside
 *   the session: a session folder may be another agent's, read-only, or a git working tree, and
 *   nobody else's file or folder is changed. `BONSAI_INDEX=off` turns it off.
 * - Valid only for the same file (device and inode), not shorter than the bytes it covers, the last
 *   covered byte a newline, the same bytes at 20 places spread over the covered range (the head,
 *   the end and 18 between, hashed), and, when the file has not grown, the same modification time.
 *   Lines appended since, by bonsai or any other writer, are read from where the index ends; a file
 *   rewritten by another program fails these checks and is read in full. An index that cannot be
 *   read, parsed or replayed is ignored the same way, and one that cannot be written is not.
 * - Indexes of sessions that are gone (a temporary copy, a deleted session) are swept when one is
 *   written: those not written for KEEP_DAYS days, and the oldest beyond KEEP_FILES.
 * - Written after an open that read at least WRITE_AFTER_BYTES the index did not cover
 *   (`BONSAI_INDEX_MIN_BYTES` sets another figure; the test suite uses 0, so every open it makes
 *   goes through an index).
 */
import { createHash, randomBytes } from "node:crypto";
import { type BigIntStats, closeSync, fstatSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, realpathSync, renameSync, statSync, unlinkSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { writeAll } from "./fd-io.js";
import type { BodyLoading, EntrySink } from "./load-types.js";
import { CallColumns, type CallSource, RecordingSink, replaySinkCalls } from "./open-index.js";
import { decodeIndex, encodeIndex } from "./open-index-codec.js";
import { forEachDescriptorLine } from "./read-lines.js";
import { type ReaderState, SessionReader } from "./session-reader.js";

const FORMAT = 2;
const KEEP_DAYS = 30;
const KEEP_FILES = 500;
/** An open that read fewer new bytes than this leaves the index as it is: reading them again costs little. */
export const WRITE_AFTER_BYTES = 256 * 1024;
const SAMPLES = 20;
const SAMPLE_BYTES = 4096;

/** Where the open index of the session at `path` is kept (and the session's real path), or undefined when indexes are off. */
export function openIndexPath(path: string, env: NodeJS.ProcessEnv = process.env): { where: string; real: string } | undefined {
  if (/^(off|0|false|no)$/i.test(env.BONSAI_INDEX ?? "")) return undefined;
  const dir = env.BONSAI_INDEX_DIR || join(env.BONSAI_DIR || join(homedir(), ".bonsai"), "index");
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return undefined;
  }
  return { where: join(dir, `${createHash("sha256").update(real).digest("hex").slice(0, 32)}.json`), real };
}

export interface FileIdentity {
  dev: string;
  ino: string;
  mtimeNs: string;
  size: number;
}

const identity = (stat: BigIntStats): FileIdentity => ({ dev: String(stat.dev), ino: String(stat.ino), mtimeNs: String(stat.mtimeNs), size: Number(stat.size) });

export const identityOf = (fd: number): FileIdentity => identity(fstatSync(fd, { bigint: true }));

/** identityOf the file at `path`, or undefined when there is none to see. */
export function identityAt(path: string): FileIdentity | undefined {
  try {
    return identity(statSync(path, { bigint: true }));
  } catch {
    return undefined;
  }
}

/** A hash of SAMPLES blocks spread over the first `bytes` bytes of the file: the head and the end always among them. */
export function sampleHash(fd: number, bytes: number): string {
  const hash = createHash("sha256").update(String(bytes));
  const block = Buffer.allocUnsafe(SAMPLE_BYTES);
  const last = Math.max(0, bytes - SAMPLE_BYTES);
  for (let i = 0; i < SAMPLES; i++) {
    const at = Math.floor((last * i) / (SAMPLES - 1));
    const n = readSync(fd, block, 0, Math.min(SAMPLE_BYTES, bytes - at), at);
    hash.update(block.subarray(0, n));
  }
  return hash.digest("hex");
}

/** What a file of the index folder says about the session file it was made from (the open index, a derived cache). */
export interface FileMark {
  dev: string;
  ino: string;
  /** null: the modification time vouches for nothing (the file grew while it was read) */
  mtimeNs: string | null;
  bytes: number;
  sample: string;
}

/**
 * Whether the file open at `fd`, whose identity is `now`, still begins with the bytes `mark`
 * describes: the same device and inode, not shorter, the same modification time when it has not
 * grown, and the same sampled blocks.
 */
export function stillBegins(fd: number, mark: FileMark, now: FileIdentity): boolean {
  if (mark.dev !== now.dev || mark.ino !== now.ino || now.size < mark.bytes) return false;
  if (now.size === mark.bytes && mark.mtimeNs !== now.mtimeNs) return false;
  return sampleHash(fd, mark.bytes) === mark.sample;
}

interface StoredHead {
  format: number;
  path: string;
  file: FileMark;
  state: ReaderState;
  /** every entry call of the read was accepted (no id came twice): a replay needs no duplicate check */
  distinct?: boolean;
}

type StoredIndex = StoredHead & { calls: CallColumns };
type ReadIndex = StoredHead & { calls: CallSource };

const isRange = (value: unknown): boolean => {
  const range = value as { line?: unknown; offset?: unknown; length?: unknown } | null;
  return typeof range === "object" && range !== null && Number.isSafeInteger(range.line) && Number.isSafeInteger(range.offset) && Number.isSafeInteger(range.length);
};

/** Whether a stored state has every field a resumed reader needs, of the right type. */
function isState(state: ReaderState): boolean {
  if (!Number.isSafeInteger(state.lines) || !Number.isSafeInteger(state.deferred) || !isRange(state.header)) return false;
  if (state.titleSlot !== undefined && !isRange(state.titleSlot)) return false;
  if (state.lastDeferredId !== undefined && typeof state.lastDeferredId !== "string") return false;
  if (!Array.isArray(state.issues) || !Array.isArray(state.unknownTypes)) return false;
  const issueOk = (issue: ReaderState["issues"][number]) =>
    typeof issue === "object" && issue !== null && typeof issue.kind === "string" && typeof issue.message === "string" && Number.isSafeInteger(issue.line) && typeof issue.skipped === "boolean";
  const typeOk = (t: ReaderState["unknownTypes"][number]) =>
    Array.isArray(t) && typeof t[0] === "string" && Number.isSafeInteger(t[1]) && t[1] >= 0 && t[1] < state.issues.length && Number.isSafeInteger(t[2]);
  return state.issues.every(issueOk) && state.unknownTypes.every(typeOk);
}

/** The stored index when it still describes this file, else undefined. */
function readStored(where: string, real: string, fd: number, now: FileIdentity): ReadIndex | undefined {
  let decoded: ReturnType<typeof decodeIndex>;
  try {
    decoded = decodeIndex(readFileSync(where));
  } catch {
    return undefined;
  }
  if (!decoded) return undefined;
  const stored = decoded.head as unknown as StoredHead;
  const { file, state } = stored;
  if (stored.format !== FORMAT || stored.path !== real || typeof file !== "object" || file === null || typeof state !== "object" || state === null) return undefined;
  if (!Number.isSafeInteger(file.bytes) || file.bytes <= 0 || state.bytes !== file.bytes || !isState(state)) return undefined;
  if (!stillBegins(fd, file, now)) return undefined;
  const newline = Buffer.alloc(1);
  if (readSync(fd, newline, 0, 1, file.bytes - 1) !== 1 || newline[0] !== 0x0a) return undefined;
  return { ...stored, calls: decoded.calls };
}

/** Writes the index through a temp file and a rename, so a reader sees the old one or the new one whole; any failure leaves none. */
function writeStored(where: string, stored: StoredIndex): void {
  const { calls, ...head } = stored;
  const data = encodeIndex(head, calls);
  if (data) writeCacheFile(where, data);
}

/**
 * Writes a file of the index folder (an index, a derived cache) through a temp file and a rename,
 * so a reader sees the old one or the new one whole, then sweeps the folder; any failure leaves
 * no file and is not an error: a full disk or a read-only home only means the next read does
 * the work again.
 */
export function writeCacheFile(where: string, data: Uint8Array): void {
  const tmp = `${where}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  let fd: number | undefined;
  try {
    mkdirSync(join(where, ".."), { recursive: true, mode: 0o700 });
    fd = openSync(tmp, "wx", 0o600);
    writeAll(fd, data);
    // forgotten before the close: a close that fails (EIO, a quota reported at close) has still
    // released it, and closing it again would throw out of here
    const written = fd;
    fd = undefined;
    closeSync(written);
    renameSync(tmp, where);
    sweep(join(where, ".."), where);
  } catch {
    try {
      if (fd !== undefined) closeSync(fd);
    } catch {
      // released anyway
    }
    try {
      unlinkSync(tmp);
    } catch {
      // never created
    }
  }
}

/** Removes the indexes in `dir` not written for KEEP_DAYS days, and the oldest beyond KEEP_FILES (never `keep`). */
function sweep(dir: string, keep: string): void {
  const now = Date.now();
  const files: { path: string; at: number }[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".json")) continue;
    const path = join(dir, name);
    if (path === keep) continue;
    try {
      files.push({ path, at: statSync(path).mtimeMs });
    } catch {
      // removed by another process meanwhile
    }
  }
  files.sort((a, b) => b.at - a.at);
  files.forEach((file, i) => {
    if (i < KEEP_FILES - 1 && now - file.at < KEEP_DAYS * 86_400_000) return;
    try {
      unlinkSync(file.path);
    } catch {
      // removed by another process meanwhile
    }
  });
}

/** Removes the open index of the session at `path` (one found to be stale); nothing when there is none. */
export function forgetOpenIndex(path: string, env: NodeJS.ProcessEnv = process.env): void {
  const at = openIndexPath(path, env);
  try {
    if (at) unlinkSync(at.where);
  } catch {
    // none, or removed meanwhile
  }
}

export interface IndexedRead {
  reader: SessionReader;
  size: number;
  /** bytes read from the file's lines (not from the index): the whole file when there was no usable index */
  scanned: number;
}

/**
 * Reads the session file open at `fd` into `index`: from its open index and the lines after it when
 * the index still describes the file, else every line; then keeps a new index when this read covered
 * enough new bytes. The reader ends as a read of every line would have.
 */
export function readThroughOpenIndex(path: string, fd: number, bodies: BodyLoading, index: EntrySink, env: NodeJS.ProcessEnv = process.env): IndexedRead {
  const at = openIndexPath(path, env);
  const before = identityOf(fd);
  let stored: ReturnType<typeof readStored>;
  try {
    stored = at && readStored(at.where, at.real, fd, before);
  } catch {
    // an index whose head is not what this code wrote (a field of another type): none
    stored = undefined;
  }
  let reader: SessionReader | undefined;
  let earlier: CallSource | undefined;
  let from = { offset: 0, lines: 0 };
  if (stored) {
    const text = (offset: number, length: number) => {
      const buffer = Buffer.allocUnsafe(length);
      return buffer.toString("utf8", 0, readSync(fd, buffer, 0, length, offset));
    };
    const replayed = replaySinkCalls(stored.calls, index, text, stored.distinct === true);
    if (replayed) {
      earlier = stored.calls;
      from = { offset: stored.state.bytes, lines: stored.state.lines };
      reader = SessionReader.resume(stored.state, replayed.header, replayed.titleSlotText, bodies, index);
    }
  }
  // calls are recorded only when this read will be long enough to be worth a new index
  const writeAfter = Math.max(1, env.BONSAI_INDEX_MIN_BYTES ? Number(env.BONSAI_INDEX_MIN_BYTES) : WRITE_AFTER_BYTES);
  const recorder = at && before.size - from.offset >= writeAfter ? new RecordingSink(index, true) : undefined;
  if (reader && recorder) reader.redirect(recorder);
  reader ??= new SessionReader(bodies, recorder ?? index);
  const { size } = forEachDescriptorLine(fd, reader.onLine, from);
  const state = reader.stateAt(size);
  if (at && recorder?.complete && state && state.bytes - from.offset >= writeAfter) {
    const after = identityOf(fd);
    recorder.calls.keepThrough(state.lines);
    const calls = earlier ? CallColumns.of(earlier, recorder.calls) : recorder.calls;
    // the modification time vouches for the bytes only when nothing was appended while they were read
    const mtimeNs = after.size === state.bytes ? after.mtimeNs : null;
    const distinct = recorder.distinct && (!earlier || stored?.distinct === true);
    writeStored(at.where, { format: FORMAT, path: at.real, file: { dev: after.dev, ino: after.ino, mtimeNs, bytes: state.bytes, sample: sampleHash(fd, state.bytes) }, state, distinct, calls });
  }
  return { reader, size, scanned: size - from.offset };
}

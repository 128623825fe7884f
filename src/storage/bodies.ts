/**
 * Entries whose bodies stay in the file. Message lines are most of a session's bytes, and a
 * context only needs the ones after the latest compaction, so the loader can keep just what the
 * tree needs (type, id, parent, role) and where the line is; the body is read back and parsed
 * when something asks for the entry. Reads go through a descriptor opened with the file, so an
 * atomic rewrite by another writer (a rename) does not move the bytes under us.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { decodeLine } from "../format/lines.js";
import type { SessionEntry } from "../format/entry-types.js";
import { validateEntry } from "../format/validate.js";

/** Where the body of an entry that was not kept is, and what it must turn out to be. */
export interface DeferredBody {
  readonly id: string;
  readonly type: string;
  /** the parent id the entry was indexed with, when the reader should check it (the tree's nodes) */
  readonly parentId?: string | null;
  /** 1-based line number, for errors */
  readonly line: number;
  /** byte range of the line */
  readonly offset: number;
  readonly length: number;
}

const Q = 0x22;
const BACKSLASH = 0x5c;
const PREFIX_ID = Buffer.from('{"type":"message","id":"');
const PREFIX_PARENT = Buffer.from('","parentId":');
const NULL = Buffer.from("null");
const PREFIX_TIMESTAMP = Buffer.from(',"timestamp":"');
const PREFIX_MESSAGE = Buffer.from('","message":{"role":"');

function startsWithAt(bytes: Buffer, at: number, limit: number, expected: Buffer): boolean {
  if (at + expected.length > limit) return false;
  for (let i = 0; i < expected.length; i++) if (bytes[at + i] !== expected[i]) return false;
  return true;
}

/** The end of a plain string starting at `from` (no escapes, no control bytes), or -1. */
function plainStringEnd(bytes: Buffer, from: number, limit: number): number {
  for (let i = from; i < limit; i++) {
    const b = bytes[i];
    if (b === Q) return i;
    if (b === BACKSLASH || b < 0x20) return -1;
  }
  return -1;
}

/** Whether bytes[from, to) are the ASCII characters of `text`. */
function equalsAscii(bytes: Buffer, from: number, to: number, text: string): boolean {
  if (to - from !== text.length) return false;
  for (let i = 0; i < text.length; i++) {
    const b = bytes[from + i];
    // a byte of a multi-byte character could equal a char code of 0x80-0xff by accident
    if (b >= 0x80 || b !== text.charCodeAt(i)) return false;
  }
  return true;
}

/** The usual roles as shared strings, so a million entries do not hold a million copies. */
const ROLES = ["user", "assistant", "toolResult", "bashExecution", "custom"].map((role) => ({ role, bytes: Buffer.from(`${role}"`) }));

function roleAt(bytes: Buffer, at: number, end: number): string {
  for (const { role, bytes: expected } of ROLES) {
    if (end - at === role.length && startsWithAt(bytes, at, end + 1, expected)) return role;
  }
  return bytes.toString("utf8", at, end);
}

/** What the start of a message line says, and where the rest of it begins. */
export interface MessagePrefix {
  id: string;
  parentId: string | null;
  role: string;
  /**
   * The position after the role's closing quote. Everything before it is well-formed JSON that
   * leaves two objects open (the entry and its message) after a complete member.
   */
  bodyAt: number;
}

/**
 * Reads type, id, parentId and role off a message line in the shape pi and bonsai write
 * (`{"type":"message","id":…,"parentId":…,"timestamp":…,"message":{"role":…`) without parsing
 * the rest. Anything else (another type, another key order, escapes, a line that does not end
 * in `}`) gives undefined and the caller parses the line in full.
 */
export function readMessagePrefix(
  bytes: Buffer,
  start = 0,
  end = bytes.length,
  /** the id of the line before, handed back as parentId when it matches: no new string for the usual case */
  previousId?: string,
): MessagePrefix | undefined {
  if (end <= start || bytes[end - 1] !== 0x7d || !startsWithAt(bytes, start, end, PREFIX_ID)) return undefined;
  let at = start + PREFIX_ID.length;
  const idEnd = plainStringEnd(bytes, at, end);
  if (idEnd <= at) return undefined;
  const id = bytes.toString("utf8", at, idEnd);
  at = idEnd;
  if (!startsWithAt(bytes, at, end, PREFIX_PARENT)) return undefined;
  at += PREFIX_PARENT.length;
  let parentId: string | null;
  if (startsWithAt(bytes, at, end, NULL)) {
    parentId = null;
    at += NULL.length;
  } else if (bytes[at] === Q) {
    const parentEnd = plainStringEnd(bytes, at + 1, end);
    if (parentEnd === -1) return undefined;
    parentId = previousId !== undefined && equalsAscii(bytes, at + 1, parentEnd, previousId) ? previousId : bytes.toString("utf8", at + 1, parentEnd);
    at = parentEnd + 1;
  } else return undefined;
  if (!startsWithAt(bytes, at, end, PREFIX_TIMESTAMP)) return undefined;
  at += PREFIX_TIMESTAMP.length;
  const timestampEnd = plainStringEnd(bytes, at, end);
  if (timestampEnd === -1) return undefined;
  at = timestampEnd;
  if (!startsWithAt(bytes, at, end, PREFIX_MESSAGE)) return undefined;
  at += PREFIX_MESSAGE.length;
  const roleEnd = plainStringEnd(bytes, at, end);
  if (roleEnd <= at) return undefined;
  return { id, parentId, role: roleAt(bytes, at, roleEnd), bodyAt: roleEnd + 1 };
}

/**
 * A deferred body that is well-formed JSON but not a valid entry: the line was damaged when it was
 * written, unlike a file changed since it was opened. SessionManager answers it by reading the
 * file again in full, so the line is skipped and reported as an open with bodies: "parsed" would.
 */
export class InvalidBodyError extends Error {
  constructor(
    readonly path: string,
    readonly line: number,
    readonly entryId: string,
    readonly problem: string,
    /** the line is a valid entry, but not the one the open indexed (an open index that went stale): nothing to report */
    readonly stale = false,
  ) {
    super(`${path}:${line}: entry ${entryId} is not a valid entry (${problem}); fix or remove that line`);
    this.name = "InvalidBodyError";
  }
}

/** A read of several lines at once stays under this size unless one line is larger. */
const WINDOW = 8 << 20;
/** Lines closer than this are read in one go, gap included. */
const GAP = 64 << 10;

const finalizer = new FinalizationRegistry<number>((fd) => {
  try {
    closeSync(fd);
  } catch {
    // already closed
  }
});

/**
 * Reads deferred entries back from the file they were loaded from. `validatedAtLoad` says the lines
 * were parsed and validated at load (bodies: "parsed"); otherwise the body is validated here, and
 * an invalid one throws.
 */
export class BodyReader {
  private fd: number | undefined;

  /** Takes over `fd`, the descriptor the lines were loaded through. */
  constructor(
    readonly path: string,
    fd: number,
    private readonly validatedAtLoad: boolean,
  ) {
    this.adopt(fd);
  }

  private adopt(fd: number): void {
    this.fd = fd;
    finalizer.register(this, fd, this);
  }

  /** Entries for `deferred`, in the same order. */
  read(deferred: readonly DeferredBody[]): SessionEntry[] {
    const out = new Array<SessionEntry>(deferred.length);
    readRanges(deferred, (buffer, size, position) => this.readExactly(buffer, size, position), (i, bytes) => {
      out[i] = this.parse(deferred[i], bytes);
    });
    return out;
  }

  /** Releases the descriptor; a later read opens the file again by path (and still checks what it reads). */
  close(): void {
    if (this.fd === undefined) return;
    finalizer.unregister(this);
    closeSync(this.fd);
    this.fd = undefined;
  }

  private readExactly(buffer: Buffer, size: number, position: number): void {
    if (this.fd === undefined) this.adopt(openSync(this.path, "r"));
    let done = 0;
    while (done < size) {
      const n = readSync(this.fd!, buffer, done, size - done, position + done);
      if (n === 0) throw this.changed(undefined, "the file is shorter than when it was opened");
      done += n;
    }
  }

  private parse(d: DeferredBody, bytes: Buffer): SessionEntry {
    let value: unknown;
    try {
      value = JSON.parse(decodeLine(bytes).text);
    } catch (error) {
      throw this.changed(d, `not JSON (${(error as Error).message.slice(0, 80)})`);
    }
    const entry = value as SessionEntry;
    if (entry?.id !== d.id || entry.type !== d.type) {
      // The index read the first `id` and `type` of the line; JSON.parse keeps the last. When the
      // line still starts as it did at open, the key is written twice, and the file is not changed.
      if (bytes.subarray(0, PREFIX_ID.length + Buffer.byteLength(d.id) + 1).equals(Buffer.from(`{"type":"message","id":"${d.id}"`))) {
        const key = entry?.id !== d.id ? "id" : "type";
        const kept = key === "id" ? entry?.id : entry?.type;
        throw new InvalidBodyError(this.path, d.line, d.id, `the key \`${key}\` appears more than once; its last value ${JSON.stringify(kept)} is the one JSON.parse keeps`);
      }
      throw this.changed(d, `it now holds entry ${String(entry?.id)}`);
    }
    if (!this.validatedAtLoad) {
      const problem = validateEntry(value, true);
      if (problem) throw new InvalidBodyError(this.path, d.line, d.id, problem);
    }
    // the tree was built with another parent: an open index that another program's rewrite left
    // stale, or a parentId written twice (JSON.parse keeps the last): the file is read again in full
    if (d.parentId !== undefined && (entry.parentId ?? null) !== d.parentId) {
      throw new InvalidBodyError(this.path, d.line, d.id, `its parentId is ${JSON.stringify(entry.parentId)}, not ${JSON.stringify(d.parentId)} as indexed`, true);
    }
    return entry;
  }

  private changed(d: DeferredBody | undefined, reason: string): Error {
    const where = d ? `${this.path}:${d.line}` : this.path;
    const what = d ? `entry ${d.id}` : "an entry";
    return new Error(`${where}: cannot read ${what} back: ${reason}; the file was changed or damaged since it was opened, open it again`);
  }
}

/** A line's place in a file (or in the bytes a database's rows were read as). */
export interface ByteRange {
  readonly offset: number;
  readonly length: number;
}

/**
 * Hands `each` the bytes of every range (with its index in `ranges`), read through `readAt`:
 * ranges close to each other are read in one go of at most WINDOW bytes (unless one line is
 * larger), so a million lines cost a few hundred reads, not a million. The bytes are valid only
 * during the call.
 */
export function readRanges(
  ranges: readonly ByteRange[],
  readAt: (buffer: Buffer, size: number, position: number) => void,
  each: (index: number, bytes: Buffer) => void,
): void {
  if (ranges.length === 0) return;
  const order = ranges.map((_, i) => i);
  if (!isSortedByOffset(ranges)) order.sort((a, b) => ranges[a].offset - ranges[b].offset);
  let buffer = Buffer.allocUnsafe(Math.min(WINDOW, spanOf(ranges, order)));
  let i = 0;
  while (i < order.length) {
    const first = ranges[order[i]];
    let end = first.offset + first.length;
    let j = i;
    while (j + 1 < order.length) {
      const next = ranges[order[j + 1]];
      if (next.offset - end > GAP || next.offset + next.length - first.offset > WINDOW) break;
      end = Math.max(end, next.offset + next.length);
      j++;
    }
    const size = end - first.offset;
    if (buffer.length < size) buffer = Buffer.allocUnsafe(size);
    readAt(buffer, size, first.offset);
    for (let k = i; k <= j; k++) {
      const r = ranges[order[k]];
      each(order[k], buffer.subarray(r.offset - first.offset, r.offset - first.offset + r.length));
    }
    i = j + 1;
  }
}

function isSortedByOffset(deferred: readonly ByteRange[]): boolean {
  for (let i = 1; i < deferred.length; i++) if (deferred[i].offset < deferred[i - 1].offset) return false;
  return true;
}

function spanOf(deferred: readonly ByteRange[], order: readonly number[]): number {
  const first = deferred[order[0]];
  const last = deferred[order[order.length - 1]];
  return Math.max(first.length, last.offset + last.length - first.offset);
}

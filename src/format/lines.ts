/**
 * JSONL lines, both ways. Writing: values as lines and lines as text, the one serializer every
 * store, archive and test fixture writes with. Reading: without readline and without decoding
 * the whole file into one string, a Buffer-level splitter that decodes one line at a time. It is the fastest way to read a
 * session file on Node 20 (docs/ARCHITECTURE.md, storage decisions) and it knows line numbers for error reports.
 * One line object is reused for every line and the bytes are handed out as a range of the read
 * buffer: a million-line file then costs no per-line allocation before the caller decides what
 * to keep.
 */
import { isUtf8 } from "node:buffer";

/** Each value as one JSON line, without its newline: what a store appends or rewrites. */
export const toJsonLines = (values: readonly unknown[]): string[] => values.map((value) => JSON.stringify(value));

/** Lines as JSONL text, every line ended by a newline; no lines make no text. */
export const jsonlText = (lines: readonly string[]): string => (lines.length === 0 ? "" : `${lines.join("\n")}\n`);

/** Values as JSONL text, one line each. */
export const toJsonl = (values: readonly unknown[]): string => jsonlText(toJsonLines(values));

/** Lines as the JSONL bytes a file holds (jsonlText encoded), in one allocation. */
export function jsonlBytes(lines: readonly string[]): Buffer {
  let size = 0;
  for (const line of lines) size += Buffer.byteLength(line, "utf8") + 1;
  const data = Buffer.allocUnsafe(size);
  let at = 0;
  for (const line of lines) {
    at += data.write(line, at, "utf8");
    data[at++] = 0x0a;
  }
  return data;
}

/** The id a session line declares near its start (`"id":"…"`), without parsing the line. */
export function lineId(line: string): string | undefined {
  const at = line.indexOf('"id":"');
  if (at === -1 || at > 200) return undefined;
  const end = line.indexOf('"', at + 6);
  return end === -1 ? undefined : line.slice(at + 6, end);
}

const NEWLINE = 0x0a;
const CR = 0x0d;
const CHUNK_SIZE = 1 << 20;
const EMPTY = Buffer.alloc(0);

/** A line as the splitter reports it. The object and its buffer are only valid during the callback. */
export interface RawLine {
  /** 1-based line number */
  lineNo: number;
  /** byte offset of the line's first byte */
  offset: number;
  /** the line's bytes, without the newline (and without a trailing CR): a view made on each access */
  readonly bytes: Buffer;
  /** the same bytes as a range of `buffer`, without making a view */
  buffer: Buffer;
  start: number;
  end: number;
  /** true when the bytes are known to be valid UTF-8; false means not checked */
  knownUtf8: boolean;
  /** false only for a last line with no newline after it */
  terminated: boolean;
}

class LineView implements RawLine {
  lineNo = 0;
  offset = 0;
  buffer: Buffer = EMPTY;
  start = 0;
  end = 0;
  knownUtf8 = false;
  terminated = true;

  get bytes(): Buffer {
    return this.buffer.subarray(this.start, this.end);
  }

  /** Points the view at `buffer[start, end)` (newline excluded), dropping a trailing CR. */
  set(buffer: Buffer, start: number, end: number): this {
    this.buffer = buffer;
    this.start = start;
    this.end = end > start && buffer[end - 1] === CR ? end - 1 : end;
    return this;
  }
}

/**
 * Calls `onLine` for every line of an in-memory buffer, in order. Blank lines are reported too
 * (with empty bytes) so callers can keep exact line numbers; most callers skip them.
 */
export function forEachBufferLine(data: Buffer, onLine: (line: RawLine) => void): void {
  const line = new LineView();
  let start = 0;
  while (start < data.length) {
    let end = data.indexOf(NEWLINE, start);
    const terminated = end !== -1;
    if (!terminated) end = data.length;
    line.lineNo++;
    line.offset = start;
    line.terminated = terminated;
    onLine(line.set(data, start, end));
    start = end + 1;
  }
}

/** Where a read starts: a byte offset at the start of a line, and how many lines come before it. */
export interface ReadStart {
  offset: number;
  lines: number;
}

/**
 * The same over data that `read` fills into a buffer chunk by chunk (returning the byte count, 0
 * at the end): how storage/read-lines.ts reads a file without holding it whole. `from` numbers the
 * lines and offsets of a read that starts partway through (the data then starts at that offset);
 * `size` is where the data ended.
 */
export function forEachChunkLine(read: (buffer: Buffer) => number, onLine: (line: RawLine) => void, from: ReadStart = { offset: 0, lines: 0 }): { size: number } {
  const chunk = Buffer.allocUnsafe(CHUNK_SIZE);
  const line = new LineView();
  line.lineNo = from.lines;
  // The unfinished line at the end of each chunk, kept as parts and joined once when the line
  // ends: joining on every chunk would copy a long line over and over (quadratic in its length).
  const carry: Buffer[] = [];
  let carryLength = 0;
  let carryOffset = 0;
  const takeCarry = (last?: Buffer): Buffer => {
    if (last) carry.push(last);
    const joined = carry.length === 1 ? carry[0] : Buffer.concat(carry, carryLength + (last?.length ?? 0));
    carry.length = 0;
    carryLength = 0;
    return joined;
  };
  let offset = from.offset;
  for (;;) {
    const n = read(chunk);
    if (n === 0) break;
    const data = chunk.subarray(0, n);
    let start = 0;
    // One check for all the whole lines of the chunk; when it fails, lines are checked one by one.
    const lastNewline = data.lastIndexOf(NEWLINE);
    const chunkUtf8 = lastNewline !== -1 && isUtf8(data.subarray(0, lastNewline));
    for (;;) {
      const nl = data.indexOf(NEWLINE, start);
      if (nl === -1) break;
      line.lineNo++;
      line.terminated = true;
      if (carry.length > 0) {
        const joined = takeCarry(data.subarray(start, nl));
        line.set(joined, 0, joined.length);
        line.offset = carryOffset;
        line.knownUtf8 = false;
      } else {
        line.set(data, start, nl);
        line.offset = offset + start;
        line.knownUtf8 = chunkUtf8;
      }
      onLine(line);
      start = nl + 1;
    }
    if (start < n) {
      // Copy the unfinished tail: the chunk buffer is about to be overwritten.
      if (carry.length === 0) carryOffset = offset + start;
      carry.push(Buffer.from(data.subarray(start)));
      carryLength += n - start;
    }
    offset += n;
  }
  if (carryLength > 0) {
    line.lineNo++;
    line.terminated = false;
    line.offset = carryOffset;
    line.knownUtf8 = false;
    const joined = takeCarry();
    onLine(line.set(joined, 0, joined.length));
  }
  return { size: offset };
}

const REPLACEMENT_CHAR = "\uFFFD";

/** Decodes a line; `valid` is false when the bytes were not well-formed UTF-8. */
export function decodeLine(bytes: Buffer): { text: string; validUtf8: boolean } {
  return decodeRange(bytes, 0, bytes.length, false);
}

/** decodeLine over `buffer[start, end)`; `knownUtf8` skips the validity check. */
export function decodeRange(buffer: Buffer, start: number, end: number, knownUtf8: boolean): { text: string; validUtf8: boolean } {
  const text = buffer.toString("utf8", start, end);
  if (knownUtf8 || !text.includes(REPLACEMENT_CHAR)) return { text, validUtf8: true };
  // U+FFFD may be genuine text: only a byte mismatch proves the input was malformed.
  return { text, validUtf8: Buffer.from(text, "utf8").equals(buffer.subarray(start, end)) };
}

/** Whether `buffer[start, end)` is valid UTF-8. */
export function isUtf8Range(line: RawLine): boolean {
  return line.knownUtf8 || isUtf8(line.buffer.subarray(line.start, line.end));
}

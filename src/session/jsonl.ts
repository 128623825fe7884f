/**
 * JSONL reading without readline and without decoding the whole file into one string:
 * a Buffer-level splitter that decodes one line at a time. It is the fastest way to read a
 * session file on Node 20 (see DESIGN.md section 6) and it knows line numbers for error reports.
 */
import { closeSync, openSync, readSync } from "node:fs";

const NEWLINE = 0x0a;
const CHUNK_SIZE = 1 << 20;

export interface RawLine {
  /** 1-based line number */
  lineNo: number;
  /** byte offset of the line's first byte */
  offset: number;
  /** the line's bytes, without the newline (and without a trailing CR); a view that is only valid during the callback */
  bytes: Buffer;
  /** false only for a last line with no newline after it */
  terminated: boolean;
}

/**
 * Calls `onLine` for every line of the file, in order. Blank lines are reported too (with
 * empty bytes) so callers can keep exact line numbers; most callers skip them.
 */
export function forEachFileLine(path: string, onLine: (line: RawLine) => void): { size: number } {
  const fd = openSync(path, "r");
  try {
    return forEachDescriptorLine(fd, onLine);
  } finally {
    closeSync(fd);
  }
}

/** Same as forEachFileLine, from the start of an open file; the caller keeps the descriptor. */
export function forEachDescriptorLine(fd: number, onLine: (line: RawLine) => void): { size: number } {
  let position = 0;
  return forEachChunkLine((buffer) => {
    const n = readSync(fd, buffer, 0, buffer.length, position);
    position += n;
    return n;
  }, onLine);
}

/** Same as forEachFileLine, over an in-memory buffer. */
export function forEachBufferLine(data: Buffer, onLine: (line: RawLine) => void): void {
  let start = 0;
  let lineNo = 0;
  while (start < data.length) {
    let end = data.indexOf(NEWLINE, start);
    const terminated = end !== -1;
    if (!terminated) end = data.length;
    lineNo++;
    onLine({ lineNo, offset: start, bytes: stripCr(data.subarray(start, end)), terminated });
    start = end + 1;
  }
}

function forEachChunkLine(read: (buffer: Buffer) => number, onLine: (line: RawLine) => void): { size: number } {
  const chunk = Buffer.allocUnsafe(CHUNK_SIZE);
  let carry: Buffer | null = null;
  let carryOffset = 0;
  let offset = 0;
  let lineNo = 0;
  for (;;) {
    const n = read(chunk);
    if (n === 0) break;
    const data = chunk.subarray(0, n);
    let start = 0;
    for (;;) {
      const nl = data.indexOf(NEWLINE, start);
      if (nl === -1) break;
      let bytes: Buffer;
      let lineOffset: number;
      if (carry) {
        bytes = Buffer.concat([carry, data.subarray(start, nl)]);
        lineOffset = carryOffset;
        carry = null;
      } else {
        bytes = data.subarray(start, nl);
        lineOffset = offset + start;
      }
      lineNo++;
      onLine({ lineNo, offset: lineOffset, bytes: stripCr(bytes), terminated: true });
      start = nl + 1;
    }
    if (start < n) {
      // Copy the unfinished tail: the chunk buffer is about to be overwritten.
      const tail = Buffer.from(data.subarray(start));
      if (carry) {
        carry = Buffer.concat([carry, tail]);
      } else {
        carry = tail;
        carryOffset = offset + start;
      }
    }
    offset += n;
  }
  if (carry && carry.length > 0) {
    lineNo++;
    onLine({ lineNo, offset: carryOffset, bytes: stripCr(carry), terminated: false });
  }
  return { size: offset };
}

function stripCr(bytes: Buffer): Buffer {
  return bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.subarray(0, bytes.length - 1) : bytes;
}

const REPLACEMENT_CHAR = "\uFFFD";

/** Decodes a line; `valid` is false when the bytes were not well-formed UTF-8. */
export function decodeLine(bytes: Buffer): { text: string; validUtf8: boolean } {
  const text = bytes.toString("utf8");
  if (!text.includes(REPLACEMENT_CHAR)) return { text, validUtf8: true };
  // U+FFFD may be genuine text: only a byte mismatch proves the input was malformed.
  return { text, validUtf8: Buffer.from(text, "utf8").equals(bytes) };
}

/**
 * A session file's lines exactly as stored, for copying it to another store and comparing (a
 * session is read for use by load.ts instead).
 */
import { isUtf8 } from "node:buffer";
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { SessionFileError } from "./load.js";
import type { StoredLines } from "./types.js";

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
      throw new SessionFileError("UNREADABLE", file, "holds bytes that are not UTF-8, which no store keeps exactly (lines are text); fix or remove that line (`bonsai info` lists it), or copy the file as it is with cp", lineNo);
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

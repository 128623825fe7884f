/**
 * Lines another program appended to a session file while bonsai was rewriting it (pi takes no
 * lock): carried into the new file as the bytes they are, and told from bonsai's own lines by the
 * entry's own id. Works through the descriptors it is given: the old file's and the new one's.
 */
import { fstatSync } from "node:fs";
import { lineId } from "../format/lines.js";
import { pause, readRange, writeAll } from "./fd-io.js";

/**
 * Appends to `to` the lines that the file open as `from` gained after byte `start` and that `ids`
 * does not hold, again while it keeps growing; a line still being written (no newline yet) is
 * waited for up to ~100 ms. `tornLength`: the first line was read at open as a torn write of that
 * many bytes, dropped if it is still that. Returns the bytes written, how far the file was read,
 * how many of the lines carried readers take as entries (JSON objects: not blank, torn or other
 * text, which they skip) and, when the file held any such line, whether its last was bonsai's.
 */
export function carryForeignLines(
  from: number,
  start: number,
  ids: ReadonlySet<string>,
  to: number,
  needsNewline: boolean,
  tornLength?: number,
): { written: number; read: number; entries: number; lastOwn?: boolean } {
  let read = start;
  let written = 0;
  let entries = 0;
  let lastOwn: boolean | undefined;
  for (let waits = 0; ; ) {
    const size = fstatSync(from).size;
    if (size <= read) return { written, read, entries, lastOwn };
    const tail = readRange(from, read, size);
    // the torn write as it was read, and nothing after it: nothing to carry yet, and the next look starts at it again
    if (read === start && tail.length === tornLength && tail.indexOf(0x0a) === -1) return { written, read, entries, lastOwn };
    if (tail[tail.length - 1] !== 0x0a && waits < 20) {
      waits++; // a line is being written: give its writer a moment to finish it
      pause(5);
      continue;
    }
    waits = 0;
    // another program's lines go over as the bytes they are (a carriage return, bytes that are
    // not UTF-8, a blank line): only bonsai's own lines, which the new file holds already, stay
    const foreign: Buffer[] = [];
    for (let at = 0; at < tail.length; ) {
      const newline = tail.indexOf(0x0a, at);
      const end = newline === -1 ? tail.length : newline;
      const line = tail.subarray(at, end);
      const stillTorn = at === 0 && read === start && end === tornLength;
      const own = !stillTorn && isOwnLine(line, ids);
      if (!stillTorn && !own) foreign.push(line, NEWLINE);
      if (own) lastOwn = true;
      else if (!stillTorn && isEntryLine(line)) {
        entries++;
        lastOwn = false;
      }
      at = end + 1;
    }
    if (foreign.length > 0) {
      const data = Buffer.concat(needsNewline && written === 0 ? [NEWLINE, ...foreign] : foreign);
      writeAll(to, data);
      written += data.length;
    }
    read = size;
  }
}

const NEWLINE = Buffer.from("\n");

/** Whether readers take a line as an entry: a JSON object (a blank, torn or other line is skipped). */
function isEntryLine(bytes: Buffer): boolean {
  if (bytes.indexOf(0x7b) === -1) return false; // no "{"
  try {
    const value = JSON.parse(bytes.toString("utf8")) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/**
 * Whether a line is one of bonsai's own: an entry whose id (its own, not one nested in it, as
 * `lineId` would take from an extension's `{"ref":{"id":…}}`) is one bonsai wrote.
 */
function isOwnLine(bytes: Buffer, ids: ReadonlySet<string>): boolean {
  const text = bytes.toString("utf8");
  const id = lineId(text);
  if (id === undefined || !ids.has(id)) return false;
  try {
    const value = JSON.parse(text) as { id?: unknown } | null;
    return typeof value === "object" && value !== null && value.id === id;
  } catch {
    return false;
  }
}

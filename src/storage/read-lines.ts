/** Reading a session file line by line through format/lines.ts's splitter, a chunk at a time. */
import { closeSync, openSync, readSync } from "node:fs";
import { forEachChunkLine, type RawLine, type ReadStart } from "../format/lines.js";

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

/** Same as forEachFileLine, through an open file (from its start, or from `from`); the caller keeps the descriptor. */
export function forEachDescriptorLine(fd: number, onLine: (line: RawLine) => void, from?: ReadStart): { size: number } {
  let position = from?.offset ?? 0;
  return forEachChunkLine(
    (buffer) => {
      const n = readSync(fd, buffer, 0, buffer.length, position);
      position += n;
      return n;
    },
    onLine,
    from,
  );
}

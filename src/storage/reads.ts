/**
 * The two ways an open reads a session (SessionRead, types.ts): every entry into memory, or into
 * the session layer's tree index, which a file fills as it reads, leaving message bodies on disk
 * until they are used (load.ts, BodyLoading). A database has no file to leave them in, so its
 * rows go into the index whole. The store decides how it reads; the caller only what into.
 */
import { loadLines, loadLinesIndex } from "./lines.js";
import { type BodyLoading, type EntrySink, type LoadedIndex, type LoadedSession, loadSessionFile, loadSessionIndex } from "./load.js";
import { FileLines } from "./line-source.js";
import type { SessionRead } from "./types.js";

/** Every entry, parsed and validated, in memory. */
export const READ_ENTRIES: SessionRead<LoadedSession> = {
  file: (path) => loadSessionFile(path),
  lines: (lines, location) => loadLines(lines, location),
};

/** Into `index` (a TreeIndex): a file's message bodies loaded as `bodies` says; a database's rows in full. */
export function readIntoIndex<Index extends EntrySink>(index: Index, bodies: BodyLoading = "checked"): SessionRead<LoadedIndex<Index>> {
  return {
    file: (path) => loadFileIndex(path, bodies, index),
    lines: (lines, location) => loadLinesIndex(lines, location, index),
  };
}

/**
 * A session file read into `index` (loadSessionIndex), which is then told where the file is, so
 * a rewrite copies the lines it does not change from it (line-source.ts).
 */
export function loadFileIndex<Index extends EntrySink>(path: string, bodies: BodyLoading, index: Index): LoadedIndex<Index> {
  const loaded = loadSessionIndex(path, bodies, index);
  index.attachLines?.(new FileLines(path));
  return loaded;
}

/**
 * Copying a session between any two stores, exactly: the target ends up with the same lines, in
 * the same order, character for character, and the copy is read back and compared before it is
 * reported done. The target's single-writer lease is held for the whole write.
 */
import { existsSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import { sessionFileName } from "./file.js";
import { formatLocation, LocationError, parseLocation, type StoreLocation } from "./location.js";
import { openSessionAt, readLinesAt } from "./open.js";
import type { StoredLines } from "./types.js";

export interface CopyOptions {
  /** replace a session that already exists at the target (default: refuse) */
  overwrite?: boolean;
}

export interface CopyResult {
  from: string;
  to: string;
  sessionId: string;
  lines: number;
  /** UTF-8 bytes of the lines and their newlines */
  bytes: number;
  /** a torn last line of the source file (an interrupted write) that was not copied */
  skippedTornTail?: { line: number; bytes: number };
}

function headerOf(lines: readonly string[], where: string): { id: string; timestamp: string } {
  const first = lines.find((line) => line.trim() !== "");
  let header: { type?: unknown; id?: unknown; timestamp?: unknown } | undefined;
  try {
    header = first === undefined ? undefined : JSON.parse(first);
  } catch {
    header = undefined;
  }
  if (header?.type !== "session" || typeof header.id !== "string") {
    throw new Error(`${where}: not a session: the first line is not a session header; nothing copied`);
  }
  return { id: header.id, timestamp: typeof header.timestamp === "string" ? header.timestamp : "" };
}

/** Where the copy goes: a database location gets the session id, a directory a file name. */
function resolveTarget(to: StoreLocation, from: StoreLocation, header: { id: string; timestamp: string }): StoreLocation {
  if (to.kind !== "file") return to.sessionId === undefined ? { ...to, sessionId: header.id } : to;
  const path = resolve(to.path);
  const isDir = to.path.endsWith("/") || (existsSync(path) && statSync(path).isDirectory());
  if (!isDir) return { kind: "file", path };
  const name = from.kind === "file" ? basename(from.path) : sessionFileName(header);
  return { kind: "file", path: join(path, name) };
}

const sameLocation = (a: StoreLocation, b: StoreLocation) =>
  a.kind === "file" && b.kind === "file" ? resolve(a.path) === resolve(b.path) : formatLocation(a) === formatLocation(b);

/** Copies the session at `from` to `to` (any two stores) and checks the copy line by line. */
export async function copySession(from: string | StoreLocation, to: string | StoreLocation, options: CopyOptions = {}): Promise<CopyResult> {
  const source = typeof from === "string" ? parseLocation(from) : from;
  const sourceName = formatLocation(source);
  const stored: StoredLines | undefined = await readLinesAt(source);
  if (!stored) throw new Error(`${sourceName}: no such session; nothing copied`);
  const header = headerOf(stored.lines, sourceName);
  const target = resolveTarget(typeof to === "string" ? parseLocation(to) : to, source, header);
  const targetName = formatLocation(target);
  if (sameLocation(source, target)) throw new LocationError(targetName, "source and target are the same session");

  const { loaded, backend } = await openSessionAt(target);
  try {
    if (!backend) throw new Error(`${targetName}: opened without a writer`);
    if (loaded && !options.overwrite) {
      throw new Error(`${targetName}: a session already exists there; choose another target or overwrite it (--force)`);
    }
    backend.rewrite(stored.lines);
    await backend.flush();
  } finally {
    await backend?.close();
  }

  const copied = await readLinesAt(target);
  const mismatch = firstDifference(stored.lines, copied?.lines ?? []);
  if (mismatch !== undefined) {
    throw new Error(`${targetName}: the copy differs from ${sourceName} at line ${mismatch + 1}; do not rely on it`);
  }
  let bytes = 0;
  for (const line of stored.lines) bytes += Buffer.byteLength(line, "utf8") + 1;
  const result: CopyResult = { from: sourceName, to: targetName, sessionId: header.id, lines: stored.lines.length, bytes };
  if (stored.tornTail) result.skippedTornTail = stored.tornTail;
  return result;
}

/** Index of the first line that differs (a missing line counts), or undefined when equal. */
export function firstDifference(a: readonly string[], b: readonly string[]): number | undefined {
  const n = Math.max(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return undefined;
}

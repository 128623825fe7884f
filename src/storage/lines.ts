/**
 * Pure rules over a session's lines that every store shares: what a database keeps beside them
 * for `bonsai ls` (title, cwd, size, count), turning stored lines back into a loaded session, and
 * the name a backup takes.
 */
import { jsonlBytes } from "../format/lines.js";
import { slotTitle, titleSlotOfLines } from "../format/title-slot.js";
import { RowLines } from "./line-source.js";
import { type EntrySink, type LoadedIndex, type LoadedSession, loadSessionText, loadTextIndex } from "./load.js";

let lastStamp = "";
let repeats = 0;

/**
 * A backup's time suffix: the current time, safe in file names and session ids, later than every
 * earlier one of this process (two backups in one millisecond, or after the clock stepped back,
 * would share a name: the second file replaced the first). Only a session's writer makes its
 * backups; a file backup is still never copied over an existing one (file.ts).
 */
export function backupStamp(): string {
  const now = new Date().toISOString().replace(/[:.]/g, "-");
  if (now > lastStamp) {
    lastStamp = now;
    repeats = 0;
    return now;
  }
  repeats++;
  // "-0001" after the time: sorts after it, and in order among its repeats
  return `${lastStamp}-${String(repeats).padStart(4, "0")}`;
}

/** Line facts a database keeps per session, derived from the lines themselves. */
export interface LinesDigest {
  /** set when the lines start with a header */
  header?: { cwd: string | null; created: string | null; title: string | null };
  /** set when the lines hold a session_info entry: the newest one's name (null: cleared) */
  sessionInfoTitle?: string | null;
  /** the first user message among the lines, as a title: what an unnamed session is listed by (as pi lists it) */
  firstUserTitle?: string;
  /** UTF-8 bytes of the lines and their newlines */
  bytes: number;
  lines: number;
  /** lines that are entries: all of them, less the first line of the session */
  entries: number;
}

const str = (value: unknown): string | null => (typeof value === "string" ? value : null);

function parseObject(line: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(line) as unknown;
    return value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Reads what `ls` shows off lines about to be stored. `first` says the first of them is the
 * session's first line: its header, or oh-my-pi's title slot and then the header (whose title
 * the slot's overrides, as omp lists it). Only lines that can be a session_info entry are parsed.
 */
export function digestLines(lines: readonly string[], first: boolean): LinesDigest {
  const slot = first ? titleSlotOfLines(lines) : undefined;
  const headerAt = first ? (slot ? 1 : 0) : -1;
  const leading = Math.min(lines.length, headerAt + 1);
  const digest: LinesDigest = { bytes: 0, lines: lines.length, entries: lines.length - leading };
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    digest.bytes += Buffer.byteLength(line, "utf8") + 1;
    if (i < headerAt) continue;
    if (i === headerAt) {
      const header = parseObject(line);
      if (header?.type === "session") {
        const title = (slot && slotTitle(slot)) || str(header.title) || null;
        digest.header = { cwd: str(header.cwd), created: str(header.timestamp), title };
      }
      continue;
    }
    if (digest.firstUserTitle === undefined && line.includes('"role":"user"')) {
      const entry = parseObject(line) as { type?: unknown; message?: { role?: unknown; content?: unknown } } | undefined;
      if (entry?.type === "message" && entry.message?.role === "user") digest.firstUserTitle = titleFromContent(entry.message.content);
    }
    if (!line.includes('"session_info"')) continue;
    const entry = parseObject(line);
    if (entry?.type === "session_info") digest.sessionInfoTitle = (str(entry.name) ?? "").trim() || null;
  }
  return digest;
}

/** How much of the first user message titles an unnamed session. */
const TITLE_CHARS = 80;

/** A user message's text (a string or text blocks) as a title: one line, clipped; undefined when it has none. */
export function titleFromContent(content: unknown): string | undefined {
  const text =
    typeof content === "string"
      ? content
      : Array.isArray(content)
        ? content.map((b) => (b && typeof b === "object" && (b as { type?: unknown }).type === "text" ? String((b as { text?: unknown }).text ?? "") : "")).join(" ")
        : "";
  // control characters (a NUL that a JSON escape gave) can be in no database's text column
  const line = text.replace(/[\s\u0000-\u001f\u007f]+/g, " ").trim();
  if (!line) return undefined;
  return line.length > TITLE_CHARS ? `${line.slice(0, TITLE_CHARS - 1)}…` : line;
}

/**
 * The title `ls` shows after `digest` is applied to a session whose title was `before`: the
 * newest name (session_info, then the header's title), else the first user message.
 */
export function titleAfter(before: string | null, digest: LinesDigest): string | null {
  if (digest.sessionInfoTitle !== undefined) return digest.sessionInfoTitle ?? digest.firstUserTitle ?? null;
  if (digest.header) return digest.header.title ?? digest.firstUserTitle ?? null;
  return before ?? digest.firstUserTitle ?? null;
}

/** The per-session columns a database keeps for `ls`. */
export interface SessionMeta {
  title: string | null;
  cwd: string | null;
  created: string | null;
  bytes: number;
  entryCount: number;
}

export const EMPTY_META: SessionMeta = { title: null, cwd: null, created: null, bytes: 0, entryCount: 0 };

/** The `ls` columns after lines are added (or, with `replace`, after they become the whole session). */
export function applyDigest(before: SessionMeta, digest: LinesDigest, replace: boolean): SessionMeta {
  const header = digest.header;
  return {
    title: titleAfter(replace ? null : before.title, digest),
    cwd: header ? header.cwd : replace ? null : before.cwd,
    created: header ? header.created : replace ? null : before.created,
    bytes: (replace ? 0 : before.bytes) + digest.bytes,
    entryCount: (replace ? 0 : before.entryCount) + digest.entries,
  };
}

/**
 * A stored line must read back as the same single line: a newline inside it would split it in
 * two, and PostgreSQL text cannot hold NUL (JSON never needs one raw: it writes \u0000).
 */
export function checkStorableLines(lines: readonly string[], location: string): void {
  for (const line of lines) {
    if (line.includes("\n")) throw new Error(`${location}: refusing to store a line that holds a newline`);
    if (line.includes("\u0000")) throw new Error(`${location}: refusing to store a line that holds a raw NUL character`);
  }
}

/**
 * Stored lines as a loaded session, through the same reader as a file, so a database session
 * gets the same validation, issues and line numbers (line n is the n-th stored line).
 */
export function loadLines(lines: readonly string[], location: string): LoadedSession {
  return loadSessionText(jsonlBytes(lines), location);
}

/**
 * The same into a tree index (every body parsed), which keeps the rows: a rewrite copies the
 * ones it does not change (line-source.ts).
 */
export function loadLinesIndex<Index extends EntrySink>(lines: readonly string[], location: string, index: Index): LoadedIndex<Index> {
  const loaded = loadTextIndex(jsonlBytes(lines), location, index);
  index.attachLines?.(new RowLines(lines, location));
  return loaded;
}

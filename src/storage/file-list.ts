/** What `bonsai ls` shows for a directory of session files, read without parsing whole sessions. */
import { closeSync, type Dirent, openSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { readRange } from "./fd-io.js";
import { titleFromContent } from "./lines.js";
import { SessionFileError } from "./load.js";
import { forEachFileLine } from "./read-lines.js";
import type { SessionSummary } from "./types.js";
import { errorText } from "../util/error-text.js";
import { foreignSessionFormat, foreignSessionMessage } from "../format/foreign.js";
import { isTitleSlot, slotTitle, type TitleSlot } from "../format/title-slot.js";

const SESSION_INFO = Buffer.from('"session_info"');
const USER_ROLE = Buffer.from('"role":"user"');
/** What `ls` shows for one file, read in one pass that parses only the header and session_info lines. */
export function summarizeFile(path: string): SessionSummary | undefined {
  const file = resolve(path);
  let header: Record<string, unknown> | undefined;
  let slot: TitleSlot | undefined;
  let infoTitle: string | null | undefined;
  let firstUser: string | undefined;
  let entries = 0;
  let notSession = false;
  const { size } = forEachFileLine(file, (line) => {
    if (notSession || line.bytes.length === 0) return;
    if (!header) {
      try {
        const value = JSON.parse(line.bytes.toString("utf8"));
        if (isSessionHeader(value)) header = value;
        else if (!slot && isTitleSlot(value)) slot = value; // oh-my-pi's, before the header
        else notSession = true;
      } catch {
        notSession = true;
      }
      return;
    }
    entries++;
    // a session without a name is titled by its first user message, which costs one parse
    if (firstUser === undefined && line.bytes.indexOf(USER_ROLE) !== -1) {
      try {
        const value = JSON.parse(line.bytes.toString("utf8"));
        if (value?.type === "message" && value.message?.role === "user") firstUser = titleFromContent(value.message.content);
      } catch {
        // a malformed line is the reader's to report
      }
    }
    if (line.bytes.indexOf(SESSION_INFO) === -1) return;
    try {
      const value = JSON.parse(line.bytes.toString("utf8"));
      if (value?.type === "session_info") infoTitle = (typeof value.name === "string" ? value.name : "").trim() || null;
    } catch {
      // a malformed line is the reader's to report
    }
  });
  if (!header || notSession) return undefined;
  const str = (v: unknown) => (typeof v === "string" && v !== "" ? v : null);
  return {
    // the session's own id, as a database store lists it; the file is the location
    id: header.id as string,
    location: file,
    title: (infoTitle !== undefined ? infoTitle : ((slot && slotTitle(slot)) ?? str(header.title))) ?? firstUser ?? null,
    cwd: str(header.cwd),
    created: str(header.timestamp),
    updated: statSync(file).mtime.toISOString(),
    bytes: size,
    entryCount: entries,
  };
}

/** Why a file is no session: another agent's session (named), or just not one. */
function notSessionReason(file: string): string {
  let first: unknown;
  forEachFileLine(file, (line) => {
    if (first !== undefined || line.bytes.length === 0) return;
    try {
      first = JSON.parse(line.bytes.toString("utf8"));
    } catch {
      first = null;
    }
  });
  const foreign = foreignSessionFormat(first);
  return foreign ? foreignSessionMessage(foreign) : "not a session file";
}

/**
 * The sessions in a directory and its subdirectories (bonsai's session directory holds one per
 * working directory), most recently written first. Sidecars (`.pruned.jsonl`) and files that do
 * not start with a session header are left out.
 */
export function listFileSessions(dir: string, onWarning: (message: string) => void = () => {}): SessionSummary[] {
  const root = resolve(dir);
  const stat = statSync(root, { throwIfNoEntry: false });
  if (!stat) throw new SessionFileError("NOT_FOUND", root, "no such directory");
  if (!stat.isDirectory()) {
    const one = summarizeFile(root);
    if (!one) throw new SessionFileError("BAD_HEADER", root, notSessionReason(root), 1);
    return [one];
  }
  const found: SessionSummary[] = [];
  const walk = (d: string, depth: number) => {
    let entries: Dirent[];
    try {
      entries = readdirSync(d, { withFileTypes: true });
    } catch (error) {
      if (d === root) throw error;
      // one folder bonsai may not read must not hide the sessions in all the others
      onWarning(`${d}: cannot read this folder (${(error as NodeJS.ErrnoException).code ?? errorText(error)}); its sessions are not listed`);
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith(".")) continue;
      const path = join(d, entry.name);
      if (entry.isDirectory() && depth < 3) walk(path, depth + 1);
      else if (entry.isFile() && entry.name.endsWith(".jsonl") && !entry.name.endsWith(".pruned.jsonl")) {
        try {
          const summary = summarizeFile(path);
          if (summary) found.push(summary);
        } catch {
          // unreadable files are not sessions we can list
        }
      }
    }
  };
  walk(root, 0);
  return found.sort((a, b) => (b.updated ?? "").localeCompare(a.updated ?? "") || a.id.localeCompare(b.id));
}

/** Whether a line's value is a session header: the `session` type and a string id. */
export const isSessionHeader = (value: unknown): value is Record<string, unknown> =>
  (value as { type?: unknown } | null)?.type === "session" && typeof (value as { id?: unknown }).id === "string";

/** The most of a file read to find its header: a header line (after oh-my-pi's 256-byte title line) is far shorter. */
const HEAD_BYTES = 64 * 1024;

/** The first 64 KB of the file at `path`; undefined when it cannot be read. */
export function fileHead(path: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    return readRange(fd, 0, HEAD_BYTES);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const SQLITE_MAGIC = Buffer.from("SQLite format 3\0");

/**
 * What the file at `path` holds when it is a store of sessions: a session (its header first, or
 * after oh-my-pi's title line) or a SQLite database; undefined for anything else, or when it
 * cannot be read. Only its head is read: a command that writes a page or a report over a file
 * asks this first, so a session is never replaced by one.
 */
export function storeKindOf(path: string): "a session" | "a SQLite database" | undefined {
  const head = fileHead(path);
  if (!head) return undefined;
  if (head.subarray(0, SQLITE_MAGIC.length).equals(SQLITE_MAGIC)) return "a SQLite database";
  try {
    for (const line of head.toString("utf8").split("\n").filter((l) => l.trim() !== "").slice(0, 2)) {
      const value = JSON.parse(line) as unknown;
      if (isSessionHeader(value)) return "a session";
      if (!isTitleSlot(value)) return undefined;
    }
  } catch {
    // not JSON: no session
  }
  return undefined;
}

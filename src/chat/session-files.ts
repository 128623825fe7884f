/**
 * Which session file `bonsai chat` writes: a new one in bonsai's session directory for the
 * working directory, the one given with --session, or, with --continue, the newest one there.
 */
import { closeSync, openSync, readdirSync, readSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { CliError } from "../cli/output.js";
import { defaultSessionDir, SessionManager } from "../session/manager.js";

/** Whether the file starts with a session header line (the first 64 KB are enough for any header). */
export function hasSessionHeader(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, "r");
    const buffer = Buffer.alloc(64 * 1024);
    const read = readSync(fd, buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, read).toString("utf8");
    const newline = text.indexOf("\n");
    const first = newline < 0 ? text : text.slice(0, newline);
    const header = JSON.parse(first) as { type?: unknown; id?: unknown };
    return header.type === "session" && typeof header.id === "string";
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** The most recently modified `.jsonl` in `dir` that has a valid header; undefined when none. */
export function findLatestSession(dir: string): string | undefined {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  const candidates = names
    .filter((name) => name.endsWith(".jsonl"))
    .map((name) => {
      const file = join(dir, name);
      try {
        const stat = statSync(file);
        return stat.isFile() ? { file, mtime: stat.mtimeMs } : undefined;
      } catch {
        return undefined;
      }
    })
    .filter((c): c is { file: string; mtime: number } => c !== undefined)
    .sort((a, b) => b.mtime - a.mtime || b.file.localeCompare(a.file));
  return candidates.find((c) => hasSessionHeader(c.file))?.file;
}

export interface ChatSessionChoice {
  cwd: string;
  /** --session FILE: open it, or start a new session at that path */
  session?: string;
  /** --continue: the newest session of cwd */
  continue?: boolean;
  onWarning?: (message: string) => void;
}

/** Opens (with the writer lock) or creates the session the chat writes to. */
export function openChatSession(choice: ChatSessionChoice): { session: SessionManager; resumed: boolean } {
  if (choice.session && choice.continue) throw new CliError("--session and --continue cannot be combined: pick one");
  if (choice.session) {
    const file = resolve(choice.cwd, choice.session);
    const session = SessionManager.open(file, { onWarning: choice.onWarning });
    return { session, resumed: session.getEntries().length > 0 };
  }
  const dir = defaultSessionDir(choice.cwd);
  if (choice.continue) {
    const latest = findLatestSession(dir);
    if (!latest) throw new CliError(`no session to continue in ${dir}: start one with bonsai chat`);
    return { session: SessionManager.open(latest, { onWarning: choice.onWarning }), resumed: true };
  }
  return { session: SessionManager.create(choice.cwd, dir), resumed: false };
}

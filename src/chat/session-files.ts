/**
 * Which session `bonsai chat` writes: a new file in bonsai's session directory for the working
 * directory, the location given with --session (a file, `sqlite:PATH#ID`, `postgres://…#ID`), or,
 * with --continue, the newest session file of that directory.
 */
import { readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { CliError } from "../util/cli-error.js";
import { defaultSessionDir, SessionManager } from "../session/manager.js";
import { formatLocation, parseLocation, type StoreLocation } from "../storage/location.js";
import { storeOf } from "../storage/stores.js";
import { fileHead, isSessionHeader } from "../storage/file-list.js";

/** Whether the file starts with a session header line (the first 64 KB are enough for any header). */
export function hasSessionHeader(file: string): boolean {
  const text = fileHead(file)?.toString("utf8");
  if (text === undefined) return false;
  const newline = text.indexOf("\n");
  try {
    return isSessionHeader(JSON.parse(newline < 0 ? text : text.slice(0, newline)));
  } catch {
    return false;
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
  /**
   * --session LOCATION: a file, `sqlite:PATH#ID` or `postgres://…#ID`, opened when it holds a
   * session and started there otherwise; a database without `#ID` gets a new session of its own
   */
  session?: string;
  /** --continue: the newest session file of cwd */
  continue?: boolean;
  onWarning?: (message: string) => void;
}

/**
 * The --session location with relative paths made absolute against the working directory, so
 * what the chat prints at the end opens the same session from anywhere, as text to open: the
 * text as typed when nothing was resolved, because formatLocation leaves a PostgreSQL password
 * out (SessionManager still reports it without the password). Throws CliError for a location
 * that cannot be parsed.
 */
function chatLocation(cwd: string, text: string): { where: StoreLocation; open: string } {
  let parsed: StoreLocation;
  try {
    parsed = parseLocation(text);
  } catch (error) {
    // Some of these messages quote the location as typed: a PostgreSQL password stays out.
    throw new CliError(`--session ${withoutPasswords((error as Error).message)}`);
  }
  const where = storeOf(parsed).resolvedAgainst(parsed, cwd);
  return { where, open: where === parsed ? text.trim() : formatLocation(where) };
}

/**
 * Opens (with the writer lock or lease) or creates the session the chat writes to. PostgreSQL
 * opens asynchronously, so every store goes through one promise.
 */
export async function openChatSession(choice: ChatSessionChoice): Promise<{ session: SessionManager; resumed: boolean }> {
  if (choice.session && choice.continue) throw new CliError("--session and --continue cannot be combined: pick one");
  if (choice.session) {
    const { where, open } = chatLocation(choice.cwd, choice.session);
    // The store's own errors are one line each and name the store: "cannot connect to
    // PostgreSQL: …", "cannot open the SQLite store: …", "not a SQLite database", a held lease.
    try {
      // A whole database (no #ID): a new session under a fresh id, as `bonsai chat` alone starts a new file.
      if (storeOf(where).namesStore(where)) return { session: await SessionManager.createIn(open, choice.cwd), resumed: false };
      const session = await SessionManager.openUrl(open, { onWarning: choice.onWarning });
      return { session, resumed: session.getEntries().length > 0 };
    } catch (error) {
      // the stores print locations without passwords; a driver's message might not
      if (error instanceof Error) error.message = withoutPasswords(error.message);
      throw error;
    }
  }
  const dir = defaultSessionDir(choice.cwd);
  if (choice.continue) {
    const latest = findLatestSession(dir);
    if (!latest) throw new CliError(`no session to continue in ${dir}: start one with bonsai chat`);
    return { session: SessionManager.open(latest, { onWarning: choice.onWarning }), resumed: true };
  }
  return { session: SessionManager.create(choice.cwd, dir), resumed: false };
}

/** Every `scheme://user:password@` in a message as `scheme://user@` (redactPassword does only the start). */
export function withoutPasswords(message: string): string {
  return message.replace(/\b([a-z][a-z0-9+.-]*:\/\/[^:@/?#\s]*):[^@/?#\s]*@/gi, "$1@");
}

/** What the chat prints once the session is closed: where it is and the command that resumes it. */
export function savedSessionLines(cwd: string, session: { file: string | undefined; location: string }): string[] {
  const byContinue = session.file !== undefined && dirname(session.file) === defaultSessionDir(cwd);
  const resume = byContinue ? "bonsai chat --continue" : `bonsai chat --session ${shellWord(session.location)}`;
  return [`Session saved: ${session.location}`, `Resume it with: ${resume}`];
}

/** The text as one shell word: quoted only when it holds characters a shell would act on. */
export function shellWord(text: string): string {
  if (/^[\w@%+=:,./-][\w@%+=:,./~#-]*$/.test(text)) return text;
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

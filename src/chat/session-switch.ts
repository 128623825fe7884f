/**
 * Which session the chat writes to, as the user is told: the place named in the notices (a file
 * with `~` for the home directory, or a database location without its password), the notice on
 * resuming, and /fork, which goes on writing to a new session holding the current path while
 * the old one stays as it was.
 */
import { homedir } from "node:os";
import type { SessionManager } from "../session/manager.js";
import { errorText } from "../util/error-text.js";
import { displayPath } from "./footer.js";
import type { DisplayBlock } from "./transcript.js";

/** The session file (`~` for the home directory) or database location (no password); undefined in memory. */
export function whereShown(manager: SessionManager): string | undefined {
  const location = manager.getLocation();
  return location === undefined ? undefined : displayPath(location, homedir());
}

/** Shown first when the chat continues a session that already held a conversation. */
export function resumedNotice(manager: SessionManager): DisplayBlock {
  const shown = whereShown(manager) ?? "the session";
  return { style: "notice", text: `Resumed ${shown} (${manager.getEntries().length} entries).` };
}

/** /fork: continues in a new session from the current leaf; says where the chat now writes. */
export function forkSession(manager: SessionManager): DisplayBlock {
  const leaf = manager.getLeafId();
  if (leaf === null) return { style: "warning", text: "Nothing to fork yet: send a message first." };
  const before = whereShown(manager);
  try {
    // A database session forks into a new id in the same database, a file into a new file beside it.
    manager.createBranchedSession(leaf);
    return { style: "success", text: `Forked: now writing to ${whereShown(manager) ?? "a new in-memory session"} (${before ?? "the old session"} stays as it was).` };
  } catch (error) {
    return { style: "error", text: `Fork failed: ${errorText(error)}` };
  }
}

/**
 * An entry id as a user types it: the full id, or a prefix that matches exactly one entry (ids
 * are 8 hex characters, but migrated or foreign files may hold longer ones).
 */
import type { SessionManager } from "../session/manager.js";
import { CliError } from "../util/cli-error.js";

/** The shortest prefix accepted: fewer characters match too many entries to mean one. */
const MIN_PREFIX = 4;

export function resolveEntryId(session: SessionManager, id: string): string {
  if (session.getEntry(id)) return id;
  const needle = id.trim();
  if (needle.length > 0 && needle.length < MIN_PREFIX) {
    throw new CliError(`entry id "${id}" is too short: give at least ${MIN_PREFIX} characters (or the whole id); run \`bonsai tree\` to list the ids`);
  }
  if (needle.length >= MIN_PREFIX) {
    const matches = session.getEntries().filter((e) => e.id.startsWith(needle));
    if (matches.length === 1) return matches[0].id;
    if (matches.length > 1) {
      throw new CliError(`entry id "${id}" is ambiguous (${matches.length} entries start with it); give more characters`);
    }
  }
  throw new CliError(`no entry with id "${id}" in ${session.getSessionFile()}; run \`bonsai tree\` to list the ids`);
}

/**
 * Pruning by appending, for agents that read context edits (pi 1.x, format/dialects/pi-1.ts): a
 * pruned tool result is a `context_edit` that sends its notice instead of the output, and a
 * restore is one more edit that sends what was shown before. Nothing is rewritten and nothing is
 * archived: every earlier byte of the file stays where it is (safe while pi appends; pi takes no
 * lock), and the original stays in the file. bonsai marks its own edits with `prunedAt`.
 */
import type { TextContent, ToolResultMessage } from "../format/message-types.js";
import type { ContextEditEntry, SessionEntry } from "../format/entry-types.js";
import { entriesInContext, shownMessages } from "../format/context.js";
import type { SessionManager } from "../session/manager.js";
import { type PruneCandidate, prunedToolResult } from "../compaction/prune.js";

/** The latest edit of each target on the session's branch, by target id. */
function latestEdits(branch: readonly SessionEntry[]): Map<string, ContextEditEntry> {
  const edits = new Map<string, ContextEditEntry>();
  for (const entry of branch) if (entry.type === "context_edit") edits.set(entry.targetId, entry);
  return edits;
}

/**
 * The entries of the branch's context as pruning must see them: each message as the context shows
 * it, one that bonsai's edit pruned carrying that edit's `prunedAt`; a message the context leaves
 * out is not there.
 */
export function entriesAsShown(session: SessionManager): SessionEntry[] {
  // what is shown is what is in the context: the end of the branch from where the context starts
  const branch = session.getContextBranch();
  const dialect = session.getDialect();
  const shown = shownMessages(branch, dialect);
  const edits = latestEdits(branch);
  return entriesInContext(branch, dialect).flatMap((entry): SessionEntry[] => {
    if (entry.type !== "message") return [entry];
    const message = shown.get(entry.id);
    if (!message) return [];
    const prunedAt = edits.get(entry.id)?.prunedAt;
    return [{ ...entry, message: prunedAt === undefined || message.role !== "toolResult" ? message : { ...message, prunedAt } }];
  });
}

/** Appends one edit per candidate that sends its replacement (its own content, else the notice). */
export function pruneByEdits(
  session: SessionManager,
  entries: readonly SessionEntry[],
  candidates: readonly (PruneCandidate & { content?: TextContent[] })[],
  prunedAt: number,
): void {
  for (const candidate of candidates) {
    const message = (entries[candidate.index] as SessionEntry & { message: ToolResultMessage }).message;
    const content = candidate.content ?? prunedToolResult(message, candidate.tokens, prunedAt).content;
    session.appendContextEdit(candidate.entryId, { content }, prunedAt);
  }
}

/**
 * Undoes bonsai's prune edits on the branch (all, or of `entryIds`): each target gets an edit that
 * sends what it showed before the prune — an earlier edit's content, else the message as written.
 * Returns the ids restored, and why the others asked for were not.
 */
export function restoreByEdits(session: SessionManager, entryIds?: readonly string[]): { restored: string[]; notRestored: { entryId: string; reason: string }[] } {
  const branch = session.getBranch();
  const pruned = new Map<string, ContextEditEntry>();
  const before = new Map<string, ContextEditEntry | undefined>();
  for (const entry of branch) {
    if (entry.type !== "context_edit") continue;
    if (entry.prunedAt !== undefined) pruned.set(entry.targetId, entry);
    else {
      pruned.delete(entry.targetId); // a later edit of another kind decides what is shown
      before.set(entry.targetId, entry);
    }
  }
  const result = { restored: [] as string[], notRestored: [] as { entryId: string; reason: string }[] };
  for (const entryId of entryIds ?? [...pruned.keys()]) {
    const target = session.getEntry(entryId);
    if (target?.type !== "message" || target.message.role !== "toolResult") {
      result.notRestored.push({ entryId, reason: target ? "not a tool result" : "no such entry" });
    } else if (!pruned.has(entryId)) {
      result.notRestored.push({ entryId, reason: "not pruned" });
    } else {
      const earlier = before.get(entryId);
      session.appendContextEdit(entryId, earlier ? earlier.replacement : { content: target.message.content });
      result.restored.push(entryId);
    }
  }
  return result;
}

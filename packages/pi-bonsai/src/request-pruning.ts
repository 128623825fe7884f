/**
 * Pruning of the request, never of the file: pi takes no lock on its session file, so bonsai must
 * not rewrite a file pi is appending to. Instead each request's messages (pi's `context` event
 * hands over a deep copy) get old and superseded tool output replaced, by the same rules bonsai's
 * own pruning uses (src/compaction/prune.ts, src/compaction/prune-savings.ts); the originals stay
 * on disk, byte for byte. Pure.
 */
import type { SessionEntry } from "../../../src/format/entry-types.js";
import type { AgentMessage, ToolResultMessage } from "../../../src/format/message-types.js";
import { type PruneConfig, planPruning, prunedToolResult } from "../../../src/compaction/prune.js";
import { planSavings, type SavingsConfig } from "../../../src/compaction/prune-savings.js";

export interface RequestPruningConfig {
  prune: Partial<PruneConfig>;
  savings: Partial<SavingsConfig>;
}

export interface RequestPruning {
  messages: AgentMessage[];
  /** how many tool results were replaced, and the estimated tokens that saved */
  replaced: number;
  tokensSaved: number;
}

/**
 * The request's messages as entries for the planners. A tool result takes the id of the session
 * entry that holds it (found by its tool call id), so a superseded notice names an entry the user
 * can look up; other messages get a position id, which no notice ever shows.
 */
function asEntries(messages: readonly AgentMessage[], entryIdOfCall: ReadonlyMap<string, string>): SessionEntry[] {
  return messages.map((message, index) => {
    const id = message.role === "toolResult" ? (entryIdOfCall.get(message.toolCallId) ?? `call-${message.toolCallId}`) : `message-${index}`;
    return { type: "message", id, parentId: null, timestamp: "", message } as SessionEntry;
  });
}

/** Tool call id -> id of the entry holding its result, over a session branch. */
export function resultEntryIds(branch: readonly SessionEntry[]): Map<string, string> {
  const ids = new Map<string, string>();
  for (const entry of branch) {
    if (entry.type === "message" && entry.message.role === "toolResult") ids.set(entry.message.toolCallId, entry.id);
  }
  return ids;
}

/**
 * The messages with superseded reads and oversized results replaced first (free savings), then
 * old output beyond the protected recent window. `messages` is not changed.
 */
export function pruneRequest(
  messages: readonly AgentMessage[],
  entryIdOfCall: ReadonlyMap<string, string>,
  config: RequestPruningConfig,
): RequestPruning {
  const out = [...messages];
  let replaced = 0;
  let tokensSaved = 0;
  const now = Date.now();
  for (const saving of planSavings(asEntries(out, entryIdOfCall), config.savings)) {
    out[saving.index] = { ...(out[saving.index] as ToolResultMessage), content: saving.content, prunedAt: now };
    replaced++;
    tokensSaved += saving.savings;
  }
  const plan = planPruning(asEntries(out, entryIdOfCall), config.prune);
  for (const candidate of plan.candidates) {
    out[candidate.index] = prunedToolResult(out[candidate.index] as ToolResultMessage, candidate.tokens, now);
    replaced++;
  }
  tokensSaved += plan.tokensSaved;
  return { messages: out, replaced, tokensSaved };
}

/** A `context_edit` entry pi 1.x appends for an extension at a turn's end (its draft). */
export interface ContextEditDraft {
  type: "context_edit";
  targetId: string;
  replacement: { content: unknown };
}

/**
 * The request pruning of `messages` (a context as pi 1.x shows it, edits applied) as context
 * edits to append, so pi keeps it: one per tool result whose content pruning changes, none for a
 * result already shown as pruned (an edit that changes nothing is not written again).
 */
export function pruningEdits(messages: readonly AgentMessage[], entryIdOfCall: ReadonlyMap<string, string>, config: RequestPruningConfig): ContextEditDraft[] {
  const pruned = pruneRequest(messages, entryIdOfCall, config).messages;
  const edits: ContextEditDraft[] = [];
  pruned.forEach((message, i) => {
    if (message === messages[i] || message.role !== "toolResult") return;
    const targetId = entryIdOfCall.get(message.toolCallId);
    if (!targetId || JSON.stringify(message.content) === JSON.stringify((messages[i] as ToolResultMessage).content)) return;
    edits.push({ type: "context_edit", targetId, replacement: { content: message.content } });
  });
  return edits;
}

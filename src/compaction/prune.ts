/**
 * Tool-output pruning: old, large tool results are replaced by a one-line notice so they stop
 * filling the context, while the newest tool output stays whole. The decision is pure; the
 * session shell (ops/prune.ts) archives the originals before anything is rewritten.
 */
import type { TextContent, ToolResultMessage } from "../format/message-types.js";
import type { SessionEntry } from "../format/entry-types.js";
import { estimateTokens, messageTextTokens } from "./tokens.js";

export interface PruneConfig {
  /** the newest tool output kept whole, in estimated tokens */
  protectTokens: number;
  /** prune nothing unless at least this many tokens are saved (a rewrite is not free) */
  minimumSavings: number;
  /** tools whose results are never pruned: skills are instructions, reads are the files being worked on */
  protectedTools: readonly string[];
}

export const DEFAULT_PRUNE_CONFIG: Readonly<PruneConfig> = Object.freeze({
  protectTokens: 40_000,
  minimumSavings: 20_000,
  protectedTools: Object.freeze(["skill", "read"]),
});

/** What a pruned result says instead of its output; `tokens` is the original estimate. */
export function prunedNotice(tokens: number): string {
  return `[Output truncated - ${tokens} tokens]`;
}

export interface PruneCandidate {
  entryId: string;
  /** index in the entries that were planned over */
  index: number;
  toolName: string;
  /** estimated tokens of the original result */
  tokens: number;
  /** tokens saved by replacing it with the notice */
  savings: number;
}

export interface PrunePlan {
  /** newest first; empty when the savings would not reach the minimum */
  candidates: PruneCandidate[];
  tokensSaved: number;
}

const isToolResultEntry = (entry: SessionEntry): entry is SessionEntry & { type: "message"; message: ToolResultMessage } =>
  entry.type === "message" && entry.message.role === "toolResult";

/**
 * Chooses the tool results to prune, newest to oldest: results stay whole while the output seen
 * so far (before adding this one) is under `protectTokens`, so the result crossing the line is
 * still protected; already-pruned results count with their notice size.
 */
export function planPruning(entries: readonly SessionEntry[], config: Partial<PruneConfig> = {}): PrunePlan {
  const { protectTokens, minimumSavings, protectedTools } = { ...DEFAULT_PRUNE_CONFIG, ...config };
  const protectedSet = new Set(protectedTools);
  const candidates: PruneCandidate[] = [];
  let seen = 0;
  let tokensSaved = 0;
  for (let i = entries.length - 1; i >= 0; i--) {
    const entry = entries[i];
    if (!isToolResultEntry(entry)) continue;
    const tokens = estimateTokens(entry.message);
    const before = seen;
    seen += tokens;
    if (entry.message.prunedAt !== undefined) continue;
    if (before < protectTokens || protectedSet.has(entry.message.toolName)) continue;
    const savings = Math.max(0, tokens - messageTextTokens(prunedNotice(tokens)));
    if (savings === 0) continue;
    candidates.push({ entryId: entry.id, index: i, toolName: entry.message.toolName, tokens, savings });
    tokensSaved += savings;
  }
  if (candidates.length === 0 || tokensSaved < minimumSavings) return { candidates: [], tokensSaved: 0 };
  return { candidates, tokensSaved };
}

/** A copy of `message` with its content replaced by the notice. */
export function prunedToolResult(message: ToolResultMessage, tokens: number, prunedAt: number): ToolResultMessage {
  const notice: TextContent = { type: "text", text: prunedNotice(tokens) };
  return { ...message, content: [notice], prunedAt };
}

export interface PruneResult {
  prunedCount: number;
  tokensSaved: number;
  /** ids of the pruned entries, newest first */
  prunedEntryIds: string[];
}

/**
 * Prunes in place, as the reference does: the chosen results' message objects get the notice and
 * `prunedAt` (one time for all). Callers that must keep the originals use planPruning and
 * pruneSession instead. `now` is the time to record (default: the clock).
 */
export function pruneToolOutputs(
  entries: readonly SessionEntry[],
  config: Partial<PruneConfig> & { now?: number } = {},
): PruneResult {
  const plan = planPruning(entries, config);
  const prunedAt = config.now ?? Date.now();
  for (const candidate of plan.candidates) {
    const message = (entries[candidate.index] as SessionEntry & { message: ToolResultMessage }).message;
    message.content = [{ type: "text", text: prunedNotice(candidate.tokens) }];
    message.prunedAt = prunedAt;
  }
  return {
    prunedCount: plan.candidates.length,
    tokensSaved: plan.tokensSaved,
    prunedEntryIds: plan.candidates.map((c) => c.entryId),
  };
}

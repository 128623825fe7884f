/**
 * When a finished turn calls for compaction, as pure rules over plain data (docs/ARCHITECTURE.md,
 * decision 5):
 * - a context overflow of the current model is recovered once per user turn, then reported;
 * - a threshold compaction needs a known context window and usage newer than the latest
 *   compaction (stale usage never triggers);
 * - a compaction that does not shrink the context is reported instead of being retried.
 */
import type { CompactionSettings } from "../config/settings.js";
import type { AgentMessage, AssistantMessage } from "../format/message-types.js";
import { compactionThreshold } from "../compaction/settings.js";
import { calculateContextTokens, estimateContextTokens, estimateMessagesTokens } from "../compaction/tokens.js";
import type { CompactionEntry, SessionEntry } from "../format/entry-types.js";

/** pi-ai's `isContextOverflow`, or anything with its signature. */
export type OverflowDetector = (message: AssistantMessage, contextWindow?: number) => boolean;

/** Loads pi-ai's detector on first use, so modules that never call a model do not pay its import. */
export async function loadOverflowDetector(): Promise<OverflowDetector> {
  const { isContextOverflow } = await import("@mariozechner/pi-ai");
  return isContextOverflow as unknown as OverflowDetector;
}

/**
 * A context overflow: a provider's overflow error, or a "silent" one, where the provider
 * answered normally although the prompt alone was larger than the window.
 */
export function isOverflow(message: AssistantMessage, contextWindow: number, detect: OverflowDetector): boolean {
  const window = contextWindow > 0 ? contextWindow : undefined;
  if (detect(message, window)) return true;
  if (!window || message.stopReason !== "stop" || !message.usage) return false;
  return message.usage.input + message.usage.cacheRead > window;
}

/**
 * True when `message` was in the context before the latest compaction on `branch`, so its usage
 * or error describes a context that no longer exists. The message's own entry decides (by
 * identity); a message not found on the branch falls back to timestamps.
 */
export function isBeforeLatestCompaction(branch: readonly SessionEntry[], message: AgentMessage): boolean {
  let compactionIndex = -1;
  for (let i = branch.length - 1; i >= 0; i--) {
    if (branch[i].type === "compaction") {
      compactionIndex = i;
      break;
    }
  }
  if (compactionIndex < 0) return false;
  for (let i = branch.length - 1; i >= 0; i--) {
    const entry = branch[i];
    if (entry.type === "message" && entry.message === message) return i < compactionIndex;
  }
  const compactedAt = Date.parse((branch[compactionIndex] as CompactionEntry).timestamp);
  return message.timestamp <= compactedAt;
}

export type CompactionTrigger =
  | { kind: "none"; reason: string }
  | { kind: "overflow" }
  /** an overflow again after this user turn already recovered from one */
  | { kind: "overflow-exhausted" }
  | { kind: "threshold"; contextTokens: number };

export interface CompactionCheck {
  /** the assistant message that ended the run (or the last one in the context, before a prompt) */
  message: AssistantMessage;
  settings: Pick<CompactionSettings, "enabled" | "reserveTokens" | "thresholdPercent" | "thresholdTokens">;
  /** the current model; an overflow of another model says nothing about this one */
  model: { provider: string; id: string; contextWindow: number } | undefined;
  /** the message belongs to the context before the latest compaction */
  messageIsStale: boolean;
  /** this user turn already compacted because of an overflow */
  overflowRecoveryAttempted: boolean;
  /** the agent's context, to estimate size after a failed request */
  messages: readonly AgentMessage[];
  /** whether a given context message is from before the latest compaction */
  isStale: (message: AgentMessage) => boolean;
  /** tokens a pruning pass just removed */
  prunedTokens?: number;
  /** check aborted messages too (the check before a prompt does) */
  includeAborted?: boolean;
  detectOverflow: OverflowDetector;
}

export function checkCompaction(check: CompactionCheck): CompactionTrigger {
  const { message, settings, model } = check;
  if (!settings.enabled) return { kind: "none", reason: "compaction disabled" };
  if (message.stopReason === "aborted" && !check.includeAborted) return { kind: "none", reason: "aborted" };
  if (check.messageIsStale) return { kind: "none", reason: "message predates the latest compaction" };
  const contextWindow = model?.contextWindow ?? 0;
  const sameModel = model !== undefined && message.provider === model.provider && message.model === model.id;
  if (sameModel && isOverflow(message, contextWindow, check.detectOverflow)) {
    return check.overflowRecoveryAttempted ? { kind: "overflow-exhausted" } : { kind: "overflow" };
  }
  if (!(contextWindow > 0)) return { kind: "none", reason: "unknown context window" };

  let contextTokens: number;
  if (message.stopReason === "error") {
    // A failed request reports no usage: estimate from the last good usage, if it is fresh.
    const estimate = estimateContextTokens(check.messages);
    if (estimate.lastUsageIndex === null) return { kind: "none", reason: "no usage to estimate from" };
    if (check.isStale(check.messages[estimate.lastUsageIndex])) {
      return { kind: "none", reason: "only usage from before the latest compaction" };
    }
    contextTokens = estimate.tokens;
  } else {
    if (!message.usage) return { kind: "none", reason: "no usage" };
    contextTokens = calculateContextTokens(message.usage);
  }
  contextTokens = Math.max(0, contextTokens - (check.prunedTokens ?? 0));
  // the lowest of window - reserveTokens, thresholdPercent and thresholdTokens (context-pressure.ts)
  if (!(contextTokens > compactionThreshold(contextWindow, settings))) {
    return { kind: "none", reason: "below threshold" };
  }
  return { kind: "threshold", contextTokens };
}

/**
 * Whether a compaction freed room: the new context must estimate smaller than the old one (both
 * in the same chars/4 units). Continuing after a compaction that did not help would only
 * trigger another.
 */
export function compactionReduced(
  messagesBefore: readonly AgentMessage[],
  messagesAfter: readonly AgentMessage[],
): boolean {
  return estimateMessagesTokens(messagesAfter) < estimateMessagesTokens(messagesBefore);
}

/**
 * Whether to send the synthetic "continue" prompt after a threshold compaction. Only when the
 * turn stopped with work the model had announced but not done (its output was cut at the token
 * limit, or it called tools whose results it has not seen), at most once per user turn, and
 * only when the compaction actually freed room. A turn that ended with a final answer stays
 * ended: nudging it again is how agents loop.
 */
export function shouldAutoContinue(input: {
  autoContinue: boolean;
  /** the last message of the agent's context before the compaction */
  lastMessage: AgentMessage | undefined;
  alreadyContinuedThisTurn: boolean;
  compactionReduced: boolean;
}): boolean {
  if (!input.autoContinue || input.alreadyContinuedThisTurn || !input.compactionReduced) return false;
  const last = input.lastMessage;
  if (!last) return false;
  if (last.role === "toolResult") return true;
  if (last.role !== "assistant") return false;
  return last.stopReason === "length" || last.stopReason === "toolUse";
}

export interface ContextUsage {
  /** null right after a compaction, until a response reports the new size */
  tokens: number | null;
  contextWindow: number;
  percent: number | null;
}

/**
 * How full the context is: the last reported usage plus estimates of what came after it. After
 * a compaction only usage reported since counts (the kept answers still carry the old size), so
 * the size is unknown (null) until the next response; an unknown window gives undefined.
 */
export function contextUsage(
  messages: readonly AgentMessage[],
  branch: readonly SessionEntry[],
  contextWindow: number,
): ContextUsage | undefined {
  if (!(contextWindow > 0)) return undefined;
  const estimate = estimateContextTokens(messages);
  const usageMessage = estimate.lastUsageIndex === null ? undefined : messages[estimate.lastUsageIndex];
  const compacted = branch.some((entry) => entry.type === "compaction");
  if (compacted && (!usageMessage || estimate.usageTokens === 0 || isBeforeLatestCompaction(branch, usageMessage))) {
    return { tokens: null, contextWindow, percent: null };
  }
  return { tokens: estimate.tokens, contextWindow, percent: (estimate.tokens / contextWindow) * 100 };
}

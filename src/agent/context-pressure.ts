/**
 * How full the context is against the compaction threshold, and the guards around an automatic
 * compaction, as pure rules (docs/ARCHITECTURE.md, decision 5):
 * - the threshold is the lowest of window - reserveTokens, thresholdPercent and thresholdTokens;
 * - a background summary starts at backgroundPercent of the threshold;
 * - progress: after an automatic compaction the context must be at most 80% of the threshold;
 * - no growth: a summary larger than the messages it replaces is refused;
 * - the breaker: three failed automatic compactions in a row pause them until a manual one succeeds.
 */
import { compactionThreshold } from "../compaction/settings.js";
import { estimateContextTokens, estimateMessagesTokens, messageTextTokens } from "../compaction/tokens.js";
import type { CompactionSettings } from "../config/settings.js";
import type { AgentMessage } from "../format/message-types.js";
import { formatCount } from "../util/count.js";

/** The share of the threshold a compaction must bring the context under. */
export const PROGRESS_RATIO = 0.8;
/** Failed automatic compactions in a row after which they pause. */
export const BREAKER_LIMIT = 3;
/** Continuations of answers cut at the output limit, in a row. */
export const MAX_TRUNCATED_CONTINUATIONS = 3;

export type ThresholdInput = Pick<CompactionSettings, "reserveTokens" | "thresholdPercent" | "thresholdTokens">;

export type Pressure = "below" | "background" | "threshold";

export interface ContextPressure {
  tokens: number;
  threshold: number;
  level: Pressure;
}

/**
 * Tokens of the context now: the latest usage plus estimates of what came after it; when that
 * usage is from before the compaction whose summary opens the context (its timestamp is not
 * later), the estimate of the whole context. Reads the context only (no walk of the session
 * tree: this runs before every model call).
 */
export function contextTokensNow(messages: readonly AgentMessage[]): number {
  const estimate = estimateContextTokens(messages);
  if (estimate.lastUsageIndex === null) return estimate.tokens;
  const summary = messages.find((m) => m.role === "compactionSummary");
  if (summary && messages[estimate.lastUsageIndex].timestamp <= summary.timestamp) return estimateMessagesTokens(messages);
  return estimate.tokens;
}

/** Where `tokens` stands; an unknown window is always "below" (nothing to measure against). */
export function contextPressure(
  tokens: number,
  contextWindow: number,
  settings: ThresholdInput & Pick<CompactionSettings, "backgroundPercent">,
): ContextPressure {
  const threshold = compactionThreshold(contextWindow, settings);
  if (!(threshold > 0)) return { tokens, threshold, level: "below" };
  if (tokens > threshold) return { tokens, threshold, level: "threshold" };
  const background = settings.backgroundPercent > 0 ? (threshold * settings.backgroundPercent) / 100 : Number.POSITIVE_INFINITY;
  return { tokens, threshold, level: tokens >= background ? "background" : "below" };
}

/** The progress guard: whether the context after a compaction is small enough to go on with. */
export function madeProgress(tokensAfter: number, threshold: number): boolean {
  return !(threshold > 0) || tokensAfter <= threshold * PROGRESS_RATIO;
}

/** The no-growth guard: a summary must be smaller than what it replaces (messages and the previous summary). */
export function summaryGrew(summary: string, replacedTokens: number): boolean {
  return messageTextTokens(summary) > replacedTokens;
}

/** The warning of a compaction that freed too little. */
export function progressWarning(tokensBefore: number, tokensAfter: number, threshold: number): string {
  const freed = Math.max(0, tokensBefore - tokensAfter);
  const n = formatCount;
  return (
    `Compaction freed only ${n(freed)} tokens (context ${n(tokensAfter)} of a ${n(threshold)}-token threshold, ` +
    `more than ${Math.round(PROGRESS_RATIO * 100)}%); not continuing automatically. Lower compaction.keepRecentTokens or prune.`
  );
}

/** Counts failed automatic compactions in a row; open (paused) after BREAKER_LIMIT. */
export class CompactionBreaker {
  private failures = 0;

  get open(): boolean {
    return this.failures >= BREAKER_LIMIT;
  }

  get failuresInARow(): number {
    return this.failures;
  }

  /** Returns true when this failure opened the breaker. */
  failed(): boolean {
    this.failures++;
    return this.failures === BREAKER_LIMIT;
  }

  /** An automatic success resets the count; a manual success also closes an open breaker. */
  succeeded(manual: boolean): void {
    if (manual || !this.open) this.failures = 0;
  }
}

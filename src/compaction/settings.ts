/**
 * Compaction settings: how much room a reply needs (reserveTokens) and how much recent
 * conversation stays verbatim (keepRecentTokens). The same defaults as the reference agent, so
 * sessions compacted by either look alike.
 */

export interface CompactionSettings {
  enabled: boolean;
  /** tokens kept free for the model's reply; also sizes the summaries (0.8x history, 0.5x turn prefix) */
  reserveTokens: number;
  /** estimated tokens of recent conversation kept verbatim after a compaction */
  keepRecentTokens: number;
  /** pin the session's first user message: every compaction quotes it verbatim (format/pins.ts) */
  pinFirstRequest?: boolean;
}

export const DEFAULT_COMPACTION_SETTINGS: Readonly<CompactionSettings> = Object.freeze({
  enabled: true,
  reserveTokens: 16384,
  keepRecentTokens: 20000,
});

/** Output budgets of the three summaries, derived from reserveTokens. */
export function summaryTokenBudgets(reserveTokens: number): { history: number; turnPrefix: number; short: number } {
  return {
    history: Math.floor(0.8 * reserveTokens),
    turnPrefix: Math.floor(0.5 * reserveTokens),
    short: Math.min(512, Math.floor(0.2 * reserveTokens)),
  };
}

/** What sets the compaction threshold: the reply margin, and optionally a share of the window or a fixed size. */
export interface ThresholdSettings {
  reserveTokens: number;
  /** compact when the context passes this percentage of the window (1–100) */
  thresholdPercent?: number;
  /** compact when the context passes this many tokens */
  thresholdTokens?: number;
}

/**
 * The reply margin a window of this size gets: reserveTokens, but never more than a quarter of the
 * window. The default 16,384 would leave nothing of an 8,192-token local model (a threshold of 0:
 * compacting before every turn with nothing to compact); a quarter keeps room for a reply and
 * still leaves three quarters for the conversation.
 */
export function replyReserve(contextWindow: number, reserveTokens: number): number {
  return Math.min(reserveTokens, Math.floor(contextWindow / 4));
}

/**
 * The context size past which a session compacts: the lowest of window - reply reserve, the
 * percentage of the window, and the fixed size, each only when set. 0 for an unknown window.
 */
export function compactionThreshold(contextWindow: number, settings: ThresholdSettings): number {
  if (!(contextWindow > 0)) return 0;
  let threshold = contextWindow - replyReserve(contextWindow, settings.reserveTokens);
  if (settings.thresholdPercent !== undefined) threshold = Math.min(threshold, Math.floor((contextWindow * settings.thresholdPercent) / 100));
  if (settings.thresholdTokens !== undefined) threshold = Math.min(threshold, settings.thresholdTokens);
  return Math.max(0, threshold);
}

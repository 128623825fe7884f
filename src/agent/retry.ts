/**
 * Retry rules shared by the agent's turn retry and compaction's summarizer retry: which errors
 * are transient, how long the provider asked us to wait, exponential backoff. Pure.
 */
import type { AssistantMessage } from "../format/message-types.js";
import type { RetrySettings } from "../config/settings.js";

// The abortable sleep lives in util (the remote summarizer needs it too); re-exported for the agent.
export { SleepAbortedError, sleep } from "../util/sleep.js";

/**
 * Transient failures worth retrying. Status codes need word boundaries: an overflow message
 * such as "…resulted in 150000 tokens" must not read as a 500.
 */
const RETRYABLE =
  /overloaded|rate.?limit|usage.?limit|too many requests|\b(?:429|500|502|503|504)\b|service.?unavailable|server error|internal error|connection.?error|fetch failed|retry delay/i;

/** Compaction moves to the next candidate model instead of waiting longer than this. */
export const MAX_COMPACTION_RETRY_DELAY_MS = 30_000;

export function isRetryableText(text: string): boolean {
  return RETRYABLE.test(text);
}

/**
 * A failed assistant turn that is worth retrying. Context overflows are never retried as they
 * are (the same request would fail again); compaction handles them.
 */
export function isRetryableError(
  message: Pick<AssistantMessage, "stopReason" | "errorMessage">,
  isOverflow: (message: Pick<AssistantMessage, "stopReason" | "errorMessage">) => boolean,
): boolean {
  if (message.stopReason !== "error" || !message.errorMessage) return false;
  if (isOverflow(message)) return false;
  return isRetryableText(message.errorMessage);
}

const NUMBER = String.raw`["']?\s*[:=]\s*["']?(\d+(?:\.\d+)?)`;
const RETRY_AFTER_MS = new RegExp(`retry-after-ms${NUMBER}`, "i");
const RETRY_AFTER = new RegExp(`retry-after(?!-)${NUMBER}`, "i");
const RETRY_AFTER_DATE =
  /retry-after(?!-)["']?\s*[:=]\s*["']?([A-Z][a-z]{2},\s+\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4}\s+\d{2}:\d{2}:\d{2}\s+GMT)/i;
const RESET_MS = new RegExp(`x-ratelimit-reset-ms${NUMBER}`, "i");
const RESET = new RegExp(`x-ratelimit-reset(?!-)${NUMBER}`, "i");

/**
 * How long (ms) an error text says to wait, from the first hint found in this order:
 * `retry-after-ms: N`; `retry-after: N` (seconds) or an HTTP date; `x-ratelimit-reset-ms: N`
 * (epoch ms when > 1e12); `x-ratelimit-reset: N` (epoch seconds when > 1e9, else seconds).
 * A time already past gives 0; no hint gives undefined.
 */
export function parseRetryAfter(text: string, now: number): number | undefined {
  const clamp = (ms: number) => Math.max(0, Math.ceil(ms));
  const ms = RETRY_AFTER_MS.exec(text);
  if (ms) return clamp(Number(ms[1]));
  const seconds = RETRY_AFTER.exec(text);
  if (seconds) return clamp(Number(seconds[1]) * 1000);
  const date = RETRY_AFTER_DATE.exec(text);
  if (date) {
    const at = Date.parse(date[1]);
    if (Number.isFinite(at)) return clamp(at - now);
  }
  const resetMs = RESET_MS.exec(text);
  if (resetMs) {
    const value = Number(resetMs[1]);
    return clamp(value > 1e12 ? value - now : value);
  }
  const reset = RESET.exec(text);
  if (reset) {
    const value = Number(reset[1]);
    return clamp(value > 1e9 ? value * 1000 - now : value * 1000);
  }
  return undefined;
}

/** base × 2^attempt (attempt counts from 0), raised to the provider's hint when that is longer. */
export function backoffDelay(attempt: number, baseDelayMs: number, retryAfterMs?: number): number {
  const exponential = baseDelayMs * 2 ** attempt;
  return retryAfterMs !== undefined && retryAfterMs > exponential ? retryAfterMs : exponential;
}

export type SummarizerRetryPlan = { action: "retry"; delayMs: number } | { action: "next-candidate" };

/**
 * What to do after a summarizer call failed with `errorText` on its `attempt`-th retry (0 first):
 * wait and try the same model again when the error is transient (or the provider gave a wait
 * time) and retries remain; move on to the next candidate when the error is not transient,
 * retries are used up, or the wait would exceed 30 s while another candidate exists.
 */
export function planSummarizerRetry(input: {
  errorText: string;
  attempt: number;
  retry: RetrySettings;
  hasNextCandidate: boolean;
  now: number;
}): SummarizerRetryPlan {
  const { errorText, attempt, retry } = input;
  const retryAfter = parseRetryAfter(errorText, input.now);
  const transient = retryAfter !== undefined || isRetryableText(errorText);
  if (!retry.enabled || attempt >= retry.maxRetries || !transient) return { action: "next-candidate" };
  const delayMs = backoffDelay(attempt, retry.baseDelayMs, retryAfter);
  if (delayMs > MAX_COMPACTION_RETRY_DELAY_MS && input.hasNextCandidate) return { action: "next-candidate" };
  return { action: "retry", delayMs };
}


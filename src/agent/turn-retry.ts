/**
 * The generic retry of a failed turn (docs/ARCHITECTURE.md, retries): count attempts, wait with exponential backoff
 * (or as long as the provider asked), report start and end, and let the wait be cancelled.
 * Overflows never get here: the caller checks isRetryableError first.
 */
import type { RetrySettings } from "../config/settings.js";
import type { AgentSessionEvent } from "./events.js";
import { AbortSlot } from "./abort-slot.js";
import { backoffDelay, parseRetryAfter, SleepAbortedError, sleep } from "./retry.js";

export class TurnRetry {
  private attempt = 0;
  private readonly wait = new AbortSlot();

  constructor(
    private readonly settings: () => RetrySettings,
    private readonly emit: (event: AgentSessionEvent) => void,
    private readonly now: () => number,
  ) {}

  get waiting(): boolean {
    return this.wait.active;
  }

  /** A successful answer ends a retry sequence. */
  succeeded(): void {
    if (this.attempt === 0) return;
    this.emit({ type: "auto_retry_end", success: true, attempt: this.attempt });
    this.attempt = 0;
  }

  /**
   * Waits before the next attempt; true when the caller should try again, false when retries
   * are off, used up, or the wait was cancelled. `beforeWait` runs once a retry is decided.
   */
  async afterError(errorMessage: string, beforeWait: () => void): Promise<boolean> {
    const { enabled, maxRetries, baseDelayMs } = this.settings();
    if (!enabled) return false;
    this.attempt++;
    if (this.attempt > maxRetries) {
      this.emit({ type: "auto_retry_end", success: false, attempt: this.attempt - 1, finalError: errorMessage });
      this.attempt = 0;
      return false;
    }
    const delayMs = backoffDelay(this.attempt - 1, baseDelayMs, parseRetryAfter(errorMessage, this.now()));
    this.emit({ type: "auto_retry_start", attempt: this.attempt, maxAttempts: maxRetries, delayMs, errorMessage });
    beforeWait();
    try {
      await this.wait.run((signal) => sleep(delayMs, signal));
      return true;
    } catch (error) {
      if (!(error instanceof SleepAbortedError)) throw error;
      this.emit({ type: "auto_retry_end", success: false, attempt: this.attempt, finalError: "Retry cancelled" });
      this.attempt = 0;
      return false;
    }
  }

  abort(): void {
    this.wait.abort();
  }
}

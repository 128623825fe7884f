/**
 * Bounds that keep the server alive under load: a fixed number of summarizations at once (the
 * rest are told to come back later, never queued), and an estimate of when to come back.
 */

export const DEFAULT_LIMITS = {
  maxBodyBytes: 8 * 1024 * 1024,
  maxConcurrent: 4,
  requestTimeoutMs: 120_000,
} as const;

export interface ConcurrencyGate {
  /** a release function when a slot was free, undefined when the server is full */
  tryAcquire(): (() => void) | undefined;
  readonly inFlight: number;
  readonly capacity: number;
  /** seconds a client should wait before retrying, from recent summarization times */
  retryAfterSeconds(): number;
}

/** Longest `Retry-After` we suggest: past that a client should give up or go elsewhere. */
const MAX_RETRY_AFTER_S = 30;

export function createConcurrencyGate(capacity: number): ConcurrencyGate {
  if (!Number.isInteger(capacity) || capacity < 1) throw new Error(`max concurrent summarizations must be a positive integer, got ${capacity}`);
  let inFlight = 0;
  // Exponentially weighted mean of how long a slot is held, in ms; recent requests count most.
  let meanHoldMs = 0;
  return {
    get inFlight() {
      return inFlight;
    },
    capacity,
    tryAcquire() {
      if (inFlight >= capacity) return undefined;
      inFlight++;
      const started = performance.now();
      let released = false;
      return () => {
        if (released) return;
        released = true;
        inFlight--;
        const held = performance.now() - started;
        meanHoldMs = meanHoldMs === 0 ? held : meanHoldMs * 0.8 + held * 0.2;
      };
    },
    retryAfterSeconds() {
      return Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.ceil(meanHoldMs / 1000)));
    },
  };
}

/** "8mb", "512kb", "1048576" to bytes. */
export function parseByteSize(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(b|kb|k|mb|m|gb|g)?\s*$/i.exec(text);
  if (!match) throw new Error(`"${text}" is not a size: write it like 8mb, 512kb or 1048576`);
  const unit = (match[2] ?? "b").toLowerCase()[0];
  const factor = unit === "k" ? 1024 : unit === "m" ? 1024 ** 2 : unit === "g" ? 1024 ** 3 : 1;
  const bytes = Math.floor(Number(match[1]) * factor);
  if (bytes < 1) throw new Error(`size "${text}" must be at least 1 byte`);
  return bytes;
}

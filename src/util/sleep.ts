/**
 * Waiting that a cancellation can cut short. Shared by the agent's retries and the remote
 * summarizer's Retry-After waits; each passes the error its callers expect on abort.
 */

export class SleepAbortedError extends Error {
  constructor() {
    super("Sleep aborted");
    this.name = "SleepAbortedError";
  }
}

/** Resolves after `ms`, or rejects with `aborted()` (default SleepAbortedError) as soon as `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal, aborted: () => Error = () => new SleepAbortedError()): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(aborted());
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(aborted());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

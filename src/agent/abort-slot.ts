/**
 * One cancellable operation of a kind at a time: a compaction, a branch summary, a retry wait.
 * Each run gets a fresh AbortController and gives it up when it ends, unless a newer run of the
 * same kind has taken its place, so aborting always reaches the operation in progress and never
 * an old one's leftover controller.
 */
export class AbortSlot {
  private controller: AbortController | undefined;

  /** An operation of this kind is running. */
  get active(): boolean {
    return this.controller !== undefined;
  }

  /** Aborts the operation in progress, if any. */
  abort(): void {
    this.controller?.abort();
  }

  /** Runs `work` with the slot's new signal; `work` is called at once, before the first await. */
  async run<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    this.controller = controller;
    try {
      return await work(controller.signal);
    } finally {
      if (this.controller === controller) this.controller = undefined;
    }
  }
}

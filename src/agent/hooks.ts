/**
 * A small typed hook runner. Handlers run one after another in registration order; for events
 * that can change what happens next, the last truthy result wins and `cancel: true` stops the
 * remaining handlers at once. A throwing handler is reported and skipped, so one broken hook
 * never breaks compaction. Every handler receives an AbortSignal (in `event.signal`).
 */

/** An event map: event name -> {payload, result}. */
export type HookEventMap = Record<string, { payload: object; result: unknown }>;

export type HookHandler<P, R> = (
  event: P & { signal: AbortSignal },
  // biome-ignore lint/suspicious/noConfusingVoidType: handlers with nothing to say are written as void functions
) => R | undefined | void | Promise<R | undefined | void>;

export interface HookError {
  event: string;
  /** position of the failing handler among the event's handlers */
  index: number;
  error: unknown;
}

export interface HookRunnerOptions {
  onError?: (failure: HookError) => void;
}

export class HookRunner<E extends HookEventMap> {
  private readonly handlers = new Map<keyof E, HookHandler<object, unknown>[]>();
  private onError: (failure: HookError) => void;

  constructor(options: HookRunnerOptions = {}) {
    this.onError = options.onError ?? (() => {});
  }

  /** Replaces the error callback (AgentSession routes hook failures to its listeners). */
  setErrorHandler(onError: (failure: HookError) => void): void {
    this.onError = onError;
  }

  /** Registers a handler; returns a function that removes it. */
  on<K extends keyof E>(event: K, handler: HookHandler<E[K]["payload"], E[K]["result"]>): () => void {
    const list = this.handlers.get(event) ?? [];
    list.push(handler as HookHandler<object, unknown>);
    this.handlers.set(event, list);
    return () => {
      const current = this.handlers.get(event);
      const at = current?.indexOf(handler as HookHandler<object, unknown>) ?? -1;
      if (current && at >= 0) current.splice(at, 1);
    };
  }

  hasHandlers(event: keyof E): boolean {
    return (this.handlers.get(event)?.length ?? 0) > 0;
  }

  /**
   * Runs every handler of `event` in order and returns the last truthy result. A result with
   * `cancel: true` is returned immediately; later handlers do not run. A handler that throws
   * (or rejects) is reported through onError and treated as if it returned nothing.
   */
  async run<K extends keyof E>(
    event: K,
    payload: E[K]["payload"],
    signal: AbortSignal = new AbortController().signal,
  ): Promise<E[K]["result"] | undefined> {
    let result: E[K]["result"] | undefined;
    for await (const value of this.results(event, payload, signal)) {
      result = value;
      // Leaving the loop closes the generator: the handlers after a cancel never run.
      if (typeof value === "object" && (value as { cancel?: unknown }).cancel === true) return result;
    }
    return result;
  }

  /**
   * Runs every handler of `event` in order and returns all truthy results, for events whose
   * contributions combine (several hooks each adding context lines). No short-circuit.
   */
  async collect<K extends keyof E>(
    event: K,
    payload: E[K]["payload"],
    signal: AbortSignal = new AbortController().signal,
  ): Promise<E[K]["result"][]> {
    const results: E[K]["result"][] = [];
    for await (const value of this.results(event, payload, signal)) results.push(value);
    return results;
  }

  /**
   * The truthy results of `event`'s handlers, each handler called only when the previous result
   * has been taken. A handler that throws (or rejects) is reported through onError and skipped.
   */
  private async *results<K extends keyof E>(event: K, payload: E[K]["payload"], signal: AbortSignal): AsyncGenerator<E[K]["result"]> {
    // Copy: a handler that unregisters itself must not make the loop skip its neighbour.
    const list = [...(this.handlers.get(event) ?? [])];
    const withSignal = { ...payload, signal };
    for (let index = 0; index < list.length; index++) {
      let value: unknown;
      try {
        value = await list[index](withSignal);
      } catch (error) {
        this.onError({ event: String(event), index, error });
        continue;
      }
      if (value) yield value as E[K]["result"];
    }
  }
}

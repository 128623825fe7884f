/**
 * The extractive summarizer on worker threads, for `bonsai serve --extractive`: a summary is
 * seconds of CPU on a large transcript, and on the thread that answers HTTP it would hold up
 * health checks, timeouts and the 429s of the concurrency limit. Requests wait in order for a
 * free thread. A request aborted while it waits never starts; one aborted while it runs has its
 * thread stopped and replaced, so `--timeout` really frees the slot. The default leaves the main
 * thread a core of its own (one thread fewer than the cores, at least one). Threads keep the
 * process alive only while they work. Where a thread cannot start (no worker file beside this
 * module), requests are summarized on the calling thread as before, and the warning says so.
 */
import { availableParallelism } from "node:os";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { extractiveSummarizer } from "./extractive.js";
import { SummarizationAbortedError, type SummarizeRequest, type SummarizeResult, type Summarizer } from "./types.js";

export interface ThreadedSummarizer extends Summarizer {
  /** how many threads summarize at once */
  readonly threads: number;
  /** stops every thread; requests still waiting fail */
  close(): Promise<void>;
}

interface Task {
  id: number;
  request: SummarizeRequest;
  /** settle the request, removing its abort listeners (a long-lived signal keeps none behind) */
  resolve: (result: SummarizeResult) => void;
  reject: (error: Error) => void;
  /** listens for the request's abort until the task settles */
  onAbort: (listener: () => void) => void;
}

export interface ThreadOptions {
  /** hears that the threads could not start and summaries run on the calling thread */
  onWarning?: (message: string) => void;
  /** starts a thread (tests start one that cannot load) */
  start?: () => Worker;
}

interface Slot {
  worker: Worker;
  task?: Task;
  /** the thread has loaded its module and listens */
  ready: boolean;
}

/** One thread fewer than the cores, at least one: the thread that answers requests keeps a core. */
export const defaultThreads = (): number => Math.max(1, availableParallelism() - 1);

/**
 * The worker beside this module: the built .js as it is; the .ts source (tests, tsx) through a
 * bootstrap that registers tsx's loader in the thread first (found from this module, so any
 * working directory will do).
 */
function startWorker(): Worker {
  const here = import.meta.url;
  if (!here.endsWith(".ts")) return new Worker(new URL("./extractive-worker.js", here));
  const tsx = pathToFileURL(join(dirname(createRequire(here).resolve("tsx/package.json")), "dist/esm/api/index.mjs")).href;
  const source = new URL("./extractive-worker.ts", here).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(source)}); });`;
  return new Worker(bootstrap, { eval: true });
}

export function threadedExtractiveSummarizer(threads: number = defaultThreads(), options: ThreadOptions = {}): ThreadedSummarizer {
  const inline = extractiveSummarizer();
  const start = options.start ?? startWorker;
  const waiting: Task[] = [];
  const slots: Slot[] = [];
  let nextId = 0;
  let broken = false;
  let closed = false;

  const settle = (slot: Slot) => {
    slot.task = undefined;
    slot.worker.unref();
    dispatch();
  };

  const spawn = (): Slot => {
    const worker = start();
    const slot: Slot = { worker, ready: false };
    worker.on("message", (answer: { id?: number; ready?: boolean; text?: string; error?: string }) => {
      if (answer.ready) {
        slot.ready = true;
        return;
      }
      const task = slot.task;
      if (!task || task.id !== answer.id) return;
      if (answer.error !== undefined) task.reject(new Error(answer.error));
      else task.resolve({ text: answer.text ?? "", model: "extractive" });
      settle(slot);
    });
    worker.on("error", (error) => {
      if (slot.ready) return replace(slot, error);
      // a thread that cannot load its module: summarize on this thread from now on, this task too
      if (!broken) options.onWarning?.(`the summarizer threads could not start (${error.message}); summarizing on the main thread`);
      broken = true;
      const task = slot.task;
      slot.task = undefined;
      if (task) waiting.unshift(task);
      replace(slot, error);
    });
    // a thread that ends by itself (not through replace or close): its task fails, another takes its place
    worker.on("exit", () => {
      if (slots.includes(slot)) replace(slot, new Error("a summarizer thread stopped"));
    });
    // after the listeners, which would hold the process again: an idle thread never keeps it alive
    worker.unref();
    return slot;
  };

  /** Stops a slot's thread (its task fails with `error`) and starts another in its place. */
  const replace = (slot: Slot, error: Error) => {
    const task = slot.task;
    slot.task = undefined;
    void slot.worker.terminate();
    const at = slots.indexOf(slot);
    if (at >= 0) slots.splice(at, 1);
    task?.reject(error);
    if (!closed && !broken) slots.push(spawn());
    if (broken) for (const t of waiting.splice(0)) runInline(t);
    else dispatch();
  };

  const runInline = (task: Task) => inline.summarize(task.request).then(task.resolve, task.reject);

  const dispatch = () => {
    for (const slot of slots) {
      if (slot.task) continue;
      const task = waiting.shift();
      if (!task) return;
      slot.task = task;
      slot.worker.ref();
      slot.worker.postMessage({ id: task.id, prompt: task.request.prompt, purpose: task.request.purpose });
      task.onAbort(() => slot.task === task && replace(slot, new SummarizationAbortedError()));
    }
  };

  for (let i = 0; i < threads; i++) slots.push(spawn());

  return {
    name: "extractive",
    contextWindow: 0,
    reasoning: false,
    threads,
    summarize(request) {
      if (request.signal?.aborted) return Promise.reject(new SummarizationAbortedError());
      if (closed) return Promise.reject(new Error("the summarizer's threads were stopped"));
      return new Promise<SummarizeResult>((resolve, reject) => {
        const listeners: (() => void)[] = [];
        const detach = () => {
          for (const listener of listeners.splice(0)) request.signal?.removeEventListener("abort", listener);
        };
        const task: Task = {
          id: nextId++,
          request,
          resolve: (result) => {
            detach();
            resolve(result);
          },
          reject: (error) => {
            detach();
            reject(error);
          },
          onAbort: (listener) => {
            if (!request.signal) return;
            listeners.push(listener);
            request.signal.addEventListener("abort", listener, { once: true });
          },
        };
        if (broken) return void runInline(task);
        waiting.push(task);
        // a request aborted while it waits leaves the queue and never starts
        task.onAbort(() => {
          const at = waiting.indexOf(task);
          if (at >= 0) {
            waiting.splice(at, 1);
            task.reject(new SummarizationAbortedError());
          }
        });
        dispatch();
      });
    },
    async close() {
      closed = true;
      const stopped = () => new Error("the summarizer's threads were stopped");
      for (const task of waiting.splice(0)) task.reject(stopped());
      const all = slots.splice(0);
      for (const slot of all) slot.task?.reject(stopped());
      // a thread being stopped no longer holds the process: without a handle of its own, the
      // process could end before the threads report they stopped, and whoever awaits this with it
      const hold = setInterval(() => {}, 1 << 30);
      try {
        await Promise.all(all.map((slot) => slot.worker.terminate()));
      } finally {
        clearInterval(hold);
      }
    },
  };
}

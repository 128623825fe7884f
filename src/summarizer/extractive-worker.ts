/**
 * A worker thread of the threaded extractive summarizer (extractive-threads.ts): summarizes one
 * request at a time, off the thread that answers HTTP. Receives `{id, prompt, purpose}`, answers
 * `{id, text}` or `{id, error}`; says `{ready: true}` once loaded, so a failure before it means the
 * thread cannot work at all.
 */
import { parentPort } from "node:worker_threads";
import { extractiveSummary } from "./extractive.js";
import type { SummarizeRequest } from "./types.js";

interface Job {
  id: number;
  prompt: string;
  purpose: SummarizeRequest["purpose"];
}

parentPort?.on("message", ({ id, prompt, purpose }: Job) => {
  try {
    parentPort!.postMessage({ id, text: extractiveSummary(prompt, purpose) });
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});

parentPort?.postMessage({ ready: true });

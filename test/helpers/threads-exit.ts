/**
 * A process that uses the threaded extractive summarizer (a summary answered, one aborted while it
 * runs, its thread replaced) and then has nothing left to do: it must exit on its own, printing
 * what happened (test/summarizer/extractive-threads.test.ts).
 */
import { threadedExtractiveSummarizer } from "../../src/summarizer/extractive-threads.js";

const summarizer = threadedExtractiveSummarizer(1);
const big = Array.from({ length: 6000 }, (_, i) => `[User]: step ${i} fix src/a${i % 7}.ts\n\n[Assistant]: ok`).join("\n\n");
const request = (signal?: AbortSignal) => ({ systemPrompt: "", prompt: big, maxTokens: 100, purpose: "history" as const, signal });
const done = await summarizer.summarize(request());
const stop = new AbortController();
const aborted = summarizer.summarize(request(stop.signal));
// the thread was idle, so the request went to it at once: this stops a running summary
stop.abort();
const outcome = await aborted.then(
  () => "finished",
  (error: Error) => error.name,
);
console.log(JSON.stringify({ summarized: done.text.length > 0, aborted: outcome }));

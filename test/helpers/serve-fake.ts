/**
 * A summarization server with a fake backend, run as a child process by the server tests and
 * the load test: every summary takes FAKE_DELAY_MS (default 50) and honours its abort signal.
 * Prints the server's JSON log lines on stdout (the first one carries the URL) and drains on
 * SIGTERM like `bonsai serve`. Settings come from the environment:
 * FAKE_DELAY_MS, MAX_CONCURRENT, TIMEOUT_MS, BONSAI_SERVER_TOKEN.
 */
import { startServer } from "../../src/server/app.js";
import { SummarizationAbortedError, type Summarizer } from "../../src/summarizer/types.js";

const delayMs = Number(process.env.FAKE_DELAY_MS ?? 50);

const fake: Summarizer = {
  name: "fake-sleep",
  contextWindow: 0,
  reasoning: false,
  summarize: ({ prompt, signal }) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve({ text: `summary of ${prompt.length} chars`, model: "fake-sleep" }), delayMs);
      signal?.addEventListener("abort", () => {
        clearTimeout(timer);
        reject(new SummarizationAbortedError());
      });
    }),
};

await startServer({
  summarizer: fake,
  token: process.env.BONSAI_SERVER_TOKEN || undefined,
  host: "127.0.0.1",
  port: 0,
  maxConcurrent: Number(process.env.MAX_CONCURRENT ?? 4),
  requestTimeoutMs: Number(process.env.TIMEOUT_MS ?? 10_000),
  handleSignals: true,
});

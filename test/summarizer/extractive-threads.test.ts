/**
 * The extractive summarizer on worker threads (`bonsai serve --extractive`): the same summaries
 * as on the calling thread, requests beyond the threads wait their turn, an abort stops a waiting
 * or a running one (the thread is replaced), and a server using it answers its health check while
 * a long summary runs, which a summary on the server's own thread would hold up.
 */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { getEventListeners } from "node:events";
import { Worker } from "node:worker_threads";
import { describe, it } from "node:test";
import { buildServer } from "../../src/server/app.js";
import { extractiveSummary } from "../../src/summarizer/extractive.js";
import { threadedExtractiveSummarizer } from "../../src/summarizer/extractive-threads.js";
import { SummarizationAbortedError } from "../../src/summarizer/types.js";
import { scriptArgs } from "../helpers/bonsai-bin.js";

const transcript = (turns: number, tag = "") =>
  Array.from(
    { length: turns },
    (_, i) =>
      `[User]: ${tag}step ${i}: fix the parser in src/parse${i % 7}.ts, do not use regex there\n\n[Assistant]: I will edit src/parse${i % 7}.ts and run npm test.\n\n[Tool result]: ${"ok ".repeat(40)}`,
  ).join("\n\n");
const request = (prompt: string, signal?: AbortSignal) => ({ systemPrompt: "", prompt, maxTokens: 2000, purpose: "history" as const, signal });

describe("threaded extractive summarizer", () => {
  it("gives the summaries the calling thread gives, for more requests at once than it has threads", async () => {
    const summarizer = threadedExtractiveSummarizer(2);
    try {
      const prompts = Array.from({ length: 6 }, (_, i) => transcript(20 + i, `t${i} `));
      const results = await Promise.all(prompts.map((p) => summarizer.summarize(request(p))));
      results.forEach((result, i) => {
        assert.equal(result.text, extractiveSummary(prompts[i], "history"));
        assert.equal(result.model, "extractive");
      });
      const short = await summarizer.summarize({ ...request(prompts[0]), purpose: "short" });
      assert.equal(short.text, extractiveSummary(prompts[0], "short"));
    } finally {
      await summarizer.close();
    }
  });

  it("an abort stops a running summary and one still waiting; the threads go on serving", async () => {
    const summarizer = threadedExtractiveSummarizer(1);
    try {
      const stopRunning = new AbortController();
      const waitingToo = new AbortController();
      const big = transcript(6000);
      const first = summarizer.summarize(request(big, stopRunning.signal));
      const second = summarizer.summarize(request(big, waitingToo.signal));
      waitingToo.abort();
      await assert.rejects(second, SummarizationAbortedError);
      stopRunning.abort();
      await assert.rejects(first, SummarizationAbortedError);
      const after = await summarizer.summarize(request(transcript(10)));
      assert.equal(after.text, extractiveSummary(transcript(10), "history"));
      // close() fails what runs and what waits
      const running = assert.rejects(summarizer.summarize(request(big)), /threads were stopped/);
      const waiting = assert.rejects(summarizer.summarize(request(big)), /threads were stopped/);
      await summarizer.close();
      await Promise.all([running, waiting]);
    } finally {
      await summarizer.close();
    }
  });

  it("a signal shared by many requests keeps no abort listener once they are done", async () => {
    const summarizer = threadedExtractiveSummarizer(1);
    try {
      const shared = new AbortController();
      const prompts = Array.from({ length: 4 }, (_, i) => transcript(10 + i));
      await Promise.all(prompts.map((p) => summarizer.summarize(request(p, shared.signal))));
      assert.equal(getEventListeners(shared.signal, "abort").length, 0);
    } finally {
      await summarizer.close();
    }
  });

  it("threads that cannot load their module: summaries on the calling thread, and a warning that says so", async () => {
    const warnings: string[] = [];
    const summarizer = threadedExtractiveSummarizer(2, {
      onWarning: (message) => warnings.push(message),
      start: () => new Worker("throw new Error('no worker module here')", { eval: true }),
    });
    try {
      const prompts = [transcript(12), transcript(13), transcript(14)];
      const results = await Promise.all(prompts.map((p) => summarizer.summarize(request(p))));
      assert.deepEqual(
        results.map((r) => r.text),
        prompts.map((p) => extractiveSummary(p, "history")),
      );
      assert.equal(warnings.length, 1, warnings.join("\n"));
      assert.match(warnings[0], /summarizer threads could not start \(no worker module here\); summarizing on the main thread/);
    } finally {
      await summarizer.close();
    }
  });

  it("threads keep no process alive once idle, a replaced one included: a server stops on SIGTERM", () => {
    const out = execFileSync(process.execPath, scriptArgs("test/helpers/threads-exit.ts"), { encoding: "utf8", timeout: 60_000 });
    assert.deepEqual(JSON.parse(out.trim()), { summarized: true, aborted: "SummarizationAbortedError" });
  });

  it("a server summarizing on a thread answers /healthz while a long summary runs", async () => {
    const summarizer = threadedExtractiveSummarizer(1);
    const app = buildServer({ summarizer, log: () => {} });
    try {
      const order: string[] = [];
      // a transcript the summarizer reads (inside <conversation>): about half a second of work on its thread
      const prompt = `<conversation>\n${transcript(8000)}\n</conversation>`;
      const summary = app.inject({ method: "POST", url: "/summarize", payload: { systemPrompt: "", prompt } }).then((r) => order.push(`summary ${r.statusCode}`));
      // health checks until one is answered while the summary is in flight (it reaches its thread after its body is read)
      let health = await app.inject({ method: "GET", url: "/healthz" });
      for (let tries = 0; JSON.parse(health.body).inFlight !== 1 && order.length === 0 && tries < 200; tries++) {
        await new Promise((r) => setTimeout(r, 5));
        health = await app.inject({ method: "GET", url: "/healthz" });
      }
      order.push(`health ${health.statusCode}`);
      assert.deepEqual(JSON.parse(health.body).inFlight, 1, "the summary was in flight when the health check was answered");
      await summary;
      assert.deepEqual(order, ["health 200", "summary 200"]);
    } finally {
      await app.close();
      await summarizer.close();
    }
  });
});

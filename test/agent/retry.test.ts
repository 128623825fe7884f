import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isContextOverflow } from "@mariozechner/pi-ai";
import {
  backoffDelay,
  isRetryableError,
  isRetryableText,
  MAX_COMPACTION_RETRY_DELAY_MS,
  parseRetryAfter,
  planSummarizerRetry,
  SleepAbortedError,
  sleep,
} from "../../src/agent/retry.js";
import type { AssistantMessage } from "../../src/format/message-types.js";

const detect = (m: Pick<AssistantMessage, "stopReason" | "errorMessage">) =>
  isContextOverflow({ ...m, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 } } as never);
const failed = (errorMessage: string) => ({ stopReason: "error" as const, errorMessage });
const NOW = Date.parse("2026-03-01T12:00:00.000Z");

describe("isRetryableError", () => {
  for (const text of [
    "529 Overloaded",
    "429 Too Many Requests",
    "Rate limit reached for requests",
    "503 Service Unavailable",
    "500 Internal server error",
    "fetch failed",
    "Connection error.",
    "You have hit your usage limit",
  ]) {
    test(`retries "${text}"`, () => assert.equal(isRetryableError(failed(text), detect), true));
  }

  for (const text of [
    "400 Your input exceeds the context window of this model",
    "This model's maximum context length is 128000 tokens. However, your messages resulted in 150000 tokens",
    "prompt is too long: 210000 tokens > 200000 maximum",
    "context_length_exceeded: 502 tokens over",
  ]) {
    test(`never retries the overflow "${text.slice(0, 40)}…"`, () => {
      assert.equal(isRetryableError(failed(text), detect), false);
    });
  }

  test("non-errors and errors without text are not retried", () => {
    assert.equal(isRetryableError({ stopReason: "stop", errorMessage: "429" }, detect), false);
    assert.equal(isRetryableError({ stopReason: "aborted", errorMessage: "429" }, detect), false);
    assert.equal(isRetryableError({ stopReason: "error" }, detect), false);
    assert.equal(isRetryableError(failed("401 invalid api key"), detect), false);
  });

  test("status codes only count as whole numbers", () => {
    assert.equal(isRetryableText("resulted in 150000 tokens"), false);
    assert.equal(isRetryableText("status 5003"), false);
    assert.equal(isRetryableText("status 502"), true);
  });
});

describe("parseRetryAfter", () => {
  test("retry-after-ms wins over everything after it", () => {
    assert.equal(parseRetryAfter("retry-after: 9\nretry-after-ms: 1500", NOW), 1500);
    assert.equal(parseRetryAfter('{"retry-after-ms":"250"}', NOW), 250);
  });
  test("retry-after in seconds", () => {
    assert.equal(parseRetryAfter("429 Too Many Requests (retry-after: 7)", NOW), 7000);
    assert.equal(parseRetryAfter("Retry-After=0.5", NOW), 500);
  });
  test("retry-after as an HTTP date", () => {
    assert.equal(parseRetryAfter("retry-after: Sun, 01 Mar 2026 12:00:30 GMT", NOW), 30_000);
    assert.equal(parseRetryAfter("retry-after: Sun, 01 Mar 2026 11:00:00 GMT", NOW), 0);
  });
  test("x-ratelimit-reset-ms: a duration, or epoch ms when huge", () => {
    assert.equal(parseRetryAfter("x-ratelimit-reset-ms: 1200", NOW), 1200);
    assert.equal(parseRetryAfter(`x-ratelimit-reset-ms: ${NOW + 4000}`, NOW), 4000);
  });
  test("x-ratelimit-reset: seconds, or epoch seconds when huge", () => {
    assert.equal(parseRetryAfter("x-ratelimit-reset: 3", NOW), 3000);
    assert.equal(parseRetryAfter(`x-ratelimit-reset: ${NOW / 1000 + 12}`, NOW), 12_000);
  });
  test("no hint gives undefined", () => {
    assert.equal(parseRetryAfter("503 Service Unavailable", NOW), undefined);
    assert.equal(parseRetryAfter("retry-after: soon", NOW), undefined);
  });
});

describe("backoffDelay", () => {
  test("doubles from the base and honours a longer hint", () => {
    assert.deepEqual([0, 1, 2, 3].map((a) => backoffDelay(a, 100)), [100, 200, 400, 800]);
    assert.equal(backoffDelay(1, 100, 5000), 5000);
    assert.equal(backoffDelay(3, 100, 50), 800);
  });
});

describe("planSummarizerRetry", () => {
  const retry = { enabled: true, maxRetries: 2, baseDelayMs: 10 };
  const plan = (errorText: string, attempt: number, hasNextCandidate = true, r = retry) =>
    planSummarizerRetry({ errorText, attempt, retry: r, hasNextCandidate, now: NOW });

  test("transient errors back off exponentially until retries run out", () => {
    assert.deepEqual(plan("503 unavailable", 0), { action: "retry", delayMs: 10 });
    assert.deepEqual(plan("503 unavailable", 1), { action: "retry", delayMs: 20 });
    assert.deepEqual(plan("503 unavailable", 2), { action: "next-candidate" });
  });
  test("a non-transient error moves on at once", () => {
    assert.deepEqual(plan("401 bad key", 0), { action: "next-candidate" });
  });
  test("a retry-after hint makes any error retryable and sets the wait", () => {
    assert.deepEqual(plan("weird failure retry-after-ms: 700", 0), { action: "retry", delayMs: 700 });
  });
  test("a wait over 30 s moves to the next candidate, but waits on the last one", () => {
    const text = `429 rate limit retry-after: ${MAX_COMPACTION_RETRY_DELAY_MS / 1000 + 1}`;
    assert.deepEqual(plan(text, 0, true), { action: "next-candidate" });
    assert.deepEqual(plan(text, 0, false), { action: "retry", delayMs: 31_000 });
  });
  test("retry disabled never retries", () => {
    assert.deepEqual(plan("503", 0, true, { ...retry, enabled: false }), { action: "next-candidate" });
  });
});

describe("sleep", () => {
  test("resolves after the delay", async () => {
    const start = Date.now();
    await sleep(20);
    assert.ok(Date.now() - start >= 15);
  });
  test("rejects as soon as the signal aborts", async () => {
    const controller = new AbortController();
    const start = Date.now();
    setTimeout(() => controller.abort(), 10);
    await assert.rejects(sleep(5000, controller.signal), SleepAbortedError);
    assert.ok(Date.now() - start < 1000);
  });
  test("rejects at once with an aborted signal", async () => {
    await assert.rejects(sleep(5000, AbortSignal.abort()), SleepAbortedError);
  });
});

/**
 * The pure rules around automatic compaction: the threshold (lowest wins), the pressure levels
 * that start a background summary and a compaction, the progress and no-growth guards, the breaker.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  BREAKER_LIMIT,
  CompactionBreaker,
  contextPressure,
  contextTokensNow,
  madeProgress,
  progressWarning,
  summaryGrew,
} from "../../src/agent/context-pressure.js";
import { compactionThreshold } from "../../src/compaction/settings.js";
import type { AgentMessage } from "../../src/format/message-types.js";

describe("compactionThreshold", () => {
  test("window - reserveTokens when nothing else is set", () => {
    assert.equal(compactionThreshold(200_000, { reserveTokens: 16_384 }), 183_616);
  });
  test("the lowest of reserve, percent and tokens wins", () => {
    assert.equal(compactionThreshold(200_000, { reserveTokens: 16_384, thresholdPercent: 50 }), 100_000);
    assert.equal(compactionThreshold(200_000, { reserveTokens: 16_384, thresholdPercent: 50, thresholdTokens: 60_000 }), 60_000);
    assert.equal(compactionThreshold(200_000, { reserveTokens: 16_384, thresholdTokens: 190_000 }), 183_616);
    assert.equal(compactionThreshold(10_000, { reserveTokens: 1_000, thresholdPercent: 95 }), 9_000);
  });
  test("an unknown window has no threshold; a small window keeps three quarters whatever the reserve", () => {
    assert.equal(compactionThreshold(0, { reserveTokens: 100, thresholdTokens: 50 }), 0);
    assert.equal(compactionThreshold(1000, { reserveTokens: 5000 }), 750);
    // the README's advice for local models: --context-window 8192 with the default reserve
    assert.equal(compactionThreshold(8192, { reserveTokens: 16384 }), 6144);
    assert.equal(compactionThreshold(200_000, { reserveTokens: 16384 }), 183_616, "a large window keeps the whole reserve");
    assert.equal(compactionThreshold(8192, { reserveTokens: 16384, thresholdPercent: 50 }), 4096, "a lower setting still wins");
  });
});

describe("contextPressure", () => {
  const settings = { reserveTokens: 200, backgroundPercent: 80 };
  test("below, background from backgroundPercent of the threshold, threshold past it", () => {
    // threshold 800, background from 640
    assert.equal(contextPressure(600, 1000, settings).level, "below");
    assert.equal(contextPressure(640, 1000, settings).level, "background");
    assert.equal(contextPressure(800, 1000, settings).level, "background");
    assert.equal(contextPressure(801, 1000, settings).level, "threshold");
    assert.equal(contextPressure(801, 1000, settings).threshold, 800);
  });
  test("backgroundPercent 0 turns the background level off; an unknown window is always below", () => {
    assert.equal(contextPressure(790, 1000, { ...settings, backgroundPercent: 0 }).level, "below");
    assert.equal(contextPressure(5000, 0, settings).level, "below");
  });
});

describe("contextTokensNow", () => {
  const user = (text: string, timestamp = 1): AgentMessage => ({ role: "user", content: [{ type: "text", text }], timestamp });
  const answer = (input: number, timestamp = 2): AgentMessage =>
    ({
      role: "assistant",
      content: [{ type: "text", text: "ok" }],
      api: "x",
      provider: "p",
      model: "m",
      stopReason: "stop",
      timestamp,
      usage: { input, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: input + 10, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    }) as AgentMessage;
  test("fresh usage plus the estimate of what follows", () => {
    const messages = [user("a"), answer(500), user("x".repeat(400))];
    assert.equal(contextTokensNow(messages), 510 + 100);
  });
  test("usage from before the compaction that opens the context is not trusted: the whole context is estimated", () => {
    const summary = { role: "compactionSummary", summary: "s", tokensBefore: 5000, timestamp: 5 } as AgentMessage;
    const messages = [summary, user("a"), answer(5000, 2), user("x".repeat(400), 10)];
    assert.ok(contextTokensNow(messages) < 200, "estimated");
    const fresh = [summary, user("a"), answer(300, 9), user("x".repeat(400), 10)];
    assert.equal(contextTokensNow(fresh), 310 + 100);
  });
});

describe("guards", () => {
  test("progress: at most 80% of the threshold", () => {
    assert.equal(madeProgress(800, 1000), true);
    assert.equal(madeProgress(801, 1000), false);
    assert.equal(madeProgress(5, 0), true);
    assert.match(progressWarning(1000, 900, 1000), /freed only 100 tokens .*900 of a 1,000-token threshold/);
  });
  test("no growth: a summary with more tokens than it replaces", () => {
    assert.equal(summaryGrew("x".repeat(400), 100), false);
    assert.equal(summaryGrew("x".repeat(404), 100), true);
  });
  test("the breaker opens on the third failure in a row; an automatic success before that resets it", () => {
    const breaker = new CompactionBreaker();
    assert.equal(breaker.failed(), false);
    breaker.succeeded(false);
    assert.equal(breaker.failuresInARow, 0);
    for (let i = 1; i < BREAKER_LIMIT; i++) assert.equal(breaker.failed(), false);
    assert.equal(breaker.failed(), true);
    assert.equal(breaker.open, true);
    breaker.succeeded(false);
    assert.equal(breaker.open, true, "only a manual compaction closes it");
    breaker.succeeded(true);
    assert.equal(breaker.open, false);
  });
});

/** What the chat says about work the session does by itself: the status line, auto-compaction, retries. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { autoCompactionEndBlock, autoCompactionStartText, noticeBlock, statusLine } from "../../src/chat/notices.js";

test("the status line names what runs, overflow first, and how to stop it", () => {
  assert.equal(statusLine("overflow", "answering"), "Context overflow detected, Auto-compacting… (esc to cancel)");
  assert.equal(statusLine("threshold", "answering"), "Auto-compacting… (esc to cancel)");
  assert.equal(statusLine(undefined, "compacting"), "Compacting… (esc to cancel)");
  assert.equal(statusLine(undefined, "summarizing"), "Summarizing the branch… (esc to cancel)");
  assert.equal(statusLine(undefined, "answering"), "Working… (esc to stop)");
  assert.equal(statusLine(undefined, "answering", true), "Thinking… (esc to stop)");
  assert.equal(statusLine("threshold", "answering", true), "Auto-compacting… (esc to cancel)", "compaction outranks thinking");
  assert.equal(statusLine(undefined, undefined), undefined);
});

test("a threshold compaction says the size and the threshold the session compacts at", () => {
  assert.equal(
    autoCompactionStartText("threshold", { tokens: 3605, contextWindow: 4000, percent: 90 }, { reserveTokens: 1000 }),
    "Auto-compacting: the context (3.6k tokens) passed the threshold of 3k in a 4k-token window.",
  );
  // the default reserve of 16,384 in an 8,192-token window: the threshold the session uses (6,144), not 0
  assert.equal(
    autoCompactionStartText("threshold", { tokens: 6500, contextWindow: 8192, percent: 79 }, { reserveTokens: 16384 }),
    "Auto-compacting: the context (6.5k tokens) passed the threshold of 6.1k in a 8.2k-token window.",
  );
  assert.match(autoCompactionStartText("threshold", { tokens: 150_000, contextWindow: 200_000, percent: 75 }, { reserveTokens: 16384, thresholdPercent: 70 }), /threshold of 140k /);
  assert.equal(autoCompactionStartText("threshold", { tokens: null, contextWindow: 4000, percent: null }, { reserveTokens: 1000 }), "Auto-compacting: the context passed the threshold.");
  assert.match(autoCompactionStartText("overflow", undefined, { reserveTokens: 1000 }), /^Context overflow detected: /);
});

test("how an automatic compaction ended", () => {
  const base = { type: "auto_compaction_end" as const, reason: "overflow" as const, aborted: false, willRetry: true };
  const result = { summary: "s", firstKeptEntryId: "abc12345", tokensBefore: 12_345 };
  assert.deepEqual(autoCompactionEndBlock({ ...base, result } as never), {
    style: "success",
    text: "✓ Auto-compaction (overflow): 12,345 tokens of context; kept from entry abc12345; retrying the turn.",
  });
  assert.equal(autoCompactionEndBlock({ ...base, reason: "threshold", willRetry: false, result } as never).text.endsWith("abc12345."), true);
  assert.deepEqual(autoCompactionEndBlock({ ...base, aborted: true }), { style: "warning", text: "Auto-compaction cancelled." });
  assert.deepEqual(autoCompactionEndBlock({ ...base, errorMessage: "Auto-compaction failed: model down" }), {
    style: "warning",
    text: "Auto-compaction failed; continuing without compaction: model down",
  });
  assert.equal(autoCompactionEndBlock(base).text, "Auto-compaction found nothing to compact.");
  // a provider's own compaction says what it cost against what it saved
  const native = { lane: "anthropic", cacheReadShare: 0.9, tokensShed: 60_000, tokensWritten: 1_500, netTokens: 58_500 };
  assert.equal(
    autoCompactionEndBlock({ ...base, reason: "threshold", willRetry: false, result: { ...result, details: { method: "native", native } } } as never).text,
    "✓ Auto-compaction (threshold): 12,345 tokens of context; kept from entry abc12345 (provider-native, anthropic: 90% of the request read from the provider's cache; 60,000 tokens shed, 1,500 written (net 58,500)).",
  );
});

test("retries, pruning, warnings and hook failures are one line; other events none", () => {
  assert.equal(
    noticeBlock({ type: "auto_retry_start", attempt: 1, maxAttempts: 3, delayMs: 2000, errorMessage: "503" })?.text,
    "Retrying in 2.0 s (3 retries left): 503",
  );
  // issue 19, item 5: a connection error was shown once with its URL and cause; the retries only count down
  const describe = (message: string) => (message === "Connection error." ? "cannot reach http://h:9/v1: connection refused (ECONNREFUSED)" : message);
  const retry = (attempt: number) =>
    noticeBlock({ type: "auto_retry_start", attempt, maxAttempts: 3, delayMs: 2000 * attempt, errorMessage: "Connection error." }, describe)?.text;
  assert.equal(retry(1), "Retrying in 2.0 s (3 retries left)");
  assert.equal(retry(3), "Retrying in 6.0 s (1 retry left)");
  assert.equal(
    noticeBlock({ type: "auto_retry_end", success: false, attempt: 3, finalError: "Connection error." }, describe)?.text,
    "Gave up after 3 retries.",
  );
  assert.equal(noticeBlock({ type: "auto_retry_end", success: true, attempt: 1 }), undefined);
  assert.deepEqual(noticeBlock({ type: "auto_retry_end", success: false, attempt: 3, finalError: "Retry cancelled" }), {
    style: "error",
    text: "Gave up after 3 retries: Retry cancelled",
  });
  assert.equal(
    noticeBlock({ type: "compaction_retry", summarizer: "a/b", attempt: 1, errorMessage: "429", action: "next-candidate" })?.text,
    "Summarizer a/b failed (429); trying the next model.",
  );
  assert.equal(noticeBlock({ type: "session_pruned", tokensSaved: 4200, prunedCount: 3 })?.text, "Pruned 3 old tool outputs (~4,200 tokens; the file keeps the originals).");
  assert.equal(noticeBlock({ type: "warning", message: "careful" })?.style, "warning");
  assert.equal(noticeBlock({ type: "hook_error", event: "session_compact", index: 0, error: "x" })?.text, "Hook session_compact #0 failed: x");
  assert.equal(noticeBlock({ type: "agent_start" }), undefined);
});

test("/compact with nothing to compact says what is the case, never that it failed (issue 19, item 4)", async () => {
  const { CompactionError } = await import("../../src/agent/compaction-run.js");
  const { compactionFailedBlock } = await import("../../src/chat/notices.js");
  const nothing = compactionFailedBlock(new CompactionError("nothing-to-compact", "Nothing to compact yet: the whole conversation fits in the 20000 tokens kept verbatim"));
  assert.equal(nothing.style, "notice");
  assert.doesNotMatch(nothing.text, /fail/i);
  assert.match(nothing.text, /fits in the 20000 tokens kept verbatim/);
  const already = compactionFailedBlock(new CompactionError("already-compacted", "Already compacted"));
  assert.equal(already.style, "notice");
  assert.doesNotMatch(already.text, /fail/i);
  const failed = compactionFailedBlock(new CompactionError("failed", "server down"));
  assert.match(failed.text, /^Compaction failed: server down/);
});

test("long work shows its elapsed seconds from the first second on (issue 19, item 9)", () => {
  assert.equal(statusLine(undefined, "compacting", false, 0), "Compacting… (esc to cancel)");
  assert.equal(statusLine(undefined, "compacting", false, 3), "Compacting… (esc to cancel) · 3s");
  assert.equal(statusLine("threshold", "answering", false, 75), "Auto-compacting… (esc to cancel) · 1m 15s");
  assert.equal(statusLine(undefined, "answering", true, 12), "Thinking… (esc to stop) · 12s");
  assert.equal(statusLine(undefined, undefined, false, 5), undefined);
});

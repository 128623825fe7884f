/** The chat footer (model, context usage, session file) and the /session summary. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { displayPath, formatContextUsage, formatFooter, formatTokens } from "../../src/chat/footer.js";
import { formatCost, sessionInfoLines, sessionStats } from "../../src/chat/session-info.js";
import { SessionManager } from "../../src/session/manager.js";
import { assistantMsg, usage, userMsg } from "../helpers/session-builders.js";

test("token counts are short and keep the digits that matter", () => {
  assert.deepEqual(
    [0, 950, 1000, 1234, 9999, 12_345, 128_000, 999_999, 1_000_000, 1_500_000].map(formatTokens),
    ["0", "950", "1k", "1.2k", "10k", "12k", "128k", "1M", "1M", "1.5M"],
  );
});

test("context usage: tokens of window with percent, unknown after a compaction, no window", () => {
  assert.equal(formatContextUsage({ tokens: 12_345, contextWindow: 128_000, percent: 9.64 }), "12k/128k tokens (9.6%)");
  assert.equal(formatContextUsage({ tokens: 3605, contextWindow: 4000, percent: null }), "3.6k/4k tokens (90.1%)");
  assert.equal(formatContextUsage({ tokens: null, contextWindow: 4000, percent: null }), "?/4k tokens (until the next answer)");
  assert.equal(formatContextUsage(undefined), "context window unknown");
});

test("the footer names model, usage and file; a narrow terminal cuts the path from its start", () => {
  const input = {
    model: "openai-compatible/qwen",
    usage: { tokens: 2048, contextWindow: 32_768, percent: 6.25 },
    location: "/home/ana/.bonsai/sessions/--home-ana-app--/2026-01-01T00-00-00-000Z_abc.jsonl",
    home: "/home/ana",
  };
  assert.equal(
    formatFooter(input, 200),
    "openai-compatible/qwen · 2k/33k tokens (6.3%) · ~/.bonsai/sessions/--home-ana-app--/2026-01-01T00-00-00-000Z_abc.jsonl",
  );
  const narrow = formatFooter(input, 80);
  assert.equal(narrow.length, 80);
  assert.ok(narrow.startsWith("openai-compatible/qwen · 2k/33k tokens (6.3%) · …"));
  assert.ok(narrow.endsWith("000Z_abc.jsonl"));
  assert.equal(formatFooter(input, 40), "openai-compatible/qwen · 2k/33k tokens…");
  assert.equal(formatFooter({ ...input, location: undefined }, 200), "openai-compatible/qwen · 2k/33k tokens (6.3%) · (not saved)");
});

test("a database session's footer shows its location, cut from the start so the #ID stays", () => {
  const input = {
    model: "openai-compatible/qwen",
    usage: { tokens: 2048, contextWindow: 32_768, percent: 6.25 },
    location: "postgres://ana@db.internal:5432/agents#019a1b2c-3d4e-7f00-8a9b-0c1d2e3f4a5b",
    home: "/home/ana",
  };
  assert.equal(formatFooter(input, 200), `openai-compatible/qwen · 2k/33k tokens (6.3%) · ${input.location}`);
  const narrow = formatFooter(input, 90);
  assert.equal(narrow.length, 90);
  assert.ok(narrow.endsWith("#019a1b2c-3d4e-7f00-8a9b-0c1d2e3f4a5b"));
  assert.ok(narrow.includes(" · …"));
  const sqlite = formatFooter({ ...input, location: "sqlite:/home/ana/chats.db#s1" }, 200);
  assert.ok(sqlite.endsWith(" · sqlite:/home/ana/chats.db#s1"), "no ~ inside a location: it would not open again");
});

test("only paths under home get the ~", () => {
  assert.equal(displayPath("/home/ana/x.jsonl", "/home/ana"), "~/x.jsonl");
  assert.equal(displayPath("/home/anabel/x.jsonl", "/home/ana"), "/home/anabel/x.jsonl");
  assert.equal(displayPath("/tmp/x.jsonl"), "/tmp/x.jsonl");
});

test("/session counts entries of every branch and sums tokens and cost", () => {
  const session = SessionManager.inMemory("/w");
  session.appendMessage(userMsg("q"));
  const paid = usage(1000, 200, 300, 0);
  paid.cost = { input: 0.003, output: 0.003, cacheRead: 0.0001, cacheWrite: 0, total: 0.0061 };
  const a1 = session.appendMessage(assistantMsg("a", { usage: paid }));
  session.appendLabelChange(a1, "x");
  session.appendCompaction("sum", a1, 1200);
  session.branchWithSummary(a1, "branch");
  session.appendMessage(assistantMsg("b", { usage: usage(500, 100) }));
  const stats = sessionStats(session.getEntries());
  assert.equal(stats.entries, 6);
  assert.deepEqual(
    [stats.userMessages, stats.assistantMessages, stats.compactions, stats.branchSummaries, stats.labels],
    [1, 2, 1, 1, 1],
  );
  assert.deepEqual([stats.input, stats.output, stats.cacheRead], [1500, 300, 300]);
  assert.equal(Number(stats.cost.toFixed(4)), 0.0061);
  const lines = sessionInfoLines({ file: "/s.jsonl", entries: session.getEntries(), usage: undefined, model: "m/x" });
  assert.equal(lines[0], "file:     /s.jsonl");
  const inDatabase = sessionInfoLines({ file: undefined, location: "sqlite:/d/chats.db#s1", entries: [], usage: undefined, model: "m/x" });
  assert.equal(inDatabase[0], "location: sqlite:/d/chats.db#s1");
  assert.equal(sessionInfoLines({ file: undefined, entries: [], usage: undefined, model: "m/x" })[0], "file:     (not saved)");
  assert.equal(lines[1], "entries:  6 (1 user, 2 assistant, 0 tool results, 1 compaction, 1 branch summary, 1 label change)");
  assert.equal(lines[4], "tokens:   1.5k in, 300 out, cache 300 read / 0 written");
  assert.equal(lines[5], "cost:     $0.0061");
  assert.deepEqual([formatCost(0), formatCost(0.5), formatCost(12.345)], ["$0", "$0.50", "$12.35"]);
});

test("/session wraps to the terminal: a long path breaks after a /, never inside a name, under its label (issue 19, item 10)", () => {
  const file = "/home/someone/.bonsai/sessions/--home-someone-projects-shop--/2026-01-01T00-00-00-000Z_0194a22b-0f6d-7a1e-8b2c-3d4e5f60718a.jsonl";
  const lines = sessionInfoLines({ file, entries: [], usage: undefined, model: "m/x", width: 60 });
  const fileLines = lines.slice(0, lines.findIndex((l) => l.startsWith("entries:")));
  assert.ok(fileLines.length > 1);
  for (const line of lines) assert.ok(line.length <= 60, `${line.length}: ${line}`);
  assert.ok(fileLines.slice(1).every((l) => l.startsWith("          ") && !l.startsWith("           ")), fileLines.join("\n"));
  assert.ok(fileLines.slice(0, -1).every((l) => /[/_.-]$/.test(l)), fileLines.join("\n"));
  assert.ok(fileLines[0].endsWith("/"), "a directory boundary first");
  assert.equal(fileLines.map((l, i) => (i === 0 ? l.slice(10) : l.trim())).join(""), file);
});

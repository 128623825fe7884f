/**
 * Branch summaries, pure parts and the summarizer call: which entries a move abandons, what of
 * them fits the budget, which files they touched, and how the stored summary is laid out.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  BRANCH_SUMMARY_MAX_TOKENS,
  branchSummaryBudget,
  type BranchSource,
  collectEntriesForBranchSummary,
  generateBranchSummary,
  NO_CONTENT_SUMMARY,
  prepareBranchEntries,
} from "../../src/compaction/branch-summary.js";
import { computeFileLists } from "../../src/compaction/file-ops.js";
import type { AgentMessage, AssistantMessage, ToolCall } from "../../src/format/message-types.js";
import { BRANCH_SUMMARY_PREAMBLE, BRANCH_SUMMARY_PROMPT } from "../../src/prompts/branch.js";
import { SessionManager } from "../../src/session/manager.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import { SummarizationAbortedError, type SummarizeRequest, type Summarizer } from "../../src/summarizer/types.js";

// ---------------------------------------------------------------- builders

const ZERO_USAGE = {
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
};

const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: 1 });

function assistant(text: string, calls: { name: string; path: string }[] = []): AssistantMessage {
  const toolCalls: ToolCall[] = calls.map((c, i) => ({
    type: "toolCall",
    id: `call_${i}`,
    name: c.name,
    arguments: { path: c.path },
  }));
  return {
    role: "assistant",
    content: [{ type: "text", text }, ...toolCalls],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "claude-sonnet-4-5",
    usage: ZERO_USAGE,
    stopReason: "stop",
    timestamp: 1,
  };
}

const toolResult = (text: string): AgentMessage => ({
  role: "toolResult",
  toolCallId: "call_0",
  toolName: "read",
  content: [{ type: "text", text }],
  isError: false,
  timestamp: 1,
});

let nextId = 0;
function entry(type: string, fields: Record<string, unknown>): SessionEntry {
  nextId++;
  return {
    type,
    id: `e${nextId}`,
    parentId: null,
    timestamp: "2026-01-01T00:00:00.000Z",
    ...fields,
  } as unknown as SessionEntry;
}
const msgEntry = (message: AgentMessage) => entry("message", { message });
const compactionEntry = (summary: string, fields: Record<string, unknown> = {}) =>
  entry("compaction", { summary, firstKeptEntryId: "x", tokensBefore: 1000, ...fields });
const branchSummaryEntry = (summary: string, fields: Record<string, unknown> = {}) =>
  entry("branch_summary", { fromId: "x", summary, ...fields });

/** `n` tokens worth of text (4 characters per token). */
const tokens = (n: number, fill = "a") => fill.repeat(n * 4);

/** A summarizer that records its requests and answers with `answer` (or what `respond` returns). */
function fakeSummarizer(
  answer = "## Goal\nFix the parser.",
  options: { contextWindow?: number; respond?: (request: SummarizeRequest) => Promise<string> } = {},
): Summarizer & { requests: SummarizeRequest[] } {
  const requests: SummarizeRequest[] = [];
  return {
    name: "fake",
    contextWindow: options.contextWindow ?? 200_000,
    reasoning: false,
    requests,
    async summarize(request) {
      requests.push(request);
      return { text: options.respond ? await options.respond(request) : answer };
    },
  };
}

// ---------------------------------------------------------------- collection

describe("collectEntriesForBranchSummary", () => {
  // u1 - a1 - u2 - a2 - u3 - a3   (main)
  //        \- u4 - a4             (side branch off a1)
  function tree() {
    const s = SessionManager.inMemory("/tmp");
    const u1 = s.appendMessage(user("one"));
    const a1 = s.appendMessage(assistant("one done"));
    const u2 = s.appendMessage(user("two"));
    const a2 = s.appendMessage(assistant("two done"));
    const u3 = s.appendMessage(user("three"));
    const a3 = s.appendMessage(assistant("three done"));
    s.branch(a1);
    const u4 = s.appendMessage(user("four"));
    const a4 = s.appendMessage(assistant("four done"));
    return { s, u1, a1, u2, a2, u3, a3, u4, a4 };
  }

  it("collects nothing without an old leaf", () => {
    const { s, a1 } = tree();
    assert.deepEqual(collectEntriesForBranchSummary(s, null, a1), { entries: [], commonAncestorId: null });
  });

  it("collects the old branch below the fork, oldest first, across branches", () => {
    const { s, a1, u2, a2, u3, a3, a4 } = tree();
    const { entries, commonAncestorId } = collectEntriesForBranchSummary(s, a3, a4);
    assert.equal(commonAncestorId, a1);
    assert.deepEqual(
      entries.map((e) => e.id),
      [u2, a2, u3, a3],
    );
  });

  it("collects everything below an ancestor target, and nothing for a descendant", () => {
    const { s, u2, a2, u3, a3 } = tree();
    const up = collectEntriesForBranchSummary(s, a3, a2);
    assert.equal(up.commonAncestorId, a2);
    assert.deepEqual(
      up.entries.map((e) => e.id),
      [u3, a3],
    );
    const down = collectEntriesForBranchSummary(s, u2, a3);
    assert.equal(down.commonAncestorId, u2);
    assert.deepEqual(down.entries, []);
  });

  it("treats a user-message target as the common ancestor, so the target itself is not collected", () => {
    const { s, u2, a2, u3, a3 } = tree();
    const { entries, commonAncestorId } = collectEntriesForBranchSummary(s, a3, u2);
    assert.equal(commonAncestorId, u2);
    assert.deepEqual(
      entries.map((e) => e.id),
      [a2, u3, a3],
    );
  });

  it("goes through compactions instead of stopping at them", () => {
    const s = SessionManager.inMemory("/tmp");
    const u1 = s.appendMessage(user("one"));
    const a1 = s.appendMessage(assistant("one done"));
    const c = s.appendCompaction("condensed", a1, 500);
    const u2 = s.appendMessage(user("two"));
    const { entries, commonAncestorId } = collectEntriesForBranchSummary(s, u2, u1);
    assert.equal(commonAncestorId, u1);
    assert.deepEqual(
      entries.map((e) => e.id),
      [a1, c, u2],
    );
  });

  it("stops at a parent cycle in a damaged store instead of looping", () => {
    const a = { type: "custom", id: "a", parentId: "b", timestamp: "t", customType: "x" } as SessionEntry;
    const b = { type: "custom", id: "b", parentId: "a", timestamp: "t", customType: "x" } as SessionEntry;
    const byId = new Map([
      ["a", a],
      ["b", b],
    ]);
    const source: BranchSource = { getBranch: () => [], getEntry: (id) => byId.get(id) };
    const { entries } = collectEntriesForBranchSummary(source, "a", "zzz");
    assert.deepEqual(
      entries.map((e) => e.id),
      ["b", "a"],
    );
  });
});

// ---------------------------------------------------------------- preparation

describe("prepareBranchEntries", () => {
  it("maps entries to messages: tool results and metadata out, summaries and custom messages in", () => {
    const entries = [
      msgEntry(user("question")),
      msgEntry(assistant("let me look", [{ name: "read", path: "a.ts" }])),
      msgEntry(toolResult(tokens(50))),
      entry("model_change", { provider: "p", modelId: "m" }),
      entry("custom", { customType: "state", data: {} }),
      entry("custom_message", { customType: "note", content: "remember this", display: true }),
      compactionEntry("older work", { shortSummary: "short" }),
      branchSummaryEntry("a side trip"),
    ];
    const { messages, totalTokens } = prepareBranchEntries(entries);
    assert.deepEqual(
      messages.map((m) => m.role),
      ["user", "assistant", "custom", "compactionSummary", "branchSummary"],
    );
    const compaction = messages[3];
    assert.equal(compaction.role === "compactionSummary" && compaction.shortSummary, "short");
    // the tool result's 50 tokens are not counted
    assert.ok(totalTokens < 50, `totalTokens ${totalTokens}`);
  });

  it("keeps the newest messages that fit the budget and stops at the first that does not", () => {
    const entries = [
      msgEntry(user(tokens(30, "o"))),
      msgEntry(user(tokens(40, "m"))),
      msgEntry(user(tokens(50, "n"))),
    ];
    const unlimited = prepareBranchEntries(entries, 0);
    assert.equal(unlimited.messages.length, 3);
    assert.equal(unlimited.totalTokens, 120);

    const limited = prepareBranchEntries(entries, 100);
    assert.deepEqual(
      limited.messages.map((m) => (m.role === "user" ? (m.content as string)[0] : "")),
      ["m", "n"],
    );
    assert.equal(limited.totalTokens, 90);
    // 30 more would fit a budget of 120 exactly
    assert.equal(prepareBranchEntries(entries, 120).messages.length, 3);
  });

  it("admits a summary that overshoots while under 90% of the budget, then stops", () => {
    const old = msgEntry(user(tokens(5)));
    const summary = compactionEntry(tokens(100));
    const newest = msgEntry(user(tokens(50)));
    const admitted = prepareBranchEntries([old, summary, newest], 100);
    assert.deepEqual(
      admitted.messages.map((m) => m.role),
      ["compactionSummary", "user"],
    );
    assert.equal(admitted.totalTokens, 150);

    const fullNewest = msgEntry(user(tokens(90)));
    const refused = prepareBranchEntries([old, summary, fullNewest], 100);
    assert.deepEqual(
      refused.messages.map((m) => m.role),
      ["user"],
    );
    assert.equal(refused.totalTokens, 90);

    const branchSummary = branchSummaryEntry(tokens(100));
    const viaBranch = prepareBranchEntries([old, branchSummary, newest], 100);
    assert.deepEqual(
      viaBranch.messages.map((m) => m.role),
      ["branchSummary", "user"],
    );

    // an ordinary message that overshoots is never admitted
    const big = msgEntry(user(tokens(100)));
    assert.equal(prepareBranchEntries([old, big, newest], 100).messages.length, 1);
  });

  it("counts the files of the first message that does not fit, but not of older ones", () => {
    const entries = [
      msgEntry(assistant(tokens(10), [{ name: "edit", path: "older.ts" }])),
      msgEntry(assistant(tokens(100), [{ name: "write", path: "first-excluded.ts" }])),
      msgEntry(assistant("short", [{ name: "read", path: "kept.ts" }])),
    ];
    const { messages, fileOps } = prepareBranchEntries(entries, 50);
    assert.equal(messages.length, 1);
    assert.deepEqual(computeFileLists(fileOps), { readFiles: ["kept.ts"], modifiedFiles: ["first-excluded.ts"] });
  });

  it("carries file lists of earlier branch summaries and compactions, but not of extension ones", () => {
    const entries = [
      compactionEntry(tokens(500), { details: { readFiles: ["c-read.ts"], modifiedFiles: ["c-mod.ts"] } }),
      compactionEntry("hook", { fromHook: true, details: { readFiles: ["hook.ts"], modifiedFiles: [] } }),
      branchSummaryEntry("side", { details: { readFiles: ["b-read.ts", "c-mod.ts"], modifiedFiles: ["b-mod.ts"] } }),
      branchSummaryEntry("ext", { fromExtension: true, details: { readFiles: ["ext.ts"], modifiedFiles: ["ext2.ts"] } }),
      msgEntry(user(tokens(20))),
    ];
    // the budget leaves the large compaction out; harvested lists do not depend on it
    const { messages, fileOps } = prepareBranchEntries(entries, 25);
    assert.ok(!messages.some((m) => m.role === "compactionSummary" && m.summary.length > 100));
    assert.equal(messages.length, 4);
    assert.deepEqual(computeFileLists(fileOps), {
      readFiles: ["b-read.ts", "c-read.ts"],
      modifiedFiles: ["b-mod.ts", "c-mod.ts"],
    });
  });
});

// ---------------------------------------------------------------- generation

describe("generateBranchSummary", () => {
  const branch = () => [
    msgEntry(user("Please fix the tokenizer crash")),
    msgEntry(assistant("Reading it", [{ name: "read", path: "src/tokenizer.ts" }])),
    msgEntry(toolResult("export function tokenize() {}")),
    msgEntry(assistant("Patched", [{ name: "edit", path: "src/tokenizer.ts" }, { name: "read", path: "README.md" }])),
  ];

  it("sends the transcript and the branch prompt once, as a branch request of at most 2048 tokens", async () => {
    const summarizer = fakeSummarizer();
    await generateBranchSummary(branch(), { summarizer });
    assert.equal(summarizer.requests.length, 1);
    const [request] = summarizer.requests;
    assert.equal(request.purpose, "branch");
    assert.equal(request.maxTokens, BRANCH_SUMMARY_MAX_TOKENS);
    assert.equal(request.reasoning, undefined);
    assert.ok(request.systemPrompt.length > 0);
    assert.match(request.prompt, /^<conversation>\n\[User\]: Please fix the tokenizer crash\n/);
    assert.ok(request.prompt.includes("</conversation>\n\n"));
    assert.ok(request.prompt.endsWith(BRANCH_SUMMARY_PROMPT));
    // tool results are not part of a branch summary's input
    assert.ok(!request.prompt.includes("export function tokenize"));
    for (const heading of ["## Goal", "## Constraints", "## Progress", "## Key Decisions", "## Next Steps"]) {
      assert.ok(request.prompt.includes(heading), heading);
    }
  });

  it("lays out preamble, blank line, summary, then file tags; returns the file lists", async () => {
    const result = await generateBranchSummary(branch(), { summarizer: fakeSummarizer("## Goal\nFix it.") });
    assert.deepEqual(result.readFiles, ["README.md"]);
    assert.deepEqual(result.modifiedFiles, ["src/tokenizer.ts"]);
    assert.equal(
      result.summary,
      `${BRANCH_SUMMARY_PREAMBLE}\n\n## Goal\nFix it.\n\n<read-files>\nREADME.md\n</read-files>\n\n<modified-files>\nsrc/tokenizer.ts\n</modified-files>`,
    );
  });

  it("appends custom instructions as an additional focus, or replaces the prompt when asked", async () => {
    const appended = fakeSummarizer();
    await generateBranchSummary(branch(), { summarizer: appended, customInstructions: "only the API changes" });
    assert.ok(appended.requests[0].prompt.endsWith(`${BRANCH_SUMMARY_PROMPT}\n\nAdditional focus: only the API changes`));

    const replaced = fakeSummarizer();
    await generateBranchSummary(branch(), {
      summarizer: replaced,
      customInstructions: "Three words only.",
      replaceInstructions: true,
    });
    assert.ok(replaced.requests[0].prompt.endsWith("</conversation>\n\nThree words only."));
    assert.ok(!replaced.requests[0].prompt.includes("## Goal"));
  });

  it("limits the transcript to the summarizer's window minus the reserve", async () => {
    const entries = [msgEntry(user(`OLDEST ${tokens(300)}`)), msgEntry(user(`NEWEST ${tokens(100)}`))];
    const small = fakeSummarizer("ok", { contextWindow: 1000 });
    await generateBranchSummary(entries, { summarizer: small, reserveTokens: 800 });
    assert.ok(small.requests[0].prompt.includes("NEWEST"));
    assert.ok(!small.requests[0].prompt.includes("OLDEST"));

    const roomy = fakeSummarizer("ok", { contextWindow: 1000 });
    await generateBranchSummary(entries, { summarizer: roomy, reserveTokens: 100 });
    assert.ok(roomy.requests[0].prompt.includes("OLDEST"));
  });

  it("computes the budget from the window, 128,000 when unknown, never zero or less", () => {
    assert.equal(branchSummaryBudget(200_000), 200_000 - 16_384);
    assert.equal(branchSummaryBudget(0), 128_000 - 16_384);
    assert.equal(branchSummaryBudget(50_000, 10_000), 40_000);
    assert.equal(branchSummaryBudget(8_192), 4_096);
  });

  it("answers 'No content to summarize' without a call, keeping file lists and tags", async () => {
    const summarizer = fakeSummarizer("", { contextWindow: 1000 });
    const onlyTools = await generateBranchSummary([msgEntry(toolResult("x")), entry("label", { targetId: "e1" })], {
      summarizer,
    });
    assert.deepEqual(onlyTools, { summary: NO_CONTENT_SUMMARY, readFiles: [], modifiedFiles: [] });

    // the one message is larger than the budget: nothing to send, but its files are known
    const huge = msgEntry(assistant(tokens(900), [{ name: "write", path: "big.ts" }, { name: "read", path: "in.ts" }]));
    const result = await generateBranchSummary([huge], { summarizer, reserveTokens: 500 });
    assert.equal(summarizer.requests.length, 0);
    assert.deepEqual(result.readFiles, ["in.ts"]);
    assert.deepEqual(result.modifiedFiles, ["big.ts"]);
    assert.equal(
      result.summary,
      `${NO_CONTENT_SUMMARY}\n\n<read-files>\nin.ts\n</read-files>\n\n<modified-files>\nbig.ts\n</modified-files>`,
    );
  });

  it("says so when the summarizer returns no text", async () => {
    const result = await generateBranchSummary(branch(), { summarizer: fakeSummarizer("  ") });
    assert.ok(result.summary?.startsWith(`${BRANCH_SUMMARY_PREAMBLE}\n\nNo summary generated`));
  });

  it("returns aborted, never a summary, when the signal fires before, during or after the call", async () => {
    const before = new AbortController();
    before.abort();
    const unused = fakeSummarizer();
    assert.deepEqual(await generateBranchSummary(branch(), { summarizer: unused, signal: before.signal }), {
      aborted: true,
    });
    assert.equal(unused.requests.length, 0);

    const during = new AbortController();
    const listening = fakeSummarizer("", {
      respond: (request) =>
        new Promise((_, reject) =>
          request.signal?.addEventListener("abort", () => reject(new SummarizationAbortedError())),
        ),
    });
    const pending = generateBranchSummary(branch(), { summarizer: listening, signal: during.signal });
    setTimeout(() => during.abort(), 20);
    assert.deepEqual(await pending, { aborted: true });

    const after = new AbortController();
    const deaf = fakeSummarizer("", {
      respond: async () => {
        after.abort();
        return "finished anyway";
      },
    });
    assert.deepEqual(await generateBranchSummary(branch(), { summarizer: deaf, signal: after.signal }), {
      aborted: true,
    });
  });

  it("reports a failing summarizer as an error result", async () => {
    const failing = fakeSummarizer("", {
      respond: async () => {
        throw new Error("429 rate limited");
      },
    });
    assert.deepEqual(await generateBranchSummary(branch(), { summarizer: failing }), { error: "429 rate limited" });
  });
});

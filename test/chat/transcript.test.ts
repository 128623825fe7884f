/** How `bonsai chat` shows messages: tool calls on one line, results as one line, summaries as boxes. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  assistantText,
  assistantTrailer,
  messageBlocks,
  streamingView,
  SUMMARY_PREVIEW_LINES,
  summaryBlock,
  THINKING_LIVE_LINES,
  thinkingLine,
  thinkingText,
  toolCallLine,
  toolResultLine,
  withoutBranchPreamble,
} from "../../src/chat/transcript.js";
import type { AssistantMessage } from "../../src/format/message-types.js";
import { BRANCH_SUMMARY_PREAMBLE } from "../../src/prompts/branch.js";
import { assistantMsg, T0, toolResultMsg, userMsg } from "../helpers/session-builders.js";

test("tool calls read as one short line per tool", () => {
  assert.equal(toolCallLine("read", { path: "src/a.ts" }), "read src/a.ts");
  assert.equal(toolCallLine("read", { path: "src/a.ts", offset: 40 }), "read src/a.ts from line 40");
  assert.equal(toolCallLine("write", { path: "n.md", content: "a\nb\nc" }), "write n.md (3 lines)");
  assert.equal(toolCallLine("edit", { path: "n.md", oldText: "a", newText: "b" }), "edit n.md");
  assert.equal(toolCallLine("bash", { command: "npm test" }), "$ npm test");
  assert.equal(toolCallLine("grep", { pattern: "x" }), 'grep(pattern="x")');
  assert.equal(toolCallLine("read", {}), "read()");
});

test("tool results show their first line and how much followed", () => {
  assert.equal(toolResultLine("Wrote 12 bytes to n.md", false), "✓ Wrote 12 bytes to n.md");
  assert.equal(toolResultLine("\nfirst\nsecond\nthird\n", false), "✓ first (+3 lines)");
  assert.equal(toolResultLine("oldText was not found", true), "✗ oldText was not found");
  assert.equal(toolResultLine("", false), "✓ (no output)");
});

test("an answer: its text, its tool calls, and why it stopped when it did not finish", () => {
  const answer: AssistantMessage = {
    ...assistantMsg("I'll write it."),
    content: [
      { type: "thinking", thinking: "hmm" },
      { type: "text", text: "I'll write it." },
      { type: "toolCall", id: "c1", name: "write", arguments: { path: "x.txt", content: "1" } },
    ],
    stopReason: "toolUse",
  };
  assert.equal(assistantText(answer), "I'll write it.");
  assert.deepEqual(messageBlocks(answer), [
    { style: "thinking", text: "thinking: hmm (1 line)" },
    { style: "assistant", text: "I'll write it." },
    { style: "toolCall", text: "→ write x.txt (1 line)" },
  ]);
  assert.deepEqual(assistantTrailer(answer), [{ style: "toolCall", text: "→ write x.txt (1 line)" }]);
  const failed = { ...assistantMsg(""), content: [], stopReason: "error" as const, errorMessage: "400 too long" };
  assert.deepEqual(messageBlocks(failed), [{ style: "error", text: "Error: 400 too long" }]);
  assert.deepEqual(assistantTrailer({ ...assistantMsg("part"), stopReason: "aborted" }), [{ style: "warning", text: "Stopped." }]);
  assert.deepEqual(assistantTrailer({ ...assistantMsg("part"), stopReason: "length" }), [
    { style: "warning", text: "(the answer was cut at the output limit)" },
  ]);
});

test("user messages, the synthetic continue prompt and tool results", () => {
  assert.deepEqual(messageBlocks(userMsg("fix it")), [{ style: "user", text: "fix it" }]);
  assert.deepEqual(messageBlocks({ ...userMsg("Continue if you have next steps."), synthetic: true }), [
    { style: "synthetic", text: "(auto) Continue if you have next steps." },
  ]);
  assert.deepEqual(messageBlocks(toolResultMsg("line 1\nline 2")), [{ style: "toolResult", text: "  ✓ line 1 (+1 line)" }]);
  assert.deepEqual(messageBlocks({ ...toolResultMsg("boom"), isError: true }), [{ style: "toolError", text: "  ✗ boom" }]);
  assert.deepEqual(messageBlocks({ role: "custom", customType: "note", content: "hidden", display: false, timestamp: T0 }), []);
});

test("summaries: a heading and the first non-blank lines; the branch preamble is left out", () => {
  const summary = Array.from({ length: 10 }, (_, i) => `line ${i + 1}\n`).join("\n");
  const block = summaryBlock("[x]", summary);
  const lines = block.text.split("\n");
  assert.equal(block.style, "summary");
  assert.equal(lines[0], "[x]");
  assert.deepEqual(lines.slice(1, 1 + SUMMARY_PREVIEW_LINES), Array.from({ length: SUMMARY_PREVIEW_LINES }, (_, i) => `  line ${i + 1}`));
  assert.equal(lines.at(-1), `  … ${10 - SUMMARY_PREVIEW_LINES} more lines (bonsai context shows all)`);

  const [compaction] = messageBlocks({ role: "compactionSummary", summary: "## Goal\nShip", tokensBefore: 12_345, timestamp: T0 });
  assert.equal(compaction.text, "[compaction] 12k tokens of history summarized:\n  ## Goal\n  Ship");
  const stored = `${BRANCH_SUMMARY_PREAMBLE}\n\n## Goal\nPlan B`;
  assert.equal(withoutBranchPreamble(stored), "## Goal\nPlan B");
  assert.equal(withoutBranchPreamble("## Goal\nno preamble"), "## Goal\nno preamble");
  const [branch] = messageBlocks({ role: "branchSummary", summary: stored, fromId: "a", timestamp: T0 });
  assert.equal(branch.text, "[branch summary] what happened on the branch left behind:\n  ## Goal\n  Plan B");
});

const thoughts = Array.from({ length: 10 }, (_, i) => `step ${i + 1}: check the next file`);

test("thinking collapses to one line: its first words and how many lines it ran", () => {
  assert.equal(thinkingLine(""), undefined);
  assert.equal(thinkingLine("  \n \n"), undefined);
  assert.equal(thinkingLine("Short thought."), "thinking: Short thought. (1 line)");
  assert.equal(thinkingLine("First line\n\nsecond line"), "thinking: First line… (2 lines)");
  const long = "The user wants a parser for the config format, so I should look at how the loader reads it first.";
  const line = thinkingLine(long)!;
  assert.match(line, /^thinking: The user wants a parser for the config format, so I should… \(1 line\)$/);
  assert.equal(thinkingLine(thoughts.join("\n")), "thinking: step 1: check the next file… (10 lines)");
  assert.equal(thinkingLine("x".repeat(200)), `thinking: ${"x".repeat(60)}… (1 line)`);
});

test("redacted and empty thinking show nothing; several blocks read as one", () => {
  const msg = (content: AssistantMessage["content"]): AssistantMessage => ({ ...assistantMsg(""), content });
  const redacted = { type: "thinking" as const, thinking: "[Reasoning redacted]", thinkingSignature: "opaque", redacted: true };
  assert.equal(thinkingText(msg([redacted, { type: "thinking", thinking: "   " }])), "");
  assert.deepEqual(messageBlocks(msg([redacted, { type: "text", text: "Answer." }])), [{ style: "assistant", text: "Answer." }]);
  assert.deepEqual(streamingView(msg([redacted])), { thinking: undefined, text: "", thinkingNow: false });
  assert.equal(thinkingText(msg([{ type: "thinking", thinking: "one\n" }, { type: "text", text: "t" }, { type: "thinking", thinking: "two" }])), "one\ntwo");
});

test("while it streams: the tail of the thinking until the answer starts, then the collapsed line", () => {
  const partial = (content: AssistantMessage["content"]): AssistantMessage => ({ ...assistantMsg(""), content });
  const thinking = { type: "thinking" as const, thinking: thoughts.join("\n") };
  const live = streamingView(partial([thinking]));
  assert.equal(live.text, "");
  assert.equal(live.thinking?.style, "thinking");
  assert.deepEqual(live.thinking?.text.split("\n"), thoughts.slice(-THINKING_LIVE_LINES));
  assert.equal(live.thinkingNow, true, "the spinner says Thinking while the block is open");

  const answering = streamingView(partial([thinking, { type: "text", text: "Found it" }]));
  assert.deepEqual(answering, {
    thinking: { style: "thinking", text: "thinking: step 1: check the next file… (10 lines)" },
    text: "Found it",
    thinkingNow: false,
  });
  // A tool call after the thinking also means the thinking is over.
  const calling = streamingView(partial([thinking, { type: "toolCall", id: "c", name: "read", arguments: {} }]));
  assert.equal(calling.thinking?.text, "thinking: step 1: check the next file… (10 lines)");
  assert.equal(calling.thinkingNow, false);
  // An answer that ended while thinking (stopped, cut) keeps only the line.
  assert.equal(streamingView(partial([thinking]), true).thinking?.text, "thinking: step 1: check the next file… (10 lines)");
  assert.equal(streamingView(partial([thinking]), true).thinkingNow, false);
  assert.deepEqual(streamingView(partial([{ type: "text", text: "plain" }])), { thinking: undefined, text: "plain", thinkingNow: false });
  // The trailer after a streamed answer repeats neither its thinking nor its text.
  assert.deepEqual(assistantTrailer(partial([thinking, { type: "text", text: "x" }])), []);
});

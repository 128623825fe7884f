/** How `bonsai chat` shows messages: tool calls on one line, results as one line, summaries as boxes. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  assistantText,
  assistantTrailer,
  messageBlocks,
  SUMMARY_PREVIEW_LINES,
  summaryBlock,
  toolCallLine,
  toolResultLine,
  withoutBranchPreamble,
} from "../src/chat/transcript.js";
import type { AssistantMessage } from "../src/messages/types.js";
import { BRANCH_SUMMARY_PREAMBLE } from "../src/prompts/branch.js";
import { assistantMsg, T0, toolResultMsg, userMsg } from "./helpers/session-builders.js";

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

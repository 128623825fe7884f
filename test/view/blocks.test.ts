import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { blocksText, entryBlocks } from "../../src/view/blocks.js";
import { assistantMsg, entry, image, msg, toolResultMsg, userEntry } from "../helpers/session-builders.js";

describe("entryBlocks", () => {
  it("splits an assistant message into thinking, text and tool calls with their arguments", () => {
    const message = {
      ...assistantMsg("x"),
      content: [
        { type: "thinking", thinking: "let me think" },
        { type: "text", text: "Reading **it**." },
        { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.ts" } },
      ],
      stopReason: "error",
      errorMessage: "overloaded",
    };
    assert.deepEqual(entryBlocks(msg("a1", null, message)), [
      { kind: "thinking", text: "let me think" },
      { kind: "text", text: "Reading **it**." },
      { kind: "toolCall", id: "c1", name: "read", args: '{\n  "path": "a.ts"\n}' },
      { kind: "output", title: "error (error)", text: "overloaded", isError: true },
    ]);
  });

  it("keeps a tool result's text and images, and its error", () => {
    const result = { ...toolResultMsg("file body", [image("QUJD")]), isError: true };
    assert.deepEqual(entryBlocks(msg("t1", null, result)), [
      { kind: "output", title: "read", text: "file body", isError: true },
      { kind: "image", mimeType: "image/png", data: "QUJD" },
    ]);
  });

  it("shows a pruned result's notice with its original from the archive, or says it has none", () => {
    const pruned = { ...toolResultMsg("[Output truncated - 900 tokens]"), prunedAt: 5 };
    const archived = new Map([["t1", [{ type: "text" as const, text: "the original" }]]]);
    assert.deepEqual(entryBlocks(msg("t1", null, pruned), archived), [
      { kind: "pruned", notice: "[Output truncated - 900 tokens]", prunedAt: 5, original: [{ kind: "output", title: "read", text: "the original", isError: false }] },
    ]);
    assert.deepEqual(entryBlocks(msg("t2", null, pruned), archived), [{ kind: "pruned", notice: "[Output truncated - 900 tokens]", prunedAt: 5 }]);
  });

  it("gives summaries, metadata and custom entries a block each, and search their text", () => {
    const compaction = entry("compaction", "c1", null, { summary: "## Goal\nship", shortSummary: "Shipping.", firstKeptEntryId: "u1", tokensBefore: 10 });
    assert.deepEqual(entryBlocks(compaction), [
      { kind: "meta", text: "Shipping." },
      { kind: "summary", title: "compaction summary", text: "## Goal\nship" },
    ]);
    assert.deepEqual(entryBlocks(entry("label", "l1", null, { targetId: "u1", label: "done" })), [{ kind: "meta", text: 'label "done" on u1' }]);
    assert.deepEqual(entryBlocks(entry("custom", "x1", null, { customType: "ext", data: { a: 1 } })), [{ kind: "output", title: "ext", text: '{\n  "a": 1\n}', isError: false }]);
    assert.match(blocksText(entryBlocks(userEntry("u1", null, "Find the NEEDLE"))), /NEEDLE/);
  });
});

/**
 * A preview reads only as far into an entry as it can show (messages/preview.ts, previewReach): a
 * row of a tree or of the session page costs its columns, not its megabyte of tool output, and
 * shows what the whole text would show.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { SessionEntry } from "../../src/format/entry-types.js";
import { clip, entryPreview, formatToolCall, previewReach } from "../../src/messages/preview.js";

const big = (word: string) => `${word} `.repeat(200_000);
const at = "2026-12-02T00:00:00.000Z";
const message = (m: unknown): SessionEntry => ({ type: "message", id: "m", parentId: null, timestamp: at, message: m }) as SessionEntry;

const ENTRIES: SessionEntry[] = [
  message({ role: "user", content: [{ type: "text", text: big("please") }, { type: "text", text: "second" }], timestamp: 1 }),
  message({ role: "user", content: big("plain string content"), timestamp: 1 }),
  message({ role: "assistant", content: [{ type: "text", text: "  " }, { type: "toolCall", id: "c", name: "write", arguments: { path: "a.ts", content: big("x\n\"y\"") } }], api: "a", provider: "p", model: "m", usage: {}, stopReason: "toolUse", timestamp: 1 }),
  message({ role: "assistant", content: [{ type: "text", text: big("the answer is") }, { type: "text", text: "tail" }], api: "a", provider: "p", model: "m", usage: {}, stopReason: "stop", timestamp: 1 }),
  message({ role: "assistant", content: [{ type: "thinking", thinking: big("hmm") }], api: "a", provider: "p", model: "m", usage: {}, stopReason: "stop", timestamp: 1 }),
  message({ role: "toolResult", toolCallId: "c", toolName: "bash", content: [{ type: "text", text: big("log line\n") }], isError: true, timestamp: 1 }),
  message({ role: "bashExecution", command: big("echo"), output: "", exitCode: 1, cancelled: false, truncated: false, timestamp: 1 }),
  message({ role: "compactionSummary", summary: big("summary"), tokensBefore: 1, timestamp: 1 }),
  { type: "compaction", id: "c", parentId: null, timestamp: at, summary: big("kept"), firstKeptEntryId: "m", tokensBefore: 12_000 } as SessionEntry,
  { type: "custom_message", id: "x", parentId: null, timestamp: at, customType: "note", content: big("note"), display: true } as SessionEntry,
];

describe("preview reach", () => {
  it("shows what the whole text shows, reading a bounded part of it", () => {
    for (const columns of [20, 60, 100]) {
      for (const entry of ENTRIES) {
        const whole = entryPreview(entry);
        const head = entryPreview(entry, previewReach(columns));
        assert.equal(head.kind, whole.kind);
        assert.equal(clip(head.text, columns), clip(whole.text, columns), `${entry.type} at ${columns} columns`);
        assert.ok(head.text.length < 2 * previewReach(columns) + 200, `${entry.type}: ${head.text.length} characters read`);
      }
    }
  });

  it("serializes a long string argument only as far as the call shows it, with the same result", () => {
    const content = big('a "quoted"\nline');
    const whole = JSON.stringify(content);
    assert.equal(formatToolCall("write", { content }, 40), `write(content=${whole.slice(0, 39)}…)`);
    assert.equal(formatToolCall("write", { n: 1, ok: true, list: [1, 2] }, 40), "write(n=1, ok=true, list=[1,2])");
  });
});

/**
 * The remembered tool-call sizes behind estimateTokens: repeated estimates of the same message
 * must still follow every change the library itself makes (pruning in place, replacing a
 * message, streaming into a message), and forgetTokenEstimate covers edits made in place.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { findCutPoint } from "../../src/compaction/cut-point.js";
import { pruneToolOutputs } from "../../src/compaction/prune.js";
import { estimateTokens, forgetTokenEstimate } from "../../src/compaction/tokens.js";
import type { AgentMessage, AssistantMessage } from "../../src/format/message-types.js";
import { assistantMsg, msg, toolResultMsg, userMsg } from "../helpers/session-builders.js";

function callingAssistant(args: Record<string, unknown>): AssistantMessage {
  const message = assistantMsg("ok");
  message.content.push({ type: "toolCall", id: "call_1", name: "bash", arguments: args });
  return message;
}

const expected = (text: string, name: string, args: unknown) => Math.ceil((text.length + name.length + JSON.stringify(args).length) / 4);

describe("estimateTokens on repeated calls", () => {
  it("gives the same number on every call, equal to a fresh count", () => {
    const args = { command: "x".repeat(400) };
    const message = callingAssistant(args);
    const first = estimateTokens(message);
    assert.equal(first, expected("ok", "bash", args));
    assert.equal(estimateTokens(message), first);
    // a copy with equal content estimates the same without sharing anything
    assert.equal(estimateTokens(structuredClone(message)), first);
  });

  it("follows arguments replaced by a new object, as streaming re-parses them", () => {
    const message = callingAssistant({ command: "ls" });
    const before = estimateTokens(message);
    const block = message.content[1] as { arguments: Record<string, unknown> };
    block.arguments = { command: "ls -la /some/long/path/".repeat(20) };
    const after = estimateTokens(message);
    assert.equal(after, expected("ok", "bash", block.arguments));
    assert.ok(after > before);
  });

  it("follows text that grows in place and blocks that are added", () => {
    const message = callingAssistant({ command: "ls" });
    estimateTokens(message);
    (message.content[0] as { text: string }).text += "y".repeat(800);
    assert.equal(estimateTokens(message), expected(`ok${"y".repeat(800)}`, "bash", { command: "ls" }));
    message.content.push({ type: "text", text: "z".repeat(400) });
    assert.equal(estimateTokens(message), expected(`ok${"y".repeat(800)}${"z".repeat(400)}`, "bash", { command: "ls" }));
  });

  it("sees arguments edited in place once forgetTokenEstimate is called", () => {
    const args: Record<string, unknown> = { command: "ls" };
    const message = callingAssistant(args);
    const before = estimateTokens(message);
    args.command = "find / -name '*.ts'".repeat(40);
    forgetTokenEstimate(message);
    const after = estimateTokens(message);
    assert.equal(after, expected("ok", "bash", args));
    assert.notEqual(after, before);
  });

  it("a tool result pruned in place estimates as its notice, and the cut moves accordingly", () => {
    const big = "r".repeat(40_000); // 10,000 tokens each
    const entries = [
      msg("u1", null, userMsg("start")),
      msg("a1", "u1", callingAssistant({ command: "cat a" })),
      msg("t1", "a1", { ...toolResultMsg(big), toolName: "bash" }),
      msg("u2", "t1", userMsg("next")),
      msg("a2", "u2", callingAssistant({ command: "cat b" })),
      msg("t2", "a2", { ...toolResultMsg(big), toolName: "bash" }),
      msg("u3", "t2", userMsg("and again")),
      msg("a3", "u3", callingAssistant({ command: "cat c" })),
      msg("t3", "a3", { ...toolResultMsg(big), toolName: "bash" }),
      msg("u4", "t3", userMsg("last")),
    ];
    const t1 = (entries[2] as { message: AgentMessage }).message;
    assert.equal(estimateTokens(t1), 10_000);
    const cutBefore = findCutPoint(entries, 0, entries.length, 15_000);
    const result = pruneToolOutputs(entries, { protectTokens: 10_000, minimumSavings: 1 });
    assert.ok(result.prunedEntryIds.includes("t1"));
    assert.ok(estimateTokens(t1) < 20);
    // t2 pruned too: the same budget now reaches further back
    const cutAfter = findCutPoint(entries, 0, entries.length, 15_000);
    assert.ok(cutAfter.firstKeptEntryIndex < cutBefore.firstKeptEntryIndex);
  });
});

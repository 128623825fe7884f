/**
 * Token accounting (docs/ARCHITECTURE.md, decisions 3 and 5), as the reference computes it.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  calculateContextTokens,
  calculatePromptTokens,
  estimateContextTokens,
  estimateTokens,
  getLastAssistantUsage,
  IMAGE_CHARS,
  shouldCompact,
} from "../../src/compaction/tokens.js";
import type { AgentMessage } from "../../src/format/message-types.js";
import { assistantMsg, entry, image, msg, T0, toolResultMsg, usage, userMsg } from "../helpers/session-builders.js";

describe("calculateContextTokens / calculatePromptTokens", () => {
  it("sums input, output and cache tokens when no total is reported", () => {
    assert.equal(calculateContextTokens(usage(1000, 500, 200, 100)), 1800);
    assert.equal(calculateContextTokens(usage(0, 0, 0, 0)), 0);
  });

  it("prefers the reported total", () => {
    assert.equal(calculateContextTokens(usage(1000, 500, 200, 100, 5000)), 5000);
  });

  it("prompt tokens leave output out, and fall back to the context tokens when the prompt parts are 0", () => {
    assert.equal(calculatePromptTokens(usage(1000, 500, 200, 100)), 1300);
    assert.equal(calculatePromptTokens(usage(0, 700, 0, 0)), 700);
    assert.equal(calculatePromptTokens(usage(0, 700, 0, 0, 900)), 900);
  });
});

describe("getLastAssistantUsage", () => {
  const withUsage = (input: number, stopReason: "stop" | "aborted" | "error" = "stop") =>
    assistantMsg("a", { usage: usage(input, 10), stopReason });

  it("returns the last assistant's usage", () => {
    const entries = [msg("1", null, userMsg("u")), msg("2", "1", withUsage(100)), msg("3", "2", withUsage(200)), msg("4", "3", userMsg("u"))];
    assert.equal(getLastAssistantUsage(entries)?.input, 200);
  });

  it("skips aborted and failed replies", () => {
    const entries = [msg("1", null, withUsage(100)), msg("2", "1", withUsage(200, "aborted")), msg("3", "2", withUsage(300, "error"))];
    assert.equal(getLastAssistantUsage(entries)?.input, 100);
  });

  it("skips assistants without usage and non-message entries; undefined when none qualifies", () => {
    const noUsage = { ...assistantMsg("a"), usage: undefined };
    const entries = [msg("1", null, withUsage(100)), msg("2", "1", noUsage), entry("custom", "3", "2", { customType: "x" })];
    assert.equal(getLastAssistantUsage(entries)?.input, 100);
    assert.equal(getLastAssistantUsage([msg("1", null, userMsg("u"))]), undefined);
    assert.equal(getLastAssistantUsage([]), undefined);
  });
});

describe("shouldCompact", () => {
  const on = { enabled: true, reserveTokens: 10000 };

  it("triggers strictly above window - reserve", () => {
    assert.equal(shouldCompact(95000, 100000, on), true);
    assert.equal(shouldCompact(89000, 100000, on), false);
    assert.equal(shouldCompact(90000, 100000, on), false);
    assert.equal(shouldCompact(90001, 100000, on), true);
  });

  it("never triggers when disabled", () => {
    assert.equal(shouldCompact(95000, 100000, { ...on, enabled: false }), false);
  });

  it("never triggers for an unknown (0) or negative context window", () => {
    assert.equal(shouldCompact(0, 0, on), false);
    assert.equal(shouldCompact(1_000_000, 0, on), false);
    assert.equal(shouldCompact(1_000_000, -1, on), false);
  });
});

describe("estimateTokens", () => {
  const ceil4 = (chars: number) => Math.ceil(chars / 4);

  it("user: string or text blocks, images count 0", () => {
    assert.equal(estimateTokens(userMsg("abcde")), 2);
    assert.equal(
      estimateTokens({ role: "user", content: [{ type: "text", text: "abcd" }, image(), { type: "text", text: "efgh" }], timestamp: T0 }),
      2,
    );
  });

  it("assistant: text, thinking, tool name and JSON arguments", () => {
    const m: AgentMessage = {
      ...assistantMsg(""),
      content: [
        { type: "text", text: "hello" },
        { type: "thinking", thinking: "hmm" },
        { type: "toolCall", id: "c1", name: "read", arguments: { path: "/a" } },
      ],
    };
    assert.equal(estimateTokens(m), ceil4(5 + 3 + 4 + JSON.stringify({ path: "/a" }).length));
  });

  it("toolResult: text plus 4800 characters per image", () => {
    assert.equal(IMAGE_CHARS, 4800);
    assert.equal(estimateTokens(toolResultMsg("abc", [image(), image()])), ceil4(3 + 9600));
  });

  it("custom and hookMessage: string or blocks, images counted like tool results", () => {
    const custom = { role: "custom", customType: "n", content: "x".repeat(41), display: true, timestamp: T0 } as const;
    assert.equal(estimateTokens(custom), 11);
    assert.equal(estimateTokens({ ...custom, content: [{ type: "text", text: "ab" }, image()] }), ceil4(2 + 4800));
    assert.equal(estimateTokens({ ...custom, role: "hookMessage" }), 11);
  });

  it("bashExecution: command plus output, even when excluded from context", () => {
    const bash = { role: "bashExecution", command: "ls -la", output: "x".repeat(30), cancelled: false, truncated: false, timestamp: T0 } as const;
    assert.equal(estimateTokens(bash), ceil4(36));
    assert.equal(estimateTokens({ ...bash, excludeFromContext: true }), ceil4(36));
  });

  it("pythonExecution: code plus output", () => {
    assert.equal(
      estimateTokens({ role: "pythonExecution", code: "print(1)", output: "1", cancelled: false, truncated: false, timestamp: T0 }),
      ceil4(9),
    );
  });

  it("fileMention: paths, contents and images", () => {
    const m: AgentMessage = {
      role: "fileMention",
      files: [
        { path: "a.ts", content: "x".repeat(100) },
        { path: "b.png", content: "", image: image() },
      ],
      timestamp: T0,
    };
    assert.equal(estimateTokens(m), ceil4(4 + 100 + 5 + 4800));
  });

  it("summaries: the summary text", () => {
    assert.equal(estimateTokens({ role: "branchSummary", summary: "x".repeat(9), fromId: "a", timestamp: T0 }), 3);
    assert.equal(estimateTokens({ role: "compactionSummary", summary: "x".repeat(8), tokensBefore: 1, timestamp: T0 }), 2);
  });
});

describe("estimateContextTokens", () => {
  it("uses the last usable usage plus estimates of the messages after it", () => {
    const messages: AgentMessage[] = [
      userMsg("x".repeat(400)),
      assistantMsg("y", { usage: usage(1000, 200) }),
      userMsg("z".repeat(40)),
      assistantMsg("w", { usage: usage(9999, 1), stopReason: "aborted" }),
    ];
    const result = estimateContextTokens(messages);
    assert.equal(result.usageTokens, 1200);
    assert.equal(result.trailingTokens, 10 + 1);
    assert.equal(result.tokens, 1211);
    assert.equal(result.lastUsageIndex, 1);
  });

  it("estimates everything when no usage exists", () => {
    const result = estimateContextTokens([userMsg("x".repeat(40)), userMsg("y".repeat(8))]);
    assert.deepEqual(result, { tokens: 12, usageTokens: 0, trailingTokens: 12, lastUsageIndex: null });
  });
});

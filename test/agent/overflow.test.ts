import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { isContextOverflow } from "@mariozechner/pi-ai";
import {
  type CompactionCheck,
  checkCompaction,
  compactionReduced,
  contextUsage,
  isBeforeLatestCompaction,
  isOverflow,
  loadOverflowDetector,
  type OverflowDetector,
  shouldAutoContinue,
} from "../../src/agent/overflow.js";
import type { AgentMessage, AssistantMessage, Usage } from "../../src/format/message-types.js";
import type { SessionEntry } from "../../src/format/entry-types.js";

const detect = isContextOverflow as unknown as OverflowDetector;
const T = Date.parse("2026-02-01T00:00:00.000Z");
const usage = (input: number, output = 0, cacheRead = 0): Usage => ({
  input,
  output,
  cacheRead,
  cacheWrite: 0,
  totalTokens: input + output + cacheRead,
});
const assistant = (over: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: "assistant",
  content: [{ type: "text", text: "ok" }],
  provider: "p",
  model: "m",
  usage: usage(100, 10),
  stopReason: "stop",
  timestamp: T,
  ...over,
});
const user = (text: string, timestamp = T): AgentMessage => ({ role: "user", content: text, timestamp });
const model = { provider: "p", id: "m", contextWindow: 1000 };

function check(over: Partial<CompactionCheck>) {
  return checkCompaction({
    message: assistant(),
    settings: { enabled: true, reserveTokens: 200 },
    model,
    messageIsStale: false,
    overflowRecoveryAttempted: false,
    messages: [],
    isStale: () => false,
    detectOverflow: detect,
    ...over,
  });
}

describe("isOverflow", () => {
  test("provider overflow errors, through pi-ai's detector", () => {
    const error = assistant({ stopReason: "error", errorMessage: "400 Your input exceeds the context window of this model" });
    assert.equal(isOverflow(error, 1000, detect), true);
    assert.equal(isOverflow(assistant({ stopReason: "error", errorMessage: "500 boom" }), 1000, detect), false);
    assert.equal(isOverflow(assistant({ stopReason: "error", errorMessage: "429 rate limit, too many tokens" }), 1000, detect), false);
  });

  test("silent overflow: a normal stop whose prompt exceeded the window", () => {
    const never: OverflowDetector = () => false;
    assert.equal(isOverflow(assistant({ usage: usage(900, 10, 101) }), 1000, never), true);
    assert.equal(isOverflow(assistant({ usage: usage(900, 500, 100) }), 1000, never), false);
    assert.equal(isOverflow(assistant({ stopReason: "toolUse", usage: usage(5000) }), 1000, never), false);
    assert.equal(isOverflow(assistant({ usage: usage(5000) }), 0, never), false);
  });

  test("the lazily loaded detector is pi-ai's", async () => {
    const loaded = await loadOverflowDetector();
    assert.equal(loaded(assistant({ stopReason: "error", errorMessage: "prompt is too long: 5 > 4" })), true);
  });
});

describe("checkCompaction", () => {
  test("threshold: strictly above window - reserve, counting output", () => {
    assert.deepEqual(check({ message: assistant({ usage: usage(700, 101) }) }), { kind: "threshold", contextTokens: 801 });
    assert.equal(check({ message: assistant({ usage: usage(700, 100) }) }).kind, "none");
  });

  test("pruned tokens are subtracted before the threshold", () => {
    assert.equal(check({ message: assistant({ usage: usage(900) }), prunedTokens: 150 }).kind, "none");
    assert.deepEqual(check({ message: assistant({ usage: usage(900) }), prunedTokens: 50 }), {
      kind: "threshold",
      contextTokens: 850,
    });
  });

  test("disabled, aborted, stale and unknown-window never trigger by threshold", () => {
    const big = assistant({ usage: usage(5000) });
    assert.equal(check({ message: big, settings: { enabled: false, reserveTokens: 200 } }).kind, "none");
    assert.equal(check({ message: { ...big, stopReason: "aborted" } }).kind, "none");
    assert.equal(check({ message: big, messageIsStale: true }).kind, "none");
    assert.equal(check({ message: big, model: { ...model, contextWindow: 0 } }).kind, "none");
    assert.equal(check({ message: big, model: undefined }).kind, "none");
  });

  test("the pre-prompt check includes an aborted message", () => {
    const big = assistant({ usage: usage(900), stopReason: "aborted" });
    assert.equal(check({ message: big, includeAborted: true }).kind, "threshold");
  });

  test("overflow of the current model recovers once per user turn", () => {
    const error = assistant({ stopReason: "error", errorMessage: "prompt is too long" });
    assert.equal(check({ message: error }).kind, "overflow");
    assert.equal(check({ message: error, overflowRecoveryAttempted: true }).kind, "overflow-exhausted");
  });

  test("an overflow from another model or before the compaction is not recovered", () => {
    const error = assistant({ stopReason: "error", errorMessage: "prompt is too long", model: "other" });
    assert.equal(check({ message: error }).kind, "none");
    const stale = assistant({ stopReason: "error", errorMessage: "prompt is too long" });
    assert.equal(check({ message: stale, messageIsStale: true }).kind, "none");
  });

  test("an error message uses the last fresh usage plus the estimate after it", () => {
    const earlier = assistant({ usage: usage(790) });
    const error = assistant({ stopReason: "error", errorMessage: "503 unavailable", usage: usage(0) });
    const messages = [user("x"), earlier, user("y".repeat(400)), error];
    assert.deepEqual(check({ message: error, messages }), { kind: "threshold", contextTokens: 790 + 100 + 1 });
  });

  test("an error message with no usage before it does not trigger", () => {
    const error = assistant({ stopReason: "error", errorMessage: "503", usage: usage(0) });
    assert.equal(check({ message: error, messages: [user("x".repeat(8000)), error] }).kind, "none");
  });

  test("an error message whose only usage predates the compaction does not trigger", () => {
    const kept = assistant({ usage: usage(5000) });
    const error = assistant({ stopReason: "error", errorMessage: "503", usage: usage(0) });
    const result = check({ message: error, messages: [kept, error], isStale: (m) => m === kept });
    assert.equal(result.kind, "none");
  });
});

describe("isBeforeLatestCompaction", () => {
  const kept = assistant({ timestamp: T + 5000 });
  const fresh = assistant({ timestamp: T + 5000 });
  const entry = (id: string, message: AgentMessage, seconds: number): SessionEntry => ({
    type: "message",
    id,
    parentId: null,
    timestamp: new Date(T + seconds * 1000).toISOString(),
    message,
  });
  const branch: SessionEntry[] = [
    entry("a", kept, 5),
    {
      type: "compaction",
      id: "c",
      parentId: "a",
      timestamp: new Date(T + 5000).toISOString(),
      summary: "s",
      firstKeptEntryId: "a",
      tokensBefore: 1,
    },
    entry("b", fresh, 5),
  ];

  test("decides by the message's entry position, even within the same millisecond", () => {
    assert.equal(isBeforeLatestCompaction(branch, kept), true);
    assert.equal(isBeforeLatestCompaction(branch, fresh), false);
  });
  test("falls back to timestamps for messages not on the branch", () => {
    assert.equal(isBeforeLatestCompaction(branch, assistant({ timestamp: T + 5000 })), true);
    assert.equal(isBeforeLatestCompaction(branch, assistant({ timestamp: T + 5001 })), false);
  });
  test("without a compaction nothing is stale", () => {
    assert.equal(isBeforeLatestCompaction(branch.slice(0, 1), kept), false);
  });
});

describe("compactionReduced", () => {
  test("compares estimates of the contexts before and after", () => {
    const before = [user("a".repeat(4000)), assistant()];
    assert.equal(compactionReduced(before, [user("short")]), true);
    assert.equal(compactionReduced(before, [...before, user("x")]), false);
  });
});

describe("shouldAutoContinue", () => {
  const base = { autoContinue: true, alreadyContinuedThisTurn: false, compactionReduced: true };
  test("continues a turn that stopped with announced work", () => {
    assert.equal(shouldAutoContinue({ ...base, lastMessage: assistant({ stopReason: "length" }) }), true);
    assert.equal(shouldAutoContinue({ ...base, lastMessage: assistant({ stopReason: "toolUse" }) }), true);
    const toolResult: AgentMessage = {
      role: "toolResult",
      toolCallId: "1",
      toolName: "read",
      content: [],
      isError: false,
      timestamp: T,
    };
    assert.equal(shouldAutoContinue({ ...base, lastMessage: toolResult }), true);
  });
  test("never after a final answer, twice in a turn, when disabled, or when nothing was freed", () => {
    const cut = assistant({ stopReason: "length" });
    assert.equal(shouldAutoContinue({ ...base, lastMessage: assistant() }), false);
    assert.equal(shouldAutoContinue({ ...base, lastMessage: assistant({ stopReason: "error" }) }), false);
    assert.equal(shouldAutoContinue({ ...base, lastMessage: cut, alreadyContinuedThisTurn: true }), false);
    assert.equal(shouldAutoContinue({ ...base, lastMessage: cut, autoContinue: false }), false);
    assert.equal(shouldAutoContinue({ ...base, lastMessage: cut, compactionReduced: false }), false);
    assert.equal(shouldAutoContinue({ ...base, lastMessage: undefined }), false);
  });
});

describe("contextUsage", () => {
  const kept = assistant({ usage: usage(900, 100) });
  const compaction: SessionEntry = {
    type: "compaction",
    id: "c",
    parentId: "k",
    timestamp: new Date(T + 1000).toISOString(),
    summary: "s",
    firstKeptEntryId: "k",
    tokensBefore: 1000,
  };
  const keptEntry: SessionEntry = { type: "message", id: "k", parentId: null, timestamp: new Date(T).toISOString(), message: kept };

  test("last usage plus the estimate of what follows, as a percentage of the window", () => {
    const messages = [user("a"), kept, user("b".repeat(400))];
    assert.deepEqual(contextUsage(messages, [keptEntry], 2000), { tokens: 1100, contextWindow: 2000, percent: (1100 / 2000) * 100 });
  });
  test("null after a compaction while only kept usage exists; fresh usage counts again", () => {
    const summary: AgentMessage = { role: "compactionSummary", summary: "s", tokensBefore: 1000, timestamp: T + 1000 };
    assert.deepEqual(contextUsage([summary, kept], [keptEntry, compaction], 2000), { tokens: null, contextWindow: 2000, percent: null });
    const fresh = assistant({ usage: usage(300, 20), timestamp: T + 2000 });
    const freshEntry: SessionEntry = { type: "message", id: "f", parentId: "c", timestamp: new Date(T + 2000).toISOString(), message: fresh };
    assert.equal(contextUsage([summary, kept, fresh], [keptEntry, compaction, freshEntry], 2000)?.tokens, 320);
  });
  test("failed and aborted answers do not count as usage", () => {
    const failed = assistant({ stopReason: "error", usage: usage(5000) });
    assert.equal(contextUsage([user("x".repeat(40)), failed], [], 2000)?.tokens, 10 + 1);
  });
  test("an unknown window gives undefined", () => {
    assert.equal(contextUsage([kept], [keptEntry], 0), undefined);
  });
});

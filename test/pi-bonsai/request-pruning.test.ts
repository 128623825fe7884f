import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { AgentMessage, AssistantMessage, ToolResultMessage } from "../../src/format/message-types.js";
import type { SessionEntry } from "../../src/format/entry-types.js";
import { pruneRequest, pruningEdits, resultEntryIds } from "../../packages/pi-bonsai/src/request-pruning.js";

const T = 1_700_000_000_000;
const user = (text: string): AgentMessage => ({ role: "user", content: text, timestamp: T });
const call = (id: string, name: string, args: Record<string, unknown>): AssistantMessage =>
  ({
    role: "assistant",
    content: [{ type: "toolCall", id, name, arguments: args }],
    api: "openai-completions",
    provider: "p",
    model: "m",
    usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
    stopReason: "toolUse",
    timestamp: T,
  }) as AssistantMessage;
const result = (id: string, name: string, text: string): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: [{ type: "text", text }],
  isError: false,
  timestamp: T,
});
const lines = (label: string, count: number) => Array.from({ length: count }, (_, i) => `${label} ${i}`).join("\n");

describe("request pruning (pi-bonsai)", () => {
  it("a read superseded by a later read names the entry of the newer result; the input is untouched", () => {
    const messages: AgentMessage[] = [
      user("read a.ts twice"),
      call("c1", "read", { path: "a.ts" }),
      result("c1", "read", lines("first", 200)),
      call("c2", "read", { path: "./a.ts" }),
      result("c2", "read", lines("second", 200)),
    ];
    const before = JSON.stringify(messages);
    const ids = new Map([
      ["c1", "e0000001"],
      ["c2", "e0000002"],
    ]);
    const pruned = pruneRequest(messages, ids, { prune: {}, savings: {} });
    assert.equal(JSON.stringify(messages), before, "the caller's messages are not changed");
    assert.equal(pruned.replaced, 1);
    assert.ok(pruned.tokensSaved > 0);
    const first = pruned.messages[2] as ToolResultMessage;
    assert.match((first.content[0] as { text: string }).text, /^\[Superseded: a\.ts was read again later \(entry e0000002\)/);
    assert.equal(pruned.messages[4], messages[4], "the newest read stays as it is");
  });

  it("an oversized result keeps head and tail; old output beyond the protected window becomes a notice", () => {
    const huge = lines("log", 6000);
    const messages: AgentMessage[] = [user("build"), call("b1", "bash", { command: "make" }), result("b1", "bash", huge)];
    const cut = pruneRequest(messages, new Map(), { prune: {}, savings: { maxResultTokens: 500 } });
    const text = ((cut.messages[2] as ToolResultMessage).content[0] as { text: string }).text;
    assert.ok(text.startsWith("log 0\n"));
    assert.ok(text.endsWith("log 5999"));
    assert.match(text, /tokens cut from the middle of this output/);

    const old: AgentMessage[] = [];
    for (let i = 0; i < 6; i++) old.push(call(`o${i}`, "bash", { command: `step ${i}` }), result(`o${i}`, "bash", lines(`out${i}`, 2500)));
    const aged = pruneRequest(old, new Map(), { prune: { protectTokens: 10_000, minimumSavings: 1_000 }, savings: { maxResultTokens: 0 } });
    assert.ok(aged.replaced >= 1);
    const oldest = ((aged.messages[1] as ToolResultMessage).content[0] as { text: string }).text;
    assert.match(oldest, /^\[Output truncated - \d+ tokens\]$/);
    const newest = ((aged.messages[11] as ToolResultMessage).content[0] as { text: string }).text;
    assert.ok(newest.startsWith("out5 0"), "the newest output is protected");
  });

  it("nothing to prune: the same messages back, nothing counted", () => {
    const messages: AgentMessage[] = [user("hi"), call("x", "bash", { command: "ls" }), result("x", "bash", "a\nb")];
    const same = pruneRequest(messages, new Map(), { prune: {}, savings: {} });
    assert.equal(same.replaced, 0);
    assert.equal(same.tokensSaved, 0);
    assert.deepEqual(same.messages, messages);
  });

  it("maps tool call ids to the entries holding their results", () => {
    const entry = (id: string, message: AgentMessage): SessionEntry => ({ type: "message", id, parentId: null, timestamp: "", message }) as SessionEntry;
    const ids = resultEntryIds([entry("u1", user("x")), entry("r1", result("c1", "read", "x")), entry("r2", result("c2", "bash", "y"))]);
    assert.deepEqual([...ids], [
      ["c1", "r1"],
      ["c2", "r2"],
    ]);
  });

  it("as pi 1.x context edits: one per result pruning changes, none once the context shows them", () => {
    const messages: AgentMessage[] = [user("read a.ts twice"), call("c1", "read", { path: "a.ts" }), result("c1", "read", lines("first", 200)), call("c2", "read", { path: "a.ts" }), result("c2", "read", lines("second", 200))];
    const ids = new Map([
      ["c1", "e-c1"],
      ["c2", "e-c2"],
    ]);
    const config = { prune: {}, savings: {} };
    const edits = pruningEdits(messages, ids, config);
    assert.deepEqual(edits.map((e) => e.targetId), ["e-c1"]);
    // the context with the edit applied, as pi shows it: nothing more to write
    const shown = messages.map((m) => (m.role === "toolResult" && m.toolCallId === "c1" ? { ...m, content: edits[0].replacement.content as ToolResultMessage["content"] } : m));
    assert.deepEqual(pruningEdits(shown, ids, config), []);
  });
});

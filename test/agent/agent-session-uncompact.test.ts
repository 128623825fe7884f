/**
 * Issue 28, item 3 in the agent: `AgentSession.uncompact()` undoes the latest compaction on a new
 * branch, and the agent's context follows it (the next request is the full history again), and
 * `/undo-compact` in the chat is that command.
 */
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { parseChatInput } from "../../src/chat/commands.js";
import type { AgentMessage } from "../../src/format/message-types.js";
import { bigText, createHarness, type Harness, replies } from "../helpers/agent-harness.js";

let harness: Harness | undefined;
afterEach(() => {
  harness?.cleanup();
  harness = undefined;
});

const texts = (messages: readonly AgentMessage[]) =>
  messages.map((m) => (m.role === "compactionSummary" ? "[summary]" : "content" in m && typeof m.content === "string" ? m.content.slice(0, 15) : m.role));

describe("AgentSession.uncompact", () => {
  test("the agent's context is the history before the compaction, then what came after it", async () => {
    harness = await createHarness({ responses: replies(4), contextWindow: 100_000, settings: { compaction: { keepRecentTokens: 100 } } });
    const h = harness;
    await h.session.prompt(bigText("first question", 300));
    await h.session.prompt(bigText("second question", 300));
    const full = texts(h.session.messages);
    await h.session.compact();
    assert.equal(texts(h.session.messages)[0], "[summary]", "compacted");
    await h.session.prompt("third question");
    const result = await h.session.uncompact();
    assert.equal(result.copied.length, 2, "the third question and its answer");
    assert.deepEqual(texts(h.session.messages), [...full, "user", "assistant"]);
    assert.deepEqual(texts(h.manager.buildSessionContext().messages), texts(h.session.messages), "the agent follows the session");
    await assert.rejects(h.session.uncompact(), /no compaction on the current branch/);
  });

  test("/undo-compact is the chat's command for it", () => {
    assert.deepEqual(parseChatInput("/undo-compact"), { kind: "undoCompact" });
    assert.deepEqual(parseChatInput("/undo-summary"), { kind: "undoCompact", branchSummary: true });
  });
});

describe("AgentSession.compact with a review (the chat's /compact --preview)", () => {
  test("a review that cancels writes nothing; one that edits stores exactly its text", async () => {
    harness = await createHarness({ responses: replies(2), contextWindow: 100_000, settings: { compaction: { keepRecentTokens: 100 } } });
    const h = harness;
    await h.session.prompt(bigText("first question", 300));
    await h.session.prompt(bigText("second question", 300));
    const seen: string[] = [];
    await assert.rejects(
      h.session.compact(undefined, { review: async (summary) => void seen.push(summary) }),
      /Compaction cancelled/,
    );
    assert.equal(h.manager.getEntries().filter((e) => e.type === "compaction").length, 0, "nothing written on cancel");
    assert.ok(seen[0].length > 0, "the review saw the summary");
    const edited = `${seen[0]}\n\nAlso: keep the retry budget at 3.`;
    const result = await h.session.compact(undefined, { review: async () => edited });
    const stored = h.manager.getEntries().filter((e) => e.type === "compaction");
    assert.equal(stored.length, 1);
    assert.equal((stored[0] as { summary: string }).summary, edited);
    assert.equal(result.summary, edited);
  });
});

describe("AgentSession.uncompact of a branch summary (the chat's /undo-summary)", () => {
  test("the context is the place moved to without the summary of the branch left", async () => {
    harness = await createHarness({ responses: replies(4), contextWindow: 100_000 });
    const h = harness;
    await h.session.prompt("first question");
    const moveTo = h.manager.getLeafId() as string;
    await h.session.prompt("second question, on a branch to leave");
    const moved = await h.session.navigateTree(moveTo, { summarize: true });
    assert.ok(moved.summaryEntry, "the branch left was summarized");
    await h.session.prompt("third question");
    const withSummary = texts(h.session.messages);
    assert.ok(withSummary.includes("branchSummary"));
    const result = await h.session.uncompact(undefined, "branch_summary");
    assert.equal(result.type, "branch_summary");
    assert.deepEqual(texts(h.session.messages), withSummary.filter((t) => t !== "branchSummary"));
  });
});

/**
 * Tree navigation (spec 12.12) and branching (spec 12.13) through AgentSession: where the leaf
 * goes, what the editor gets back, where branch summaries hang, abort, hooks, and the agent's
 * context following the move.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { afterEach, describe, test } from "node:test";
import type { BranchSummaryEntry, SessionEntry } from "../../src/format/entry-types.js";
import { createHarness, type Harness, replies, scriptedSummarizer } from "../helpers/agent-harness.js";

let harness: Harness | undefined;
afterEach(() => {
  harness?.cleanup();
  harness = undefined;
});

/** u1 -> a1 -> u2 -> a2 */
async function conversation(options: Parameters<typeof createHarness>[0] = {}) {
  harness = await createHarness({ responses: replies(8), ...options });
  await harness.session.prompt("first question");
  await harness.session.prompt("second question");
  const [u1, a1, u2, a2] = harness.manager.getEntries() as SessionEntry[];
  return { h: harness, u1, a1, u2, a2 };
}

const roles = (h: Harness) => h.session.messages.map((m) => m.role);

describe("navigateTree (spec 12.12)", () => {
  test("to the root user message without a summary: its text to edit, a null leaf, one root", async () => {
    const { h, u1 } = await conversation();
    const count = h.manager.getEntries().length;
    const result = await h.session.navigateTree(u1.id);
    assert.equal(result.editorText, "first question");
    assert.equal(result.cancelled, false);
    assert.equal(h.manager.getLeafId(), null);
    assert.equal(h.manager.getTree().length, 1);
    assert.equal(h.manager.getEntries().length, count, "no entries without a summary (in memory)");
    assert.deepEqual(h.session.messages, []);
  });

  test("to an assistant message: no editor text, that entry is the leaf, the context follows", async () => {
    const { h, a1 } = await conversation();
    const result = await h.session.navigateTree(a1.id);
    assert.equal(result.editorText, undefined);
    assert.equal(h.manager.getLeafId(), a1.id);
    assert.deepEqual(roles(h), ["user", "assistant"]);
  });

  test("summarize to the root user: a root branch_summary becomes the leaf", async () => {
    const { h, u1 } = await conversation();
    const result = await h.session.navigateTree(u1.id, { summarize: true });
    const leaf = h.manager.getLeafEntry() as BranchSummaryEntry;
    assert.equal(leaf.type, "branch_summary");
    assert.equal(leaf.parentId, null);
    assert.equal(result.summaryEntry, leaf);
    assert.match(leaf.summary, /Summary \d+ of \d+ chars/);
    assert.deepEqual(roles(h), ["branchSummary"]);
    const request = h.summarizer.requests.at(-1);
    assert.equal(request?.purpose, "branch");
    assert.match(request?.prompt ?? "", /second question/);
  });

  test("summarize to a nested user message: the summary hangs off its parent, which now has two children", async () => {
    const { h, a1, u2 } = await conversation();
    await h.session.navigateTree(u2.id, { summarize: true });
    const leaf = h.manager.getLeafEntry() as BranchSummaryEntry;
    assert.equal(leaf.type, "branch_summary");
    assert.equal(leaf.parentId, a1.id);
    assert.deepEqual(
      h.manager.getChildren(a1.id).map((e) => e.id).sort(),
      [u2.id, leaf.id].sort(),
    );
  });

  test("summarize to an assistant target: the summary's parent is the target and it is the leaf", async () => {
    const { h, a1 } = await conversation();
    const result = await h.session.navigateTree(a1.id, { summarize: true });
    assert.equal(result.summaryEntry?.parentId, a1.id);
    assert.equal(h.manager.getLeafId(), result.summaryEntry?.id);
    assert.deepEqual(roles(h), ["user", "assistant", "branchSummary"]);
  });

  test("abortBranchSummary: cancelled and aborted, the session untouched", async () => {
    const { h, u1, a2 } = await conversation({ summarizer: scriptedSummarizer({ gate: () => new Promise(() => {}) }) });
    const count = h.manager.getEntries().length;
    const navigation = h.session.navigateTree(u1.id, { summarize: true });
    setTimeout(() => h.session.abortBranchSummary(), 30);
    const result = await navigation;
    assert.equal(result.cancelled, true);
    assert.equal(result.aborted, true);
    assert.equal(result.summaryEntry, undefined);
    assert.equal(h.manager.getEntries().length, count);
    assert.equal(h.manager.getLeafId(), a2.id);
    assert.deepEqual(roles(h), ["user", "assistant", "user", "assistant"]);
  });

  test("the current leaf: nothing happens", async () => {
    const { h, a2 } = await conversation();
    const result = await h.session.navigateTree(a2.id, { summarize: true });
    assert.equal(result.cancelled, false);
    assert.equal(h.manager.getLeafId(), a2.id);
    assert.equal(h.summarizer.requests.length, 0);
  });

  test("custom instructions reach the summarizer", async () => {
    const { h, u1 } = await conversation();
    await h.session.navigateTree(u1.id, { summarize: true, customInstructions: "Use exactly 3 words" });
    assert.match(h.summarizer.requests.at(-1)?.prompt ?? "", /Use exactly 3 words/);
  });

  test("across branches: from a side branch back to u2, with a summary of the side branch", async () => {
    const { h, u2, a1 } = await conversation();
    await h.session.navigateTree(a1.id);
    await h.session.prompt("side branch question");
    const sideLeaf = h.manager.getLeafId();
    const result = await h.session.navigateTree(u2.id, { summarize: true });
    assert.equal(result.editorText, "second question");
    assert.equal(result.oldLeafId, sideLeaf);
    assert.ok((result.summaryEntry?.summary.length ?? 0) > 0);
    assert.match(h.summarizer.requests.at(-1)?.prompt ?? "", /side branch question/);
    assert.doesNotMatch(h.summarizer.requests.at(-1)?.prompt ?? "", /second question/);
  });

  test("a prompt after a move continues from the new leaf", async () => {
    const { h, a1 } = await conversation();
    await h.session.navigateTree(a1.id);
    await h.session.prompt("another direction");
    const user = h.manager.getEntries().find((e) => e.type === "message" && e.message.role === "user" && e.message.content !== "first question" && JSON.stringify(e.message.content).includes("another direction"));
    assert.equal(user?.parentId, a1.id);
    assert.deepEqual(roles(h), ["user", "assistant", "user", "assistant"]);
  });
});

describe("tree hooks", () => {
  test("session_before_tree can cancel; session_tree is not emitted then", async () => {
    const { h, u1, a2 } = await conversation();
    let treeEvents = 0;
    h.session.on("session_before_tree", ({ preparation }) => {
      assert.equal(preparation.targetId, u1.id);
      assert.equal(preparation.oldLeafId, a2.id);
      assert.equal(preparation.userWantsSummary, true);
      assert.equal(preparation.entriesToSummarize.length, 3);
      return { cancel: true };
    });
    h.session.on("session_tree", () => {
      treeEvents++;
    });
    const result = await h.session.navigateTree(u1.id, { summarize: true });
    assert.equal(result.cancelled, true);
    assert.equal(h.manager.getLeafId(), a2.id);
    assert.equal(treeEvents, 0);
  });

  test("a hook's summary is used (fromExtension), and session_tree reports the move", async () => {
    const { h, a1, a2 } = await conversation();
    const seen: unknown[] = [];
    h.session.on("session_before_tree", () => ({ summary: { summary: "hook summary", details: { by: "hook" } } }));
    h.session.on("session_tree", (e) => {
      seen.push({ ...e, signal: undefined });
    });
    const result = await h.session.navigateTree(a1.id, { summarize: true });
    assert.equal(result.summaryEntry?.summary, "hook summary");
    assert.equal(result.fromExtension, true);
    assert.equal(h.summarizer.requests.length, 0);
    assert.deepEqual(seen, [
      { newLeafId: result.summaryEntry?.id, oldLeafId: a2.id, summaryEntry: result.summaryEntry, fromExtension: true, signal: undefined },
    ]);
  });
});

describe("branch (spec 12.13)", () => {
  test("from the single message of a persisted session: its text, empty messages, an existing file", async () => {
    harness = await createHarness({ persisted: true, responses: replies(2) });
    await harness.session.prompt("only question");
    const [u1] = harness.manager.getEntries();
    const result = await harness.session.branch(u1.id);
    assert.deepEqual(result, { selectedText: "only question", cancelled: false });
    assert.deepEqual(harness.session.messages, []);
    const file = harness.manager.getSessionFile();
    assert.ok(file && existsSync(file));
  });

  test("in memory: empty messages and no session file", async () => {
    harness = await createHarness({ responses: replies(2) });
    await harness.session.prompt("only question");
    await harness.session.branch(harness.manager.getEntries()[0].id);
    assert.deepEqual(harness.session.messages, []);
    assert.equal(harness.manager.getSessionFile(), undefined);
  });

  test("from the 2nd of 3 user messages: a new session with the first exchange", async () => {
    harness = await createHarness({ persisted: true, responses: replies(3) });
    for (const q of ["one", "two", "three"]) await harness.session.prompt(q);
    const before = harness.manager.getSessionFile();
    const users = harness.manager.getEntries().filter((e) => e.type === "message" && e.message.role === "user");
    const result = await harness.session.branch(users[1].id);
    assert.equal(result.selectedText, "two");
    assert.deepEqual(roles(harness), ["user", "assistant"]);
    const after = harness.manager.getSessionFile();
    assert.ok(after && after !== before && existsSync(after));
  });

  test("only user messages can be branched from", async () => {
    harness = await createHarness({ responses: replies(1) });
    await harness.session.prompt("q");
    const assistant = harness.manager.getEntries()[1];
    await assert.rejects(harness.session.branch(assistant.id), /is not a user message/);
  });
});

/** The rows of the /tree selector: indentation only at forks, bookkeeping hidden, marks and labels. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { buildTreeView, formatTreeRow } from "../../src/chat/tree-view.js";
import { BRANCH_SUMMARY_PREAMBLE } from "../../src/prompts/branch.js";
import { SessionManager } from "../../src/session/manager.js";
import { assistantMsg, userMsg } from "../helpers/session-builders.js";

function view(session: SessionManager) {
  return buildTreeView(session.getTree(), session.getLeafId(), new Set(session.getBranch().map((e) => e.id)));
}

const plain = (session: SessionManager) => view(session).rows.map((row) => formatTreeRow(row, 80));

test("a linear conversation stays flat, and the leaf is marked and selected", () => {
  const session = SessionManager.inMemory("/w");
  session.appendMessage(userMsg("one"));
  session.appendMessage(assistantMsg("answer one"));
  session.appendMessage(userMsg("two"));
  const leaf = session.appendMessage(assistantMsg("answer two"));
  const { rows, leafIndex } = view(session);
  assert.deepEqual(
    rows.map((r) => [r.depth, r.prefix, r.kind, r.text]),
    [
      [0, "", "user", "one"],
      [0, "", "assistant", "answer one"],
      [0, "", "user", "two"],
      [0, "", "assistant", "answer two"],
    ],
  );
  assert.equal(leafIndex, 3);
  assert.equal(rows[3].id, leaf);
  assert.ok(rows.every((r) => r.onPath));
  assert.equal(formatTreeRow(rows[3]), "assistant: answer two ← current");
});

test("only forks indent, with connectors; rows off the current path are marked", () => {
  const session = SessionManager.inMemory("/w");
  session.appendMessage(userMsg("root question"));
  const a1 = session.appendMessage(assistantMsg("first answer"));
  session.appendMessage(userMsg("idea A"));
  session.appendMessage(assistantMsg("A done"));
  session.branch(a1);
  session.appendMessage(userMsg("idea B"));
  session.appendMessage(assistantMsg("B done"));
  assert.deepEqual(plain(session), [
    "user: root question",
    "assistant: first answer",
    "├─ user: idea A",
    "│  assistant: A done",
    "└─ user: idea B",
    "   assistant: B done ← current",
  ]);
  const { rows, leafIndex } = view(session);
  assert.deepEqual(rows.map((r) => r.depth), [0, 0, 1, 1, 1, 1]);
  assert.deepEqual(rows.map((r) => r.onPath), [true, true, false, false, true, true]);
  assert.equal(leafIndex, 5);
});

test("checkout markers and label changes are hidden; a label shows on its entry and a label leaf marks its target", () => {
  const session = SessionManager.inMemory("/w");
  const u1 = session.appendMessage(userMsg("start"));
  const a1 = session.appendMessage(assistantMsg("started"));
  session.checkout(u1); // bookkeeping entry under u1
  session.checkout(a1);
  session.appendLabelChange(a1, "checkpoint");
  assert.ok(session.getEntries().some((e) => e.type === "custom"));
  assert.equal(session.getLeafEntry()?.type, "label");
  const { rows, leafIndex } = view(session);
  assert.deepEqual(rows.map((r) => r.kind), ["user", "assistant"]);
  assert.equal(rows[1].label, "checkpoint");
  assert.equal(leafIndex, 1, "the label entry is the leaf; its target is marked");
  assert.equal(formatTreeRow(rows[1]), "assistant: started [checkpoint] ← current");
});

test("compactions and branch summaries are shown as such, the branch preamble left out", () => {
  const session = SessionManager.inMemory("/w");
  const u1 = session.appendMessage(userMsg("q"));
  const a1 = session.appendMessage(assistantMsg("a"));
  session.appendCompaction("## Goal\nShip it", a1, 1234);
  session.branchWithSummary(u1, `${BRANCH_SUMMARY_PREAMBLE}\n\n## Goal\nTried plan B`);
  const { rows } = view(session);
  const compaction = rows.find((r) => r.summary === "compaction")!;
  const branch = rows.find((r) => r.summary === "branch")!;
  assert.equal(compaction.kind, "compaction");
  assert.match(compaction.text, /^context of 1,234 tokens compacted, keeps from \w+: ## Goal/);
  assert.equal(branch.kind, "branch summary");
  assert.equal(branch.text, "## Goal\nTried plan B");
  assert.equal(formatTreeRow(branch, 200), "└─ branch summary: ## Goal Tried plan B ← current");
});

test("long previews are clipped so the row fits; an empty session has no rows", () => {
  const session = SessionManager.inMemory("/w");
  session.appendMessage(userMsg("word ".repeat(100)));
  const [row] = view(session).rows;
  const line = formatTreeRow(row, 60);
  assert.ok(line.length <= 60, line);
  assert.match(line, /… ← current$/);
  assert.deepEqual(view(SessionManager.inMemory("/w")), { rows: [], leafIndex: -1 });
});

test("paint styles the body, the label and the marker separately", () => {
  const session = SessionManager.inMemory("/w");
  const id = session.appendMessage(userMsg("hi"));
  session.appendLabelChange(id, "L");
  const [row] = view(session).rows;
  const painted = formatTreeRow(row, 80, { body: (t) => `<${t}>`, label: (t) => `{${t}}`, leaf: (t) => `(${t})` });
  assert.equal(painted, "<user: hi>{ [L]}( ← current)");
});

test("answers show their text and their tool calls the way the transcript does", () => {
  const session = SessionManager.inMemory("/w");
  session.appendMessage(userMsg("fix"));
  session.appendMessage({
    ...assistantMsg("Looking."),
    content: [
      { type: "text", text: "Looking." },
      { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.ts" } },
      { type: "toolCall", id: "c2", name: "bash", arguments: { command: "npm test" } },
    ],
    stopReason: "toolUse",
  });
  assert.equal(view(session).rows[1].text, "Looking. → read a.ts → $ npm test");
});

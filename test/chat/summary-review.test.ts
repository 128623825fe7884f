/** `/compact --preview`'s review in the chat's editor, with a stand-in editor: what it resolves with, and what it puts back. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Editor, TUI } from "@mariozechner/pi-tui";
import { REVIEW_NOTE, reviewInEditor } from "../../src/chat/summary-review.js";

function world(draft: string) {
  let text = draft;
  const ownSubmit = (_: string) => {};
  const editor = {
    onSubmit: ownSubmit,
    getExpandedText: () => text,
    setText(next: string) {
      text = next;
    },
  } as unknown as Editor;
  const notes: string[] = [];
  const tui = { requestRender() {}, setFocus() {} } as unknown as TUI;
  const review = reviewInEditor({ tui, editor, note: (blocks) => notes.push(...blocks.map((b) => b.text)) });
  return { editor, notes, review, ownSubmit, text: () => text };
}

test("Enter resolves with the editor's text; the draft and the editor's own submit come back", async () => {
  const w = world("half a message");
  const pending = w.review("## Goal\nShip it.", new AbortController().signal);
  assert.equal(w.text(), "## Goal\nShip it.", "the summary is in the editor");
  assert.deepEqual(w.notes, [REVIEW_NOTE]);
  w.editor.onSubmit?.("## Goal\nShip it, with tests.");
  assert.equal(await pending, "## Goal\nShip it, with tests.");
  assert.equal(w.text(), "half a message");
  assert.equal(w.editor.onSubmit, w.ownSubmit);
});

test("an emptied editor, Escape (the compaction's signal) or a signal already aborted cancel", async () => {
  const empty = world("");
  const cleared = empty.review("summary", new AbortController().signal);
  empty.editor.onSubmit?.("   ");
  assert.equal(await cleared, undefined);

  const escaped = world("draft");
  const controller = new AbortController();
  const pending = escaped.review("summary", controller.signal);
  controller.abort();
  assert.equal(await pending, undefined);
  assert.equal(escaped.text(), "draft");
  assert.equal(escaped.editor.onSubmit, escaped.ownSubmit);

  const late = world("draft");
  assert.equal(await late.review("summary", AbortSignal.abort()), undefined);
  assert.equal(late.text(), "draft", "nothing was shown");
});

/**
 * Previews cut by terminal columns, not by characters (issue 27): a CJK line or an emoji takes two
 * columns a character, so a preview cut by characters overflowed a 100-column terminal.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { TREE_LEGEND } from "../../src/cli/tree-view.js";
import { clip } from "../../src/messages/preview.js";
import { codePointWidth, displayWidth } from "../../src/util/display-width.js";

describe("displayWidth", () => {
  it("counts wide characters twice, combining marks and zero-width characters not at all", () => {
    assert.equal(displayWidth("abc"), 3);
    assert.equal(displayWidth("日本語"), 6);
    assert.equal(displayWidth("한국어"), 6);
    assert.equal(displayWidth("ｆｕｌｌ"), 8);
    assert.equal(displayWidth("🚀✅"), 4);
    assert.equal(displayWidth("e\u0301"), 1, "e and a combining acute");
    assert.equal(displayWidth("a\u200Bb"), 2);
    assert.equal(codePointWidth(0x20000), 2, "CJK extension B");
  });
});

describe("clip", () => {
  it("collapses whitespace and keeps what fits as it was", () => {
    assert.equal(clip("  hello \n\t world  ", 20), "hello world");
    assert.equal(clip("abc", 3), "abc");
  });

  it("cuts to the width, the ellipsis included, on text of any script", () => {
    assert.equal(clip("hello world", 6), "hello…");
    assert.equal(clip("hello world", 7), "hello…", "no space before the ellipsis");
    assert.equal(clip("日本語のテキストです", 7), "日本語…");
    assert.equal(clip("日本語のテキストです", 8), "日本語…", "a wide character that does not fit whole is left out");
    for (const text of ["長い日本語の文章がここに続きます。".repeat(20), "🙂 emoji ".repeat(50), "mixed 中文 text ".repeat(30)]) {
      for (const max of [1, 5, 10, 59, 60, 100]) {
        const preview = clip(text, max);
        assert.ok(displayWidth(preview) <= max, `${JSON.stringify(preview)} fits ${max} columns`);
        assert.ok(preview.endsWith("…"));
      }
    }
  });
});

describe("the tree's legend", () => {
  it("fits an 80-column terminal", () => {
    assert.ok(displayWidth(TREE_LEGEND) <= 80, `${displayWidth(TREE_LEGEND)} columns`);
  });
});

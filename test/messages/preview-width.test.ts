/**
 * Previews cut by terminal columns, not by characters (issue 27): a CJK line or an emoji takes two
 * columns a character, so a preview cut by characters overflowed a 100-column terminal.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { TREE_LEGEND } from "../../src/cli/tree-view.js";
import { clip, clipWalk } from "../../src/messages/preview.js";
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

  it("clips plain words as the walk over every character does, at every width", () => {
    // mostly printable ASCII, with the spaces, runs, tabs, newlines and wide characters that send a text to the walk
    const pieces = ["word", "x", "a-b.c", " ", " ", "  ", "\t", "\n", "~", "日本", "\u007f", "z".repeat(30)];
    let seed = 5;
    const next = () => (seed = (seed * 48271) % 2147483647);
    let plain = 0;
    for (let n = 0; n < 20_000; n++) {
      let text = "";
      for (let k = next() % 14; k >= 0; k--) text += pieces[next() % (next() % 4 === 0 ? pieces.length : 6)];
      const max = next() % 40;
      if (/^[\x21-\x7e][\x20-\x7e]*$/.test(text) && !text.includes("  ")) plain++;
      assert.equal(clip(text, max), clipWalk(text, max), `${JSON.stringify(text)} at ${max}`);
    }
    assert.ok(plain > 2000 && plain < 18_000, `${plain} of 20,000 plain: the cases should go both ways`);
  });

  it("keeps nothing of the text a preview was cut from", () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    // 500 bodies of 200,000 characters: 100 MB (200 with two bytes a character) if the previews held them
    const previews = Array.from({ length: 500 }, (_, i) => {
      const body = `${i} `.padEnd(200_000, "plain words one space apart ");
      return [clip(body.slice(0, 800), 100), clip(body.slice(0, 60), 100)];
    });
    gc();
    const grown = (process.memoryUsage().heapUsed - before) / 1e6;
    assert.equal(previews.length, 500);
    assert.ok(grown < 20, `the heap grew by ${grown.toFixed(1)} MB`);
  });
});

describe("the tree's legend", () => {
  it("fits an 80-column terminal", () => {
    assert.ok(displayWidth(TREE_LEGEND) <= 80, `${displayWidth(TREE_LEGEND)} columns`);
  });
});

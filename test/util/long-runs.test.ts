/** Long runs without whitespace are broken for display, and nothing else changes. */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { breakLongRuns } from "../../src/util/long-runs.js";

describe("breakLongRuns", () => {
  it("leaves text without a long run as it is (the same string)", () => {
    const text = `a normal sentence, ${"word ".repeat(500)}\nand a path /usr/local/lib/node_modules/x`;
    assert.equal(breakLongRuns(text, 40), text);
  });

  it("breaks a run every max characters; the characters are all still there, in order", () => {
    const blob = "ab".repeat(10);
    assert.equal(breakLongRuns(`x ${blob} y`, 8), "x abababab\nabababab\nabab y");
    const long = "q".repeat(100_000);
    const broken = breakLongRuns(`start ${long} end`, 512);
    assert.equal(broken.replace(/\n/g, ""), `start ${long} end`);
    assert.ok(broken.split(/\s/).every((part) => part.length <= 512));
  });

  it("counts a surrogate pair as one character and never splits it; any whitespace ends a run", () => {
    const emoji = "😀".repeat(6);
    const broken = breakLongRuns(emoji, 4);
    assert.equal(broken, `${"😀".repeat(4)}\n${"😀".repeat(2)}`);
    assert.equal(breakLongRuns("abcd\u00a0abcd\u3000abcd\tabcd", 4), "abcd\u00a0abcd\u3000abcd\tabcd");
    // an escape sequence starts after a control character, so a break never lands inside one
    assert.equal(breakLongRuns("\x1b[2mabcdef\x1b[0m", 8), "\x1b[2mabcde\nf\x1b[0m");
  });
});
